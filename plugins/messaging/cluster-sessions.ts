/**
 * The message core's side of session ownership in a cluster (kernel/messaging/session-ownership.ts,
 * docs/cluster.md "Sessions"): this node holds in memory only the sessions it owns (and those no
 * node ever claimed), so only the owner sends a session's messages, sweeps its expiry and sends
 * its will. A CONNECT for a client id another node owns claims it first; the claim, applied in
 * log order on every node, closes the former owner's connection (0x8E) and loads the session
 * here from its stored state, in-flight messages and QoS 2 receipts included.
 *
 * A session that is not stored (expiry 0) has its will stored apart, as `will/<clientId>`, while
 * its connection lasts: a node that takes the client id over, or adopts the sessions of a dead
 * node, finds it there and sends it, as the ended connection's will.
 *
 * A connection a CONNECT took over from a live node has its will held in the client id's claim
 * (SessionOwnershipPort.heldWills, replicated state) until that node's word; the owner sends what
 * is due with a decision that takes it out of the claim, in one stream record (settle()).
 */
import { fencedError, type HeldWill, type SessionOwnershipListener, type SessionOwnershipPort } from '../../kernel/messaging/session-ownership';
import type { Principal } from '../../kernel/auth/principal';
import type { MessageCore } from './message-core';
import type { CoreMessage } from './message';
import { Session, type SessionOutlet, type StoredWill } from './session';
import { EngineError } from '../../kernel/errors';
import { logStoreFailure } from './store-failure-log';

const WILL_PREFIX = 'will/';
/** The claims this node holds nothing for are looked for every this many sweeps (10 s). */
const CLAIM_SWEEP_EVERY = 10;

/** `will/<clientId>`: the will of a connection whose session is not stored. */
interface StoredConnectionWill {
  account: string;
  roles: string[];
  will: Omit<StoredWill, 'dueAt'>;
  /** The node that served the connection (a node reading its state at start tells a former owner's will from its own). */
  node?: string;
}

export class ClusterSessions implements SessionOwnershipListener {
  /** Client ids whose `will/<clientId>` this node wrote and has not removed. */
  private readonly storedWills = new Set<string>();
  /** Sweeps so far (the claims are looked over every CLAIM_SWEEP_EVERY-th). */
  private sweeps = 0;
  /** MQ API calls waiting for their session's write (storeChange): passed over yet? */
  private readonly awaitingWrite = new Map<string, Array<{ passedOver: boolean }>>();
  /**
   * Held wills (SessionOwnershipPort.heldWills: kept in the client id's claim, in the replicated
   * state) this node is sending or cancelling, by the claim that names each, until that decision
   * is applied: not sent twice meanwhile.
   */
  private readonly deciding = new Set<string>();
  /** The session each client id's claim loaded here, while it is held: still the same and online, a CONNECT resumed it. */
  private readonly loadedByClaim = new Map<string, Session>();

  constructor(private readonly core: MessageCore, readonly ownership: SessionOwnershipPort) {
    ownership.listen(this);
  }

  /** Loaded at start: the sessions this node owns, and those no node claimed (written before ownership). */
  holds(clientId: string): boolean {
    const owner = this.ownership.ownerOf(clientId);
    return owner === undefined || owner === this.ownership.node;
  }

  /** At start, after the sessions are loaded: the stored wills of this node's connections that ended with the process are sent. */
  loaded(): void {
    const core = this.core;
    for (const [key, value] of core.messageLog.state.entries(WILL_PREFIX)) {
      const clientId = key.slice(WILL_PREFIX.length);
      if (!this.ownership.owns(clientId) || core.sessions.has(clientId)) continue;
      if (this.isHeldElsewhere(clientId, value as StoredConnectionWill)) {
        // A former owner's will, held in the claim: its removal was on its way when this node stopped.
        this.storedWills.add(clientId);
        this.removeWill(clientId);
      } else {
        this.sendStoredWill(clientId);
      }
    }
    // A kept session taken over from another node whose will was held in the claim: a stop before
    // the session was stored without it leaves the will in both; the claim's decides it.
    for (const clientId of this.ownership.withHeldWills()) {
      const session = core.sessions.get(clientId);
      const held = this.ownership.heldWills(clientId);
      const heldHere = held?.wills.find((will) => will.claim === held.claim && will.kind === 'session');
      if (session?.will === undefined || heldHere === undefined || !sameWill(session.will.message, heldHere.will as StoredConnectionWill['will'])) continue;
      session.will = undefined;
      session.willDueAt = undefined;
      core.state.markDirty(session);
    }
    // Wills held for a word that came while this node was down (or fenced) are due now.
    for (const clientId of this.ownership.withHeldWills()) this.settle(clientId);
  }

