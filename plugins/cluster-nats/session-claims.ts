/**
 * Ownership of client sessions across the cluster (kernel/messaging/session-ownership.ts,
 * docs/cluster.md "Sessions"): a claim is a state entry `owner/<clientId>` = {node, claim}
 * written through the stream like every other write. Every node applies the stream in the same
 * order and keeps the owners in that order here, so the last claim applied is the owner on every
 * node; nothing else is decided by the nodes.
 *
 * A session's stored state (`session/<clientId>`) written by a node that does not own the
 * session when the write is applied (it was on its way when another node's claim came first) is
 * passed over, by every node alike: the new owner's state is never overwritten by the former's.
 */
import { randomBytes } from 'node:crypto';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import type { ClientClaim, SessionOwnershipListener, SessionOwnershipPort } from '../../kernel/messaging/session-ownership';

export const OWNER_PREFIX = 'owner/';
/** Keys only the owner of their client id writes: its session and the will of its connection. */
const SESSION_PREFIX = 'session/';
const WILL_PREFIX = 'will/';
/**
 * What a write passed over becomes: the removal of a key nobody writes, so the record keeps its
 * entries' places (the writer's answers and a restart's partial position count them).
 */
const PASSED_OVER: OperationEntry = Object.freeze({ op: 'state.remove', key: 'cluster/passed-over' }) as OperationEntry;

/**
 * A claim as stored. `expect`: it holds only while that node owns the client id (a survivor
 * adopting a dead node's session, an MQ API session moved here); `''`: only while no node owns it
 * (a new MQ API session's name; no node is named '').
 */
export interface StoredClaim {
  node: string;
  claim: string;
  expect?: string;
  /** The account of the session claimed (a CONNECT's), for the listings of sessions (ClientClaim). */
  account?: string;
}

export class SessionClaims implements SessionOwnershipPort {
  private readonly owners = new Map<string, string>();
  /** Client ids this node owns (kept with `owners`). */
  private readonly mine = new Set<string>();
  /** Client ids whose claim by this node is on its way (ownedSettled leaves them out). */
  private readonly claiming = new Map<string, number>();
  private listener: SessionOwnershipListener | null = null;
  /** Owners changed by the record being reviewed: [clientId, node] pairs, told once it is applied. */
  private changed: string[] = [];
  private readonly boot = randomBytes(4).toString('hex');
  private claims = 0;
  /** Set by node-liveness.ts (docs/cluster.md, "Self-fencing"). */
  fenced = false;

  constructor(readonly node: string, private readonly state: LogStatePort) {
    // As this node's store left them at its applied position: the stream goes on from there.
    for (const [key, value] of state.entries(OWNER_PREFIX)) {
      const node = (value as StoredClaim | undefined)?.node;
      if (typeof node === 'string') this.setOwner(key.slice(OWNER_PREFIX.length), node);
    }
  }

  owns(clientId: string): boolean {
    return this.owners.get(clientId) === this.node;
  }

  ownerOf(clientId: string): string | undefined {
    return this.owners.get(clientId);
  }

  /** The nodes that own a session (node-liveness.ts looks at their leases). */
  owningNodes(): Set<string> {
    return new Set(this.owners.values());
  }

  /** The nodes whose leases matter: those that own a session or hold the message core's node-local state. */
  watchedNodes(): Set<string> {
    const nodes = this.owningNodes();
    if (this.listener !== null) for (const node of this.listener.nodesHoldingState()) nodes.add(node);
    return nodes;
  }

  /** A dead node's node-local state goes (this node adopts its sessions): see SessionOwnershipListener.nodeDied. */
  async handOver(node: string): Promise<number> {
    return this.listener === null ? 0 : this.listener.nodeDied(node);
  }

  /** Client ids a node owns (a survivor adopting a dead node's sessions). */
  ownedBy(node: string): string[] {
    const ids: string[] = [];
    for (const [clientId, owner] of this.owners) if (owner === node) ids.push(clientId);
    return ids;
  }

  async claim(clientId: string, expect?: string | null, account?: string): Promise<boolean> {
    const claim: StoredClaim = {
      node: this.node, claim: `${this.node}.${this.boot}.${++this.claims}`,
      ...(expect !== undefined ? { expect: expect ?? '' } : {}), ...(account !== undefined ? { account } : {}),
    };
    this.claiming.set(clientId, (this.claiming.get(clientId) ?? 0) + 1);
    try {
      await this.state.put(OWNER_PREFIX + clientId, claim);
    } finally {
      const left = this.claiming.get(clientId)! - 1;
      if (left === 0) this.claiming.delete(clientId);
      else this.claiming.set(clientId, left);
    }
    return this.owns(clientId);
  }

