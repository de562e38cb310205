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
 * `let-go/<clientId>`: written by a former owner once it has applied the claim that took the
 * client id from it. Whatever it wrote of that client's session or will before it (and after the
 * claim in the stream) was decided before it let go: a write that clears the will means the
 * connection's end had already decided it (a DISCONNECT, or the will sent). Never stored.
 */
const LET_GO_PREFIX = 'let-go/';
/**
 * `node-epoch/<node>` = {node, epoch}: written by a node each time it begins to serve (at start,
 * and when it unfences), once it holds its lease. An adoption claim names the epoch of the node it
 * adopts from as the adopter knew it before it read that node's key lapsed, and holds only while
 * that epoch is still the node's: a survivor that read the key just before the node came back
 * takes nothing from the node serving again (docs/cluster.md, "A node paused").
 */
const NODE_EPOCH_PREFIX = 'node-epoch/';
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
  /** An adoption: it holds only while `expect`'s epoch (`node-epoch/`) is this one ('' for none). */
  lapsed?: string;
}

/**
 * A release as written: it lets go of the claim it names only (applied as the removal of
 * `owner/<clientId>` while that claim of that node still holds, else passed over), so a release
 * on its way never takes away a later claim, this node's own included.
 */
interface StoredRelease {
  node: string;
  release: string;
}

export class SessionClaims implements SessionOwnershipPort {
  private readonly owners = new Map<string, string>();
  /** The claim id each owner holds its client id by (what a release names). */
  private readonly claimIds = new Map<string, string>();
  /** Client ids whose release by this node is on its way: until it settles, nothing relies on this node's claim. */
  private readonly releasing = new Map<string, Promise<void>>();
  /** Client ids this node owns (kept with `owners`). */
  private readonly mine = new Set<string>();
  /** Client ids whose claim by this node is on its way (ownedSettled leaves them out). */
  private readonly claiming = new Map<string, number>();
  private listener: SessionOwnershipListener | null = null;
  /** Owners changed by the record being reviewed, told once it is applied (`takeover`: a claim with no expectation). */
  private changed: Array<{ clientId: string; node: string; from: string | undefined; takeover: boolean }> = [];
  /**
   * Client ids taken over from a node that has not said yet that it let go (`let-go/`): `cleared`
   * once a write of that node's, made before it let go, cleared the connection's will.
   */
  private readonly awaitingWord = new Map<string, { from: string; cleared: boolean }>();
  /** Words heard in the record being reviewed, told once it is applied: [clientId, cleared]. */
  private heard: Array<[string, boolean]> = [];
  private readonly boot = randomBytes(4).toString('hex');
  private claims = 0;
  /** Each node's epoch (`node-epoch/`), in stream order. */
  private readonly epochs = new Map<string, string>();
  private epochsWritten = 0;
  /** Fenced now (fence(), unfence()); `fenced` checks this node's lease first. */
  private isFenced = false;
  /**
   * Checks this node's lease and fences it at once when the lease is no longer held (set by
   * node-liveness.ts): read with `fenced`, so whatever asks first fences a node resumed from a
   * pause, before it serves anything (docs/cluster.md, "Self-fencing").
   */
  checkLease: () => void = () => undefined;

  constructor(readonly node: string, private readonly state: LogStatePort) {
    // As this node's store left them at its applied position: the stream goes on from there.
    for (const [key, value] of state.entries(OWNER_PREFIX)) {
      const claim = value as StoredClaim | undefined;
      if (typeof claim?.node === 'string') this.setOwner(key.slice(OWNER_PREFIX.length), claim.node, claim.claim);
    }
    for (const [key, value] of state.entries(NODE_EPOCH_PREFIX)) {
      const epoch = (value as { epoch?: unknown } | undefined)?.epoch;
      if (typeof epoch === 'string') this.epochs.set(key.slice(NODE_EPOCH_PREFIX.length), epoch);
    }
  }

  /** `node`'s epoch as applied here ('' when it never wrote one): read before its lease is looked at. */
  epochOf(node: string): string {
    return this.epochs.get(node) ?? '';
  }

  /** This node begins to serve (it holds its lease): a new epoch, resolved once applied here. */
  async beginEpoch(): Promise<void> {
    await this.state.put(NODE_EPOCH_PREFIX + this.node, { node: this.node, epoch: `${this.node}.${this.boot}.${++this.epochsWritten}` });
  }

  /**
   * Adopts a client id from `from`, a node whose lease lapsed while its epoch was `epoch`: holds
   * only while `from` still owns it and has not begun to serve again since (node-liveness.ts).
   */
  adopt(clientId: string, from: string, epoch: string): Promise<boolean> {
    return this.claim(clientId, from, undefined, epoch);
  }