  /**
   * An MQ API action on a session this node does not hold (docs/cluster.md, "MQ API sessions"):
   * an MQ API session another node owns is claimed here, like an MQTT session resumed here, and
   * is loaded from its stored state once the claim is applied; an MQTT session another node owns
   * stays with its connection, and the answer is NODE_BOUND naming that node. Nothing happens
   * when no node holds the name, or when the caller may not use the stored session (`mayUse`):
   * the action then answers "not found" as on one node.
   */
  async bringHere(clientName: string, mayUse: (session: Session) => boolean): Promise<void> {
    // A fenced node holds no session (fenced()): it answers 12060, not "not found".
    if (this.ownership.fenced) throw fencedError();
    const owner = this.ownership.ownerOf(clientName);
    if (owner === undefined || owner === this.ownership.node) return;
    const stored = this.core.state.storedSession(clientName);
    if (stored === undefined || !mayUse(Session.fromStored(stored))) return;
    const here = this.ownership.node;
    if (stored.kind !== 'mqApi') throw new EngineError('NODE_BOUND', { what: 'MQTT session', node: owner, here });
    // Only while `owner` still has it: of two nodes moving it at once one wins, the other answers
    // NODE_BOUND (each would otherwise load it and read the same messages).
    if (!(await this.ownership.claim(clientName, owner))) {
      const now = this.ownership.ownerOf(clientName);
      // Its owner ended it (and let go of the name) before the claim: "not found", as on one node.
      if (now === undefined) return;
      throw new EngineError('NODE_BOUND', { what: 'MQ API session', node: now, here });
    }
    // Deleted between the look at its stored state and the claim: nothing was loaded, so the claim
    // goes before the answer (a creation of the name on any node then finds it free).
    if (!this.core.sessions.has(clientName)) await this.ownership.release(clientName);
  }

  /**
   * A new MQ API session's name is claimed for this node before the session is made, so that one
   * client name has one session in the whole cluster: a name another node owns (a session or a
   * connection there) is CLIENT_NAME_IN_USE, as a claim overtaken by another node's is.
   */
  async claimName(clientName: string): Promise<void> {
    if (this.ownership.fenced) throw fencedError();
    // A release of the name on its way would take the claim away: it settles first.
    if (this.ownership.owns(clientName) && !this.ownership.keeps(clientName)) await this.ownership.release(clientName);
    const owner = this.ownership.ownerOf(clientName);
    if (owner === this.ownership.node) return;
    // Only while no node owns it: of two nodes creating it at once one wins (the last claim
    // would otherwise win there, after the first node had answered success too).
    if (owner !== undefined || !(await this.ownership.claim(clientName, null))) throw new EngineError('CLIENT_NAME_IN_USE', { clientName });
  }

  /**
   * Resolves once the change an MQ API call made to `session` is stored, so the next call on any
   * node loads it with that change. Rejects NODE_BOUND naming the new owner when the change did
   * not count: another node's claim was applied before it (its write was passed over, or never
   * made because the session left this node first), so that node serves the session from its
   * state before this change, and the caller must not be answered as if it had been made (a read
   * would hand out messages the other node hands out again).
   */
  storeChange(session: Session): Promise<void> {
    return this.counted(session.clientId, () => this.core.state.whenStored(session));
  }

  /** Resolves once the MQ API session's removal (deleteMqSession) is stored and counted; rejects NODE_BOUND as storeChange. */
  storeRemoval(clientId: string, removed: Promise<void>): Promise<void> {
    return this.counted(clientId, () => removed.then(() => true));
  }

