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
import type { ClientClaim, HeldWill, HeldWills, SessionOwnershipListener, SessionOwnershipPort } from '../../kernel/messaging/session-ownership';

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
  /**
   * Set by every node as it applies the claim and what follows it, never by the writer: the wills
   * of ended connections held until they are decided, and the former owner whose word the owner
   * waits for (a claim taking the client id from a live node). A claim is rewritten in place with
   * them (held/awaits go from claim to claim of the client id), so they are replicated state.
   */
  held?: HeldWill[];
  awaits?: string;
  /** An adoption: it holds only while `expect`'s epoch (`node-epoch/`) is this one ('' for none). */
  lapsed?: string;
}

/** The owner's word that it sent (or cancelled) held wills: `owner/<clientId>` = this, applied as the claim without them. */
interface StoredDecision {
  node: string;
  decide: string[];
  /** The awaited node whose lease lapsed: the wait for its word ends. */
  lapsed?: string;
}

/**
 * The will of the connection a client id has on its owner now, as the records applied so far left
 * it (a takeover holds it): the written value (`will/<clientId>`, or `session/<clientId>` with its
 * will), read only when a takeover holds it, so a session's writes cost a look at `will` and no more.
 */
interface LiveWill {
  node: string;
  kind: HeldWill['kind'];
  value: unknown;
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
  /** The claims as applied, of the client ids that hold wills or await a word (the others' are just their owner). */
  private readonly withHeld = new Map<string, StoredClaim>();
  /** Each client id's connection will on its owner, kept in stream order from `will/` and `session/` writes. */
  private readonly liveWills = new Map<string, LiveWill>();
  /** Client ids whose held wills changed in the record being reviewed (told once it is applied). */
  private heldChanged: string[] = [];
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
      if (typeof claim?.node !== 'string') continue;
      const clientId = key.slice(OWNER_PREFIX.length);
      this.setOwner(clientId, claim.node, claim.claim);
      if (claim.held !== undefined || claim.awaits !== undefined) this.withHeld.set(clientId, claim);
    }
    for (const [key, value] of state.entries(WILL_PREFIX)) {
      const clientId = key.slice(WILL_PREFIX.length);
      const node = (value as { node?: unknown } | undefined)?.node;
      this.noteWill(clientId, typeof node === 'string' ? node : this.owners.get(clientId), { op: 'state.put', key, value });
    }
    for (const [key, value] of state.entries(SESSION_PREFIX)) {
      const clientId = key.slice(SESSION_PREFIX.length);
      this.noteWill(clientId, this.owners.get(clientId), { op: 'state.put', key, value });
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
    for (const claim of this.withHeld.values()) {
      if (claim.awaits !== undefined) nodes.add(claim.awaits);
      for (const will of claim.held ?? []) if (will.awaiting) nodes.add(will.from);
    }
    return nodes;
  }

  heldWills(clientId: string): HeldWills | undefined {
    const claim = this.withHeld.get(clientId);
    if (claim === undefined) return undefined;
    return { claim: claim.claim, wills: claim.held ?? [], ...(claim.awaits !== undefined ? { awaits: claim.awaits } : {}) };
  }

  withHeldWills(): string[] {
    const ids: string[] = [];
    for (const clientId of this.withHeld.keys()) if (this.owns(clientId)) ids.push(clientId);
    return ids;
  }

  async decideWills(clientId: string, claims: string[], lapsed?: string): Promise<void> {
    const decision: StoredDecision = { node: this.node, decide: claims, ...(lapsed !== undefined ? { lapsed } : {}) };
    await this.state.put(OWNER_PREFIX + clientId, decision);
  }

  /** `node`'s lease has lapsed (node-liveness.ts, on every node): the word it owed will not come, its connections ended with it. */
  nodeGone(node: string): void {
    for (const [clientId, claim] of [...this.withHeld]) {
      if (claim.awaits === node || claim.held?.some((will) => will.awaiting && will.from === node)) this.listener?.heldWillsChanged(clientId, node);
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
    this.giveOwedWords();
  }

  /**
   * Words this node owes and the stream has not applied: it stopped (or crashed) before it applied
   * the claims that took those client ids from it, and caught up without a listener, or its word
   * could not be stored. By now it has applied those claims, so its connections there are closed
   * and everything it wrote of them is in the stream before this word (a second word is passed over).
   */
  giveOwedWords(): void {
    for (const [clientId, claim] of this.withHeld) {
      const owed = claim.awaits === this.node || claim.held?.some((will) => will.awaiting && will.from === this.node);
      if (owed && claim.node !== this.node) this.state.put(LET_GO_PREFIX + clientId, { node: this.node }).catch(() => undefined);
    }
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
          // A node whose connection's will is held decided it before it let go (a DISCONNECT, or
          // the will sent there): that held will goes, in this entry's place.
          if (clearsWill(entry)) applied = this.rewriteHeld(clientId, (held) => held.filter((will) => !(will.awaiting && will.from === writer))) ?? PASSED_OVER;
        } else {
          this.noteWill(clientId, writer ?? owner, entry);
        }
      } else if (key.startsWith(NODE_EPOCH_PREFIX)) {
        // Only the node itself begins its epochs.
        const node = key.slice(NODE_EPOCH_PREFIX.length);
        const epoch = entry.op === 'state.put' ? (entry.value as { epoch?: unknown } | undefined)?.epoch : undefined;
        if (typeof epoch === 'string' && (writer === undefined || writer === node)) this.epochs.set(node, epoch);
        else applied = PASSED_OVER;
      } else if (key.startsWith(LET_GO_PREFIX)) {
        // The word of a node that let go: its held wills are due, and the owner waits for it no more.
        const clientId = key.slice(LET_GO_PREFIX.length);
        applied = (writer === undefined ? undefined : this.rewriteHeld(clientId, (held) => held.map((will) => will.awaiting && will.from === writer ? withoutAwaiting(will) : will), writer)) ?? PASSED_OVER;
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
      this.withHeld.delete(clientId);
      return entry;
    }
    const value = entry.value as Partial<StoredClaim & StoredRelease & StoredDecision> | undefined;
    if (typeof value?.node !== 'string') return PASSED_OVER;
    if (typeof value.release === 'string') {
      // Only the claim it names, while its node still holds it by that claim: a later claim stays.
      if (owner !== value.node || (writer !== undefined && writer !== owner) || this.claimIds.get(clientId) !== value.release) return PASSED_OVER;
      // Wills held in the claim keep it (and their owner) until they are decided; the sweep releases it then.
      if (this.withHeld.has(clientId)) return PASSED_OVER;
      this.setOwner(clientId, undefined, undefined);
      return { op: 'state.remove', key: entry.key };
    }
    if (Array.isArray(value.decide)) return this.applyDecision(clientId, value as StoredDecision, writer);
    if (typeof value.claim !== 'string') return PASSED_OVER;
    if (value.expect !== undefined && (owner ?? '') !== value.expect) return PASSED_OVER;
    // An adoption decided before the node it adopts from began to serve again.
    if (typeof value.lapsed === 'string' && this.epochOf(value.expect ?? '') !== value.lapsed) return PASSED_OVER;
    const before = this.withHeld.get(clientId);
    let held = before?.held ?? [];
    let awaits = before?.awaits;
    const takeover = value.expect === undefined;
    if (owner !== value.node) {
      awaits = undefined;
      // A CONNECT took the client id from a live node: that node alone knows how its connection
      // ended (a DISCONNECT read just before it let go), so its connection's will is held in the
      // claim until its word, and the new owner sends nothing held before that word either (the
      // former owner may be sending some). An adoption (its owner is dead) waits for nobody.
      if (takeover && owner !== undefined) {
        awaits = owner;
        const live = this.liveWills.get(clientId);
        if (live !== undefined && live.node === owner) {
          held = [...held, heldWill(live, value.claim)];
          this.liveWills.delete(clientId);
        }
      }
    }
    const claim: StoredClaim = {
      node: value.node, claim: value.claim,
      ...(value.expect !== undefined ? { expect: value.expect } : {}), ...(value.account !== undefined ? { account: value.account } : {}),
      ...(held.length > 0 ? { held } : {}), ...(awaits !== undefined ? { awaits } : {}),
    };
    this.setOwner(clientId, value.node, value.claim);
    this.keepHeld(clientId, claim);
    const applied: OperationEntry = claim.held === undefined && claim.awaits === undefined ? entry : { op: 'state.put', key: entry.key, value: claim };
    // A claim of the node that owns it already changes nothing.
    if (owner === value.node) return applied;
    this.changed.push({ clientId, node: value.node, from: owner, takeover });
    return applied;
  }

  /**
   * The owner sent (or cancelled) held wills, or a node awaited for its word decided them before
   * it let go (it was their owner, sending them, when another node's claim came first): they
   * leave the claim. Any other node's decision is passed over.
   */
  private applyDecision(clientId: string, decision: StoredDecision, writer: string | undefined): OperationEntry {
    const claim = this.withHeld.get(clientId);
    if (claim === undefined || (writer !== undefined && writer !== decision.node)) return PASSED_OVER;
    const isOwner = claim.node === decision.node;
    if (!isOwner && claim.awaits !== decision.node) return PASSED_OVER;
    const decided = new Set(decision.decide);
    const endsWait = isOwner && decision.lapsed !== undefined && claim.awaits === decision.lapsed ? decision.lapsed : undefined;
    return this.rewriteHeld(clientId, (held) => held.filter((will) => !decided.has(will.claim)), endsWait) ?? PASSED_OVER;
  }

  /**
   * The client id's claim with its held wills changed by `change` (and the wait for `heard`'s word
   * ended): the entry to apply in place of the one that changed them, or undefined when nothing
   * changed (no claim, or the same wills).
   */
  private rewriteHeld(clientId: string, change: (held: HeldWill[]) => HeldWill[], heard?: string): OperationEntry | undefined {
    const claim = this.withHeld.get(clientId);
    if (claim === undefined) return undefined;
    const before = claim.held ?? [];
    const held = change(before);
    const endsWait = heard !== undefined && claim.awaits === heard;
    if (!endsWait && held.length === before.length && held.every((will, i) => will === before[i])) return undefined;
    const { held: _held, awaits, ...rest } = claim;
    const next: StoredClaim = { ...rest, ...(held.length > 0 ? { held } : {}), ...(awaits !== undefined && !endsWait ? { awaits } : {}) };
    this.keepHeld(clientId, next);
    this.heldChanged.push(clientId);
    return { op: 'state.put', key: OWNER_PREFIX + clientId, value: next };
  }

  private keepHeld(clientId: string, claim: StoredClaim): void {
    if (claim.held !== undefined || claim.awaits !== undefined) this.withHeld.set(clientId, claim);
    else this.withHeld.delete(clientId);
  }

  /** An applied write of `will/<clientId>` or `session/<clientId>` by `node`: the will of the client id's connection there now. */
  private noteWill(clientId: string, node: string | undefined, entry: OperationEntry & { op: 'state.put' | 'state.remove' }): void {
    const isSession = entry.key.startsWith(SESSION_PREFIX);
    if (entry.op === 'state.remove') {
      if (this.liveWills.get(clientId)?.kind === (isSession ? 'session' : 'connection')) this.liveWills.delete(clientId);
      return;
    }
    if (node === undefined) return;
    const will = (entry.value as { will?: unknown } | undefined)?.will;
    if (will == null) {
      if (isSession && this.liveWills.get(clientId)?.kind === 'session') this.liveWills.delete(clientId);
      return;
    }
    this.liveWills.set(clientId, { node, kind: isSession ? 'session' : 'connection', value: entry.value });
  }

  /**
   * The record just reviewed: the message core hears of its claims, in order, once it is applied
   * (a record held back by a trim is applied later: the new owner reads the session as the
   * records before its claim left it, never before).
   */
  reviewed(): (() => void) | undefined {
    if (this.changed.length === 0 && this.heldChanged.length === 0) return undefined;
    const changed = this.changed;
    const heldChanged = this.heldChanged;
    this.changed = [];
    this.heldChanged = [];
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
      for (const clientId of heldChanged) listener.heldWillsChanged(clientId);
    };
  }
}