  *claimed(): Iterable<ClientClaim> {
    // The state holds the claims as applied (one passed over is not stored), like `owners`.
    for (const [key, value] of this.state.entries(OWNER_PREFIX)) {
      const claim = value as StoredClaim | undefined;
      if (typeof claim?.node === 'string') yield clientClaim(key.slice(OWNER_PREFIX.length), claim);
    }
  }

  claimOf(clientId: string): ClientClaim | undefined {
    const claim = this.state.get(OWNER_PREFIX + clientId) as StoredClaim | undefined;
    return typeof claim?.node === 'string' ? clientClaim(clientId, claim) : undefined;
  }

  ownedSettled(): string[] {
    const ids: string[] = [];
    for (const clientId of this.mine) if (!this.claiming.has(clientId)) ids.push(clientId);
    return ids;
  }

  private setOwner(clientId: string, node: string | undefined): void {
    if (node === undefined) this.owners.delete(clientId);
    else this.owners.set(clientId, node);
    if (node === this.node) this.mine.add(clientId);
    else this.mine.delete(clientId);
  }

  release(clientId: string): void {
    if (!this.owns(clientId)) return;
    this.state.remove(OWNER_PREFIX + clientId).catch(() => {
      // Not stored (the stream is unavailable): the claim stays, as if the session went on.
    });
  }

  /** No lease renewal for too long: this node stops serving any session (node-liveness.ts). */
  fence(): void {
    if (this.fenced) return;
    this.fenced = true;
    this.listener?.fenced();
  }

  /** Caught up with the stream and the lease renewed: this node serves what it still owns again. */
  unfence(): void {
    if (!this.fenced) return;
    this.fenced = false;
    this.listener?.unfenced();
  }

  listen(listener: SessionOwnershipListener): void {
    this.listener = listener;
  }

  /**
   * A record's entries as every node applies them (before `applyAt`), from `writer` (the node that
   * wrote it): claims change the owners; writes of a session's state by another node than its
   * owner are passed over. Returns the same array when nothing is passed over.
   */
  review(writer: string | undefined, entries: OperationEntry[]): OperationEntry[] {
    let reviewed = entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (entry.op !== 'state.put' && entry.op !== 'state.remove') continue;
      const key = entry.key;
      let keep = true;
      if (key.startsWith(OWNER_PREFIX)) keep = this.applyClaim(key.slice(OWNER_PREFIX.length), entry, writer);
      else if (key.startsWith(SESSION_PREFIX) || key.startsWith(WILL_PREFIX)) {
        const clientId = key.slice(key.indexOf('/') + 1);
        const owner = this.owners.get(clientId);
        keep = owner === undefined || writer === undefined || owner === writer;
        // This node's own write did not count: a caller waiting for it must not answer as if it had.
        if (!keep && writer === this.node && key.startsWith(SESSION_PREFIX)) this.listener?.passedOver(clientId);
      }
      if (keep) continue;
      if (reviewed === entries) reviewed = entries.slice();
      reviewed[i] = PASSED_OVER;
    }
    return reviewed;
  }

  private applyClaim(clientId: string, entry: OperationEntry & { op: 'state.put' | 'state.remove' }, writer: string | undefined): boolean {
    const owner = this.owners.get(clientId);
    if (entry.op === 'state.remove') {
      // Only the owner lets go of a client id.
      if (owner !== undefined && writer !== undefined && owner !== writer) return false;
      this.setOwner(clientId, undefined);
      return true;
    }
    const claim = entry.value as StoredClaim | undefined;
    if (typeof claim?.node !== 'string') return false;
    if (claim.expect !== undefined && (owner ?? '') !== claim.expect) return false;
    this.setOwner(clientId, claim.node);
    // A claim of the node that owns it already changes nothing.
    if (owner !== claim.node) this.changed.push(clientId, claim.node);
    return true;
  }

  /**
   * The record just reviewed: the message core hears of its claims, in order, once it is applied
   * (a record held back by a trim is applied later: the new owner reads the session as the
   * records before its claim left it, never before).
   */
  reviewed(): (() => void) | undefined {
    if (this.changed.length === 0) return undefined;
    const changed = this.changed;
    this.changed = [];
    return () => {
      const listener = this.listener;
      if (listener === null) return;
      for (let i = 0; i < changed.length; i += 2) {
        if (changed[i + 1] === this.node) listener.gained(changed[i]);
        else listener.lost(changed[i]);
      }
    };
  }
}

function clientClaim(clientId: string, claim: StoredClaim): ClientClaim {
  return typeof claim.account === 'string' ? { clientId, node: claim.node, account: claim.account } : { clientId, node: claim.node };
}