  /** `write` (true: made and stored) counted where the log applied it, or NODE_BOUND naming the node whose claim came first. */
  private async counted(clientId: string, write: () => Promise<boolean>): Promise<void> {
    const waiting = { passedOver: false };
    let list = this.awaitingWrite.get(clientId);
    if (list === undefined) this.awaitingWrite.set(clientId, list = []);
    list.push(waiting);
    let written: boolean;
    try {
      written = await write();
    } finally {
      list.splice(list.indexOf(waiting), 1);
      if (list.length === 0 && this.awaitingWrite.get(clientId) === list) this.awaitingWrite.delete(clientId);
    }
    const owner = this.ownership.ownerOf(clientId);
    const here = this.ownership.node;
    if (waiting.passedOver || (!written && owner !== undefined && owner !== here)) {
      throw new EngineError('NODE_BOUND', { what: 'MQ API session', node: owner ?? 'another node', here });
    }
    // Not written because this node fenced itself meanwhile (it let the session go): not stored.
    if (!written && this.ownership.fenced) throw fencedError();
  }

  passedOver(clientId: string): void {
    const list = this.awaitingWrite.get(clientId);
    if (list !== undefined) for (const waiting of list) waiting.passedOver = true;
  }

  /**
   * From the message core's sweep: a claim of this node that holds nothing here (no session, no
   * connection, no claim of this node on its way) is released, so claims do not pile up. That
   * happens when a CONNECT went away or was refused after its claim, when a refused or
   * abandoned CONNECT's claim was stored although it reported failure, when a release could not
   * be stored (quorum lost), and when an adopted session of a dead node ended at once (a clean
   * session: its will sent).
   */
  sweep(): void {
    // Held wills whose decision could not be stored (the stream was unavailable) are tried again.
    if (!this.ownership.fenced) for (const clientId of this.ownership.withHeldWills()) this.settle(clientId);
    if (++this.sweeps % CLAIM_SWEEP_EVERY !== 0) return;
    // Fenced, this node holds no session on purpose: its claims stay until it serves again (or a
    // survivor adopts them); a release queued now would be sent when the stream is reached again.
    if (this.ownership.fenced) return;
    this.ownership.giveOwedWords();
    const released: string[] = [];
    for (const clientId of this.ownership.ownedSettled()) {
      // (A release already on its way is not sent again.)
      if (!this.holdsNothingFor(clientId) || !this.ownership.keeps(clientId)) continue;
      void this.ownership.release(clientId);
      released.push(clientId);
    }
    if (released.length > 0) this.core.log.info({ count: released.length, clientIds: released.slice(0, 20) }, 'cluster: released the claims of client ids this node holds nothing for');
  }

  /** No session, no connection and no held will of the client id here. */
  private holdsNothingFor(clientId: string): boolean {
    return !this.core.sessions.has(clientId) && this.core.engine.clientConnections.holder(clientId) === undefined
      && this.ownership.heldWills(clientId) === undefined;
  }

  /**
   * A CONNECT's claim, when the client id is not this node's yet, or when a release of it is on
   * its way (the session of the client id just ended here): that release names the claim it lets
   * go of, so the new claim stays whichever is applied first (undefined: nothing to wait for).
   * `account` is kept in it for the listings.
   */
  claim(clientId: string, account?: string): Promise<boolean> | undefined {
    return this.ownership.keeps(clientId) ? undefined : this.ownership.claim(clientId, undefined, account);
  }

  /**
   * A session opened here that is not stored: the other nodes list it from its claim alone
   * (session-listing.ts), so the claim names the session's account. When this node owned the
   * client id already, for another account's session, it is claimed again, only while this node
   * still owns it (nothing changes hands).
   */
  opened(session: Session, present: boolean): void {
    if (present) this.resumed(session);
    if (session.persistent || session.kind !== 'mqtt') return;
    const claim = this.ownership.claimOf(session.clientId);
    if (claim === undefined || claim.node !== this.ownership.node || claim.account === session.owner) return;
    this.ownership.claim(session.clientId, this.ownership.node, session.owner).catch(() => {
      // Not stored (the stream cannot take writes now): the listings show the claim's account until the next CONNECT.
    });
  }

