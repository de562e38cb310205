/**
 * Which node of a cluster owns a client session (docs/cluster.md, "Sessions"). Provided as the
 * service `sessionOwnership` by a cluster plugin (plugins/cluster-nats); absent on a single node,
 * where the one process owns every session.
 *
 * Ownership is decided by the replicated log alone: a claim is an entry, every node applies the
 * entries in the same order, and the last claim applied wins, the same on every node. A session's
 * stored state written by a node that does not own it (a write that was already on its way when
 * another node's claim came first) is passed over by every node alike.
 */
import { EngineError } from '../errors';

export interface SessionOwnershipListener {
  /**
   * Another node claimed the client id (called in log order, while the claim is applied): this
   * node closes its connection (MQTT 5: DISCONNECT 0x8E) and forgets the session without writing
   * it or sending its will; the new owner has its stored state.
   */
  lost(clientId: string): void;
  /**
   * This node's claim was applied: the stored state (`session/<clientId>`) is now what the log
   * left it, every earlier write of the former owner included; the session is read from it.
   */
  gained(clientId: string): void;
  /**
   * A write of this node's of the client id's stored session (`session/<clientId>`) was passed
   * over where the log applied it (another node's claim came first): called while that record is
   * applied, before the write's promise resolves.
   */
  passedOver(clientId: string): void;
  /**
   * Nodes that hold node-local shared state of the message core besides sessions (their members
   * of shared subscription groups): their leases are watched like those of session owners.
   */
  nodesHoldingState(): Iterable<string>;
  /**
   * `node`'s lease has lapsed and this node is the survivor that adopts what it held: the
   * node-local shared state it announced (its shared-group members) is removed through the log.
   * Resolves with how many entries were removed, once they are applied here.
   */
  nodeDied(node: string): Promise<number>;
  /**
   * This node has had no successful lease renewal for long enough that a survivor may soon take
   * it for dead (docs/cluster.md, "Self-fencing"): it lets go of every session it holds without
   * writing it or sending its will, and closes every connection, before any survivor can adopt.
   */
  fenced(): void;
  /** This node reached the stream again, applied it up to its tail and renewed its lease: it loads the sessions it still owns and serves again. */
  unfenced(): void;
  /**
   * The wills held in the client id's claim (SessionOwnershipPort.heldWills) changed, or the word
   * the owner waits for came: a former owner said it let go (its held will is due unless its
   * connection's end had decided it), or `lapsed`, a node whose lease lapsed (the word it owed will
   * not come; told apart on each node, not in log order). Called on every node; the owner sends
   * what is due.
   */
  heldWillsChanged(clientId: string, lapsed?: string): void;
}

/**
 * The will of a connection that another node's CONNECT took over (docs/cluster.md, "Sessions"),
 * kept in the client id's claim until it is decided: sent once, or not at all when the
 * connection's own end had decided it (a DISCONNECT, or the will sent where it ran).
 */
export interface HeldWill {
  /** The claim that took the client id from the connection's node: names this held will. */
  claim: string;
  /** The node that served the connection. */
  from: string;
  /** Until that node's word (or its lease lapsing): only it knows how the connection ended. */
  awaiting?: true;
  /** 'session': the will of a kept session (a resume on the new owner cancels it); 'connection': of a session that is not stored. */
  kind: 'session' | 'connection';
  /** The account and roles the will is published as. */
  account: string;
  roles: string[];
  /** The will as the message core stored it (opaque to the kernel). */
  will: unknown;
}

export interface HeldWills {
  /** The claim the owner holds the client id by. */
  claim: string;
  wills: HeldWill[];
  /** The former owner whose word the owner waits for before it sends any held will (it may be sending some itself). */
  awaits?: string;
}

/** A claim as the listings read it (SessionOwnershipPort.claimed). */
export interface ClientClaim {
  clientId: string;
  /** The node that owns the client id. */
  node: string;
  /** The account of the session it was claimed for; absent for claims made without one (an MQ API name, an adoption). */
  account?: string;
}