  owns(clientId: string): boolean {
    return this.owners.get(clientId) === this.node;
  }

  keeps(clientId: string): boolean {
    return this.owns(clientId) && !this.releasing.has(clientId);
  }

  ownerOf(clientId: string): string | undefined {
    return this.owners.get(clientId);
  }

  /** The nodes that own a session (node-liveness.ts looks at their leases). */
  owningNodes(): Set<string> {
    return new Set(this.owners.values());
  }

  /** The nodes whose leases matter: those that own a session, hold the message core's node-local state, or owe their word on a will. */
  watchedNodes(): Set<string> {
    const nodes = this.owningNodes();
    if (this.listener !== null) for (const node of this.listener.nodesHoldingState()) nodes.add(node);
    for (const awaiting of this.awaitingWord.values()) nodes.add(awaiting.from);
    return nodes;
  }

  awaitsWord(clientId: string): boolean {
    return this.awaitingWord.has(clientId);
  }

  /** `node`'s lease has lapsed (node-liveness.ts, on every node): the word it owed will not come, its connections ended with it. */
  nodeGone(node: string): void {
    for (const [clientId, awaiting] of [...this.awaitingWord]) {
      if (awaiting.from !== node) continue;
      this.awaitingWord.delete(clientId);
      this.listener?.formerOwnerLetGo(clientId, awaiting.cleared);
    }
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

  async claim(clientId: string, expect?: string | null, account?: string, lapsed?: string): Promise<boolean> {
    const claim: StoredClaim = {
      node: this.node, claim: `${this.node}.${this.boot}.${++this.claims}`,
      ...(expect !== undefined ? { expect: expect ?? '' } : {}), ...(account !== undefined ? { account } : {}),
      ...(lapsed !== undefined ? { lapsed } : {}),
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

  private setOwner(clientId: string, node: string | undefined, claim: string | undefined): void {
    if (node === undefined) {
      this.owners.delete(clientId);
      this.claimIds.delete(clientId);
    } else {
      this.owners.set(clientId, node);
      if (claim === undefined) this.claimIds.delete(clientId);
      else this.claimIds.set(clientId, claim);
    }
    if (node === this.node) this.mine.add(clientId);
    else this.mine.delete(clientId);
  }

  release(clientId: string): Promise<void> {
    const pending = this.releasing.get(clientId);
    if (pending !== undefined) return pending;
    // A claim of this node on its way is what counts then: nothing to let go of.
    if (!this.owns(clientId) || this.claiming.has(clientId)) return Promise.resolve();
    const release: StoredRelease = { node: this.node, release: this.claimIds.get(clientId) ?? '' };
    const released = this.state.put(OWNER_PREFIX + clientId, release).catch(() => {
      // Not stored (the stream is unavailable): the claim stays, as if the session went on.
    }).finally(() => {
      if (this.releasing.get(clientId) === released) this.releasing.delete(clientId);
    });
    this.releasing.set(clientId, released);
    return released;
  }

  /** Set by node-liveness.ts (docs/cluster.md, "Self-fencing"); reading it checks this node's lease first. */
  get fenced(): boolean {
    if (!this.isFenced) this.checkLease();
    return this.isFenced;
  }

  /** No lease renewal for too long: this node stops serving any session (node-liveness.ts). False: it was fenced already. */
  fence(): boolean {
    if (this.isFenced) return false;
    this.isFenced = true;
    this.listener?.fenced();
    return true;
  }

  /** Caught up with the stream and the lease renewed: this node serves what it still owns again. */
  unfence(): void {
    if (!this.isFenced) return;
    this.isFenced = false;
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
      let applied: OperationEntry = entry;
      if (key.startsWith(OWNER_PREFIX)) applied = this.applyClaim(key.slice(OWNER_PREFIX.length), entry, writer);
      else if (key.startsWith(SESSION_PREFIX) || key.startsWith(WILL_PREFIX)) {
        const clientId = key.slice(key.indexOf('/') + 1);
        const owner = this.owners.get(clientId);
        if (owner !== undefined && writer !== undefined && owner !== writer) {
          applied = PASSED_OVER;
          // This node's own write did not count: a caller waiting for it must not answer as if it had.
          if (writer === this.node && key.startsWith(SESSION_PREFIX)) this.listener?.passedOver(clientId);
          // The former owner decided the will before it let go (the new owner holds the will until its word).
          const awaiting = this.awaitingWord.get(clientId);
          if (awaiting?.from === writer && clearsWill(entry)) awaiting.cleared = true;
        }
      } else if (key.startsWith(NODE_EPOCH_PREFIX)) {
        // Only the node itself begins its epochs.
        const node = key.slice(NODE_EPOCH_PREFIX.length);
        const epoch = entry.op === 'state.put' ? (entry.value as { epoch?: unknown } | undefined)?.epoch : undefined;
        if (typeof epoch === 'string' && (writer === undefined || writer === node)) this.epochs.set(node, epoch);
        else applied = PASSED_OVER;
      } else if (key.startsWith(LET_GO_PREFIX)) {
        const clientId = key.slice(LET_GO_PREFIX.length);
        const awaiting = this.awaitingWord.get(clientId);
        if (awaiting !== undefined && awaiting.from === writer) {
          this.awaitingWord.delete(clientId);
          this.heard.push([clientId, awaiting.cleared]);
        }
        applied = PASSED_OVER;
      }
      if (applied === entry) continue;
      if (reviewed === entries) reviewed = entries.slice();
      reviewed[i] = applied;
    }
    return reviewed;
  }

  /** A claim or a release as every node applies it: the entry itself, the removal a release becomes, or PASSED_OVER. */
  private applyClaim(clientId: string, entry: OperationEntry & { op: 'state.put' | 'state.remove' }, writer: string | undefined): OperationEntry {
    const owner = this.owners.get(clientId);
    if (entry.op === 'state.remove') {
      // Only the owner lets go of a client id (a release written before releases named their claim).
      if (owner !== undefined && writer !== undefined && owner !== writer) return PASSED_OVER;
      this.setOwner(clientId, undefined, undefined);
      return entry;
    }
    const value = entry.value as Partial<StoredClaim & StoredRelease> | undefined;
    if (typeof value?.node !== 'string') return PASSED_OVER;
    if (typeof value.release === 'string') {
      // Only the claim it names, while its node still holds it by that claim: a later claim stays.
      if (owner !== value.node || (writer !== undefined && writer !== owner) || this.claimIds.get(clientId) !== value.release) return PASSED_OVER;
      this.setOwner(clientId, undefined, undefined);
      return { op: 'state.remove', key: entry.key };
    }
    if (value.expect !== undefined && (owner ?? '') !== value.expect) return PASSED_OVER;
    // An adoption decided before the node it adopts from began to serve again.
    if (typeof value.lapsed === 'string' && this.epochOf(value.expect ?? '') !== value.lapsed) return PASSED_OVER;
    this.setOwner(clientId, value.node, value.claim);
    // A claim of the node that owns it already changes nothing.
    if (owner === value.node) return entry;
    const takeover = value.expect === undefined;
    // A CONNECT took the client id from a live node: that node alone knows how its connection
    // ended (a DISCONNECT read just before it let go), so the will waits for its word.
    if (takeover && owner !== undefined) this.awaitingWord.set(clientId, { from: owner, cleared: false });
    else this.awaitingWord.delete(clientId);
    this.changed.push({ clientId, node: value.node, from: owner, takeover });
    return entry;
  }

  /**
   * The record just reviewed: the message core hears of its claims, in order, once it is applied
   * (a record held back by a trim is applied later: the new owner reads the session as the
   * records before its claim left it, never before).
   */
  reviewed(): (() => void) | undefined {
    if (this.changed.length === 0 && this.heard.length === 0) return undefined;
    const changed = this.changed;
    const heard = this.heard;
    this.changed = [];
    this.heard = [];
    return () => {
      const listener = this.listener;
      if (listener === null) return;
      for (const { clientId, node, from, takeover } of changed) {
        if (node === this.node) {
          listener.gained(clientId);
          continue;
        }
        listener.lost(clientId);
        // The new owner waits for this word before it decides the will of the connection served
        // here: written after everything this node wrote of that connection (once it is applied).
        if (takeover && from === this.node) this.state.put(LET_GO_PREFIX + clientId, { node: this.node }).catch(() => undefined);
      }
      for (const [clientId, cleared] of heard) listener.formerOwnerLetGo(clientId, cleared);
    };
  }
}

function clientClaim(clientId: string, claim: StoredClaim): ClientClaim {
  return typeof claim.account === 'string' ? { clientId, node: claim.node, account: claim.account } : { clientId, node: claim.node };
}

/** A write of a session's state or will that leaves no will: its removal, or a session stored without one. */
function clearsWill(entry: OperationEntry & { op: 'state.put' | 'state.remove' }): boolean {
  if (entry.op === 'state.remove') return true;
  return entry.key.startsWith(SESSION_PREFIX) && (entry.value as { will?: unknown } | undefined)?.will == null;
}