  lost(clientId: string): void {
    this.loadedByClaim.delete(clientId);
    const core = this.core;
    const session = core.sessions.get(clientId);
    if (session !== undefined) core.lifecycle.forget(session);
    // Its connection here goes (MQTT 5 hears 0x8E); the session was let go of first, so closing
    // the connection neither writes it nor sends its will.
    core.engine.clientConnections.holder(clientId)?.takeOver();
  }

  gained(clientId: string): void {
    const core = this.core;
    const stale = core.sessions.get(clientId);
    if (stale !== undefined) core.lifecycle.forget(stale);
    this.loadedByClaim.delete(clientId);
    const session = core.state.loadSession(clientId, core.engine.clock.now());
    // Taken from a live node by a CONNECT: every node applying the claim held that connection's
    // will in it (session-claims.ts), to be decided on that node's word (settle()).
    const held = this.ownership.heldWills(clientId);
    const heldHere = held?.wills.find((will) => will.claim === held.claim);
    if (session !== undefined) {
      if (heldHere?.kind === 'session' && session.will !== undefined) {
        // Stored without it: the claim holds it now (a restart must not find it in the session too).
        session.will = undefined;
        session.willDueAt = undefined;
        if (session.persistent) core.state.markDirty(session);
      }
      if (held !== undefined) this.loadedByClaim.set(clientId, session);
      core.lifecycle.loaded([session]);
    } else if (core.messageLog.state.get(WILL_PREFIX + clientId) !== undefined) {
      const stored = core.messageLog.state.get(WILL_PREFIX + clientId) as StoredConnectionWill;
      if (held?.awaits === undefined && !this.isHeldElsewhere(clientId, stored)) {
        // The connection it had elsewhere has ended (its node died, or it let go before): its will is due.
        this.sendStoredWill(clientId);
      } else {
        // Held in the claim (or a will of an earlier connection): removed, so the new connection
        // here may store a will of its own under that key.
        this.storedWills.add(clientId);
        this.removeWill(clientId);
      }
    }
    this.settle(clientId);
  }

  /**
   * A CONNECT here resumed the kept session its claim took over: the will of the connection it
   * took it from is cancelled when it has a delay [MQTT-3.1.3-9], as on one node, whatever that
   * node's word says; the decision is stored now, so a restart of this node does not send it. A
   * will without a delay is not cancelled: one node publishes it at the takeover, resume or not
   * (MQTT 5 §3.1.4), so it waits for the word like any held will.
   */
  private resumed(session: Session): void {
    const clientId = session.clientId;
    const held = this.ownership.heldWills(clientId);
    if (held === undefined || this.loadedByClaim.get(clientId) !== session) return;
    const cancelled = held.wills.filter((will) => will.kind === 'session' && will.claim === held.claim && !this.deciding.has(will.claim) && hasDelay(will))
      .map((will) => will.claim);
    if (cancelled.length === 0) return;
    for (const claim of cancelled) this.deciding.add(claim);
    this.ownership.decideWills(clientId, cancelled).catch((error: unknown) => {
      // Not stored: settle() cancels it when it is due, while this connection lasts.
      logStoreFailure(this.core.log, error, { clientId }, 'a resumed session\'s held will could not be cancelled now');
    }).finally(() => { for (const claim of cancelled) this.deciding.delete(claim); });
  }

  /** `will/<clientId>` as written by another node whose connection's will the client id's claim holds (or whose word it awaits). */
  private isHeldElsewhere(clientId: string, stored: StoredConnectionWill): boolean {
    const held = this.ownership.heldWills(clientId);
    if (held === undefined || stored.node === undefined || stored.node === this.ownership.node) return false;
    return held.awaits === stored.node || held.wills.some((will) => will.from === stored.node);
  }

  heldWillsChanged(clientId: string, lapsed?: string): void {
    this.settle(clientId, lapsed);
  }