export interface SessionOwnershipPort {
  /** This node's name. */
  readonly node: string;
  /** Does this node own the client id now (as far as it has applied the log)? */
  owns(clientId: string): boolean;
  /**
   * Does this node own the client id with no release of it on its way? Only then may a CONNECT or
   * a new MQ API session rely on the claim without claiming again: a release on its way would
   * take the claim away once applied (docs/cluster.md, "Sessions").
   */
  keeps(clientId: string): boolean;
  /**
   * The wills of ended connections held in the client id's claim, and the node whose word the
   * owner waits for before it sends any (undefined: none held, nothing awaited). Replicated state:
   * every node has them alike, and a node that restarts reads them again (docs/cluster.md, "A will
   * held for a former owner's word").
   */
  heldWills(clientId: string): HeldWills | undefined;
  /** Client ids this node owns that hold wills or await a word (the owner settles them at start and in its sweep). */
  withHeldWills(): string[];
  /**
   * The owner sent (or cancelled) these held wills, by their `claim`: written in the same turn as
   * their messages, so one stream record holds both. `lapsed`: the awaited node's lease lapsed, so
   * the wait for its word ends. Resolves once applied here; rejects when not stored.
   */
  decideWills(clientId: string, claims: string[], lapsed?: string): Promise<void>;
  /** Writes again the words this node owes a new owner that the stream has not applied (one could not be stored): called by the sweep. */
  giveOwedWords(): void;
  /** The node that owns the client id (undefined: none claimed it). */
  ownerOf(clientId: string): string | undefined;
  /**
   * Claims the client id for this node. Resolves once the claim is applied here: true when this
   * node still owns it then, false when a later claim of another node came first. Rejects
   * CLUSTER_UNAVAILABLE when the log cannot store the claim. `expect` makes it a compare-and-set
   * decided where the log applies it, the same on every node: it holds only if that node owns the
   * client id then (null: only if no node owns it), else it is passed over (false). Without it the
   * last claim wins (a CONNECT takes the client id over).
   */
  claim(clientId: string, expect?: string | null, account?: string): Promise<boolean>;
  /**
   * Every claim applied here, read from the replicated state: the owning node and, when the claim
   * carries it, the account it was made for (`account` of claim: a CONNECT's). The listings of
   * sessions (listMqSessions) show a session that is not stored (a clean session, held in its
   * owner's memory) from its claim alone.
   */
  claimed(): Iterable<ClientClaim>;
  /** The claim of one client id (undefined: none). */
  claimOf(clientId: string): ClientClaim | undefined;
  /**
   * This node's session of the client id has ended (nothing of it is stored any more): the claim
   * goes, so claims do not pile up. The release names the claim it lets go of and is applied only
   * while this node still holds the client id by that claim, so it never takes away a later claim.
   * Resolves once it is settled (applied, passed over, or not stored); never rejects.
   */
  release(clientId: string): Promise<void>;
  /**
   * Client ids this node owns with no claim of its own on its way (a CONNECT whose claim is being
   * applied is not listed): the message core releases those it holds nothing for (a CONNECT that
   * went away or was refused after its claim, an adopted session that ended at once).
   */
  ownedSettled(): string[];
  /**
   * Fenced (cut off from the stream for too long): no session is served, no CONNECT or MQ API
   * session action accepted. Reading it checks the node's lease first and fences at once when it
   * is no longer held (a node resumed from a pause; docs/cluster.md, "A node paused").
   */
  readonly fenced: boolean;
  /** The message core: told of claims as they are applied. */
  listen(listener: SessionOwnershipListener): void;
}

/** What a fenced node answers (a CONNECT: CONNACK 0x88 / 0x03; an MQ API session action: 12060). */
export function fencedError(): EngineError {
  return new EngineError('CLUSTER_UNAVAILABLE', { reason: 'this node is cut off from the cluster; use another node', outcome: 'was not stored', stored: 'no' });
}

declare module '../services' {
  interface EngineServices {
    /** Cluster-wide ownership of client sessions (provided by a cluster plugin). */
    sessionOwnership: SessionOwnershipPort;
  }
}