function clientClaim(clientId: string, claim: StoredClaim): ClientClaim {
  return typeof claim.account === 'string' ? { clientId, node: claim.node, account: claim.account } : { clientId, node: claim.node };
}

/** A connection's will as a takeover holds it: the will without its due time, and the account and roles it is published as. */
function heldWill(live: LiveWill, claim: string): HeldWill {
  const value = live.value as { owner?: unknown; account?: unknown; roles?: unknown; will: Record<string, unknown> };
  const { dueAt: _dueAt, ...will } = value.will;
  // A stored session names its owner and, after a takeover by another account, its last connection's account.
  const account = typeof value.account === 'string' ? value.account : String(value.owner ?? '');
  return { claim, from: live.node, awaiting: true, kind: live.kind, account, roles: Array.isArray(value.roles) ? value.roles as string[] : [], will };
}

function withoutAwaiting(will: HeldWill): HeldWill {
  const { awaiting: _awaiting, ...decided } = will;
  return decided;
}

/** A write of a session's state or will that leaves no will: its removal, or a session stored without one. */
function clearsWill(entry: OperationEntry & { op: 'state.put' | 'state.remove' }): boolean {
  if (entry.op === 'state.remove') return true;
  return entry.key.startsWith(SESSION_PREFIX) && (entry.value as { will?: unknown } | undefined)?.will == null;
}