  /**
   * Sends what is due of the client id's held wills, if this node owns it and waits for no former
   * owner's word (`lapsed`: a node whose lease lapsed, whose word will not come): each will, and
   * the decision that takes them out of the claim, in one turn, so one stream record holds both
   * and a node that takes over later finds either both or neither.
   */
  private settle(clientId: string, lapsed?: string): void {
    if (this.ownership.fenced || !this.ownership.owns(clientId)) return;
    const held = this.ownership.heldWills(clientId);
    if (held === undefined || (held.awaits !== undefined && held.awaits !== lapsed)) return;
    const due = held.wills.filter((will) => (!will.awaiting || will.from === lapsed) && !this.deciding.has(will.claim));
    const endsWait = lapsed !== undefined && held.awaits === lapsed;
    if (due.length === 0 && !endsWait) return;
    for (const will of due) this.sendHeld(clientId, will);
    const claims = due.map((will) => will.claim);
    for (const claim of claims) this.deciding.add(claim);
    this.ownership.decideWills(clientId, claims, endsWait ? lapsed : undefined).catch((error: unknown) => {
      // Not stored, nor its wills (the same record): the sweep tries again.
      logStoreFailure(this.core.log, error, { clientId }, 'a held will could not be decided now');
    }).finally(() => {
      for (const claim of claims) this.deciding.delete(claim);
      if (this.loadedByClaim.has(clientId) && this.ownership.heldWills(clientId) === undefined) this.loadedByClaim.delete(clientId);
    });
  }

  /** A held will that is due: published now, or, for a kept session, cancelled by its resume or due after its delay, as on one node. */
  private sendHeld(clientId: string, held: HeldWill): void {
    const core = this.core;
    const will = held.will as StoredConnectionWill['will'];
    if (held.kind === 'session') {
      const session = core.sessions.get(clientId);
      // Resumed here by the CONNECT that took it over: that connection cancelled a will with a
      // delay [MQTT-3.1.3-9]; one without is published, as one node does at a takeover.
      if (session !== undefined && session.online && this.loadedByClaim.get(clientId) === session && hasDelay(held)) return;
      if (session !== undefined && !session.online && session.persistent && hasDelay(held)) {
        // Not resumed (the CONNECT went away, or has not attached yet): due after its delay, as
        // after any connection's end. One without a delay is sent now, as one node sends it at
        // the connection's end: set on the session, a resume attaching next would cancel it.
        session.will = {
          delay: will.delay,
          message: {
            topic: will.topic, payload: Buffer.from(will.payload), qos: will.qos, retain: will.retain, properties: will.properties ?? undefined,
            publisher: will.publisher, createdAt: 0, sequence: 0, wire: undefined, wireForm: 0,
          },
        };
        session.willDueAt = core.engine.clock.now() + will.delay * 1000;
        core.state.markDirty(session);
        // Written now, with the decision that takes it out of the claim (one record).
        core.state.flushDirty();
        return;
      }
    }
    // A clean start ended the session, or a connection whose session was not stored: sent now.
    this.publishStoredWill(clientId, { account: held.account, roles: held.roles, will });
  }

  /**
   * Fenced (docs/cluster.md, "Self-fencing"): every session is let go of as if another node had
   * claimed it (nothing written, no will sent), then every connection is closed (MQTT 5: 0x9C).
   * A survivor that adopts the sessions sends their wills, once; if none does, unfenced() loads
   * them again and sends the wills of the connections closed here.
   */
  fenced(): void {
    const core = this.core;
    for (const session of [...core.sessions.values()]) core.lifecycle.forget(session);
    for (const connection of core.engine.clientConnections.all()) connection.useAnotherServer();
  }

  /** Back in the cluster, caught up: the sessions this node still owns are loaded from their stored state, as at start. */
  unfenced(): void {
    const core = this.core;
    core.lifecycle.loaded(core.state.loadSessions(core.engine.clock.now(), (clientId) => this.holds(clientId) && !core.sessions.has(clientId)));
    this.loaded();
  }

  nodesHoldingState(): Iterable<string> {
    return this.core.shares?.nodes() ?? [];
  }

  nodeDied(node: string): Promise<number> {
    return this.core.shares?.removeNode(node) ?? Promise.resolve(0);
  }

  /** The will of a session that is not stored, set or cleared at CONNECT (SessionLifecycle.setWill). */
  storeWill(session: Session): void {
    const will = session.will;
    if (will === undefined) {
      this.removeWill(session.clientId);
      return;
    }
    const m = will.message;
    const value: StoredConnectionWill = {
      account: session.principal.account,
      roles: [...session.principal.roles],
      will: { topic: m.topic, payload: m.payload, qos: m.qos, retain: m.retain, properties: m.properties ?? null, publisher: m.publisher, delay: will.delay },
      node: this.ownership.node,
    };
    this.storedWills.add(session.clientId);
    this.write(this.core.messageLog.state.put(WILL_PREFIX + session.clientId, value));
  }

  /**
   * The session ended here (its will, if due, was published): its stored will goes. `closed`: the
   * connection whose end ended it, which holds the client id until its socket has closed.
   */
  sessionEnded(session: Session, closed?: SessionOutlet): void {
    const clientId = session.clientId;
    this.removeWill(clientId);
    // The claim goes too, unless a new session or another connection of the client id began
    // meanwhile (a clean start). A CONNECT still logging in here claims again (claim()), so this
    // release cannot take its claim.
    setImmediate(() => {
      if (this.core.sessions.has(clientId)) return;
      const holder: unknown = this.core.engine.clientConnections.holder(clientId);
      if (holder === undefined || holder === closed) void this.ownership.release(clientId);
    });
  }

  /** The session went to another node: its stored will is that node's now (nothing is written from here). */
  forgetWill(session: Session): void {
    this.storedWills.delete(session.clientId);
  }

  private removeWill(clientId: string): void {
    if (this.storedWills.delete(clientId)) this.write(this.core.messageLog.state.remove(WILL_PREFIX + clientId));
  }

  /**
   * Publishes a will now, its append handed to the stream at once (not with the turn's batch), so
   * that the write clearing the will, made in the same turn just before or after it (the
   * session's, flushed by publishAll, or the removal of `will/<clientId>`), is in the same stream
   * record: applied together or not at all, a will is sent once even when its node dies then.
   */
  publishWill(message: CoreMessage): void {
    const failed = (error: unknown): void => logStoreFailure(this.core.log, error, { topic: message.topic }, 'a will could not be published');
    try {
      this.core.publishAll([message]).catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /** Publishes `will/<clientId>` (its connection ended on a node that no longer holds it) and removes it, in one record. */
  private sendStoredWill(clientId: string): void {
    const stored = this.core.messageLog.state.get(WILL_PREFIX + clientId) as StoredConnectionWill | undefined;
    if (stored !== undefined) this.publishStoredWill(clientId, stored);
    this.storedWills.add(clientId);
    this.removeWill(clientId);
  }

  /** Publishes a connection's will as stored (`will/<clientId>`), if its account may publish to its topic. */
  private publishStoredWill(clientId: string, stored: StoredConnectionWill): void {
    const core = this.core;
    const principal: Principal = { account: stored.account, roles: stored.roles };
    const will = stored.will;
    if (!core.decisions.mayPublishWill(principal, will.topic)) {
      core.log.info({ clientId, topic: will.topic }, 'will not published: the account may not publish to its topic');
      return;
    }
    this.publishWill({
      topic: will.topic, payload: Buffer.from(will.payload), qos: will.qos, retain: will.retain, properties: will.properties ?? undefined,
      publisher: will.publisher, createdAt: core.engine.clock.now(), sequence: 0, wire: undefined, wireForm: 0,
    });
  }

  private write(written: Promise<void>): void {
    written.catch((error: unknown) => logStoreFailure(this.core.log, error, {}, 'a stored will could not be written'));
  }
}

/** The same will message (a session's will, and one held in a claim). */
function sameWill(message: { topic: string; payload: Uint8Array; qos: number; retain: boolean }, held: StoredConnectionWill['will']): boolean {
  return message.topic === held.topic && message.qos === held.qos && message.retain === held.retain && Buffer.from(message.payload).equals(Buffer.from(held.payload));
}

/** A held will with a Will Delay Interval: a new connection within the delay cancels it [MQTT-3.1.3-9]. */
function hasDelay(held: HeldWill): boolean {
  return ((held.will as { delay?: unknown }).delay ?? 0) !== 0;
}
