/**
 * The message core's persisted state. In the log's shared state store (LogStatePort, what every
 * node of a cluster shares): the sessions (`session/<clientId>`) and the retained pointers
 * (`retained/<topic>`, the sequence of each topic's retained message). In its per-process store
 * (`localState`): the retained checkpoint, how far this process has followed the log. Session writes of one turn join the commit of
 * that turn's appends; deliveries whose in-flight entry must be durable first wait for it here.
 */
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { MessageCore } from './message-core';
import { fromLogged, type CoreMessage } from './message';
import { Session, type StoredSession } from './session';
import { logStoreFailure } from './store-failure-log';

/** State key: retained pointers are durable for every message up to this sequence. */
const RETAINED_CHECKPOINT = 'retained-checkpoint';
/** Messages read from the log per step when the retained pointers are replayed. */
const REPLAY_CHUNK = 256;

export interface RetainedRef {
  sequence: number;
  /** Held for messages never stored (`$SYS`); others are read from the log. */
  message?: CoreMessage;
}

export class CoreState {
  private readonly dirty = new Set<Session>();
  /** Sessions whose changes may wait for their next write or the sweep (acknowledgements). */
  private readonly lazyDirty = new Set<Session>();
  /** (session, packet id) pairs of deliveries waiting for their in-flight entry to be durable. */
  private sendAfterCommit: Array<Session | number> = [];
  private flushScheduled = false;
  /** The sequence up to which retained pointers are durable (see replayRetained). */
  private retainedCheckpoint = 0;
  /** Sessions whose next write someone waits for (whenStored). */
  private storedWaiters: Map<Session, Array<{ resolve(written: boolean): void; reject(error: unknown): void }>> | null = null;

  constructor(
    private readonly core: MessageCore,
    private readonly state: LogStatePort,
    private readonly local: LogStatePort,
  ) {}

  /** The stored sessions, as loaded at start (`now`: when they count as created); `keep`: those this node holds (a cluster's owner). */
  loadSessions(now: number, keep: (clientId: string) => boolean = () => true): Session[] {
    const sessions: Session[] = [];
    for (const [key, value] of this.state.entries('session/')) {
      if (keep(key.slice('session/'.length))) sessions.push(this.loaded(value as StoredSession, now));
    }
    return sessions;
  }

  /** One stored session, loaded as at start (a cluster node that became its owner); undefined when none is stored. */
  loadSession(clientId: string, now: number): Session | undefined {
    const value = this.state.get(`session/${clientId}`);
    return value === undefined ? undefined : this.loaded(value as StoredSession, now);
  }

  /**
   * A stored session loaded here. One connected when last written is not any more (its node
   * stopped or died): it is written so, or the other nodes of a cluster, which list it from its
   * stored state (session-listing.ts), would show it connected while nobody serves it.
   */
  private loaded(stored: StoredSession, now: number): Session {
    const session = loadedSession(stored, now);
    if (stored.disconnectedAt === null) this.markDirty(session);
    return session;
  }

  /** The session's stored form, as the state holds it now (undefined: none). */
  storedSession(clientId: string): StoredSession | undefined {
    return this.state.get(`session/${clientId}`) as StoredSession | undefined;
  }

  /** The session left this node (another owns it): nothing of it is written from here. */
  forget(session: Session): void {
    this.dirty.delete(session);
    this.lazyDirty.delete(session);
  }

  /** The stored retained pointers into the core's retained store, then the replay (replayRetained). */
  loadRetained(): void {
    for (const [key, value] of this.state.entries('retained/')) {
      this.core.retained.set(key.slice('retained/'.length), { sequence: value as number });
    }
    this.replayRetained();
  }

  /**
   * A retained message's pointer is written in the commit after the message's own (its sequence
   * is known only then): messages after RETAINED_CHECKPOINT are read again at start so a crash
   * between the two commits loses no retained message.
   */
  private replayRetained(): void {
    const log = this.core.messageLog;
    let after = (this.local.get(RETAINED_CHECKPOINT) as number | undefined) ?? 0;
    if (this.state.get(RETAINED_CHECKPOINT) !== undefined) {
      // Written to the shared state by earlier versions: it is this process's alone.
      after = Math.max(after, this.state.get(RETAINED_CHECKPOINT) as number);
      void this.state.remove(RETAINED_CHECKPOINT).catch(() => undefined);
    }
    for (;;) {
      const chunk = log.readFrom(after, REPLAY_CHUNK);
      for (const logged of chunk) {
        after = logged.sequence;
        if (logged.retain === true) this.retain(fromLogged(logged));
      }
      if (chunk.length < REPLAY_CHUNK) break;
    }
    this.retainedCheckpoint = after;
    if (after > 0) void this.local.put(RETAINED_CHECKPOINT, after).catch(() => undefined);
  }

  /** Moves the retained checkpoint (see replayRetained) to what is routed; once a second at most. */
  checkpointRetained(routedUpTo: number): void {
    if (routedUpTo <= this.retainedCheckpoint) return;
    this.retainedCheckpoint = routedUpTo;
    void this.local.put(RETAINED_CHECKPOINT, routedUpTo).catch((error: unknown) => logStoreFailure(this.core.log, error, {}, 'retained checkpoint not stored'));
  }

  /** A retained message replaces the topic's; an empty one clears it and is not kept [MQTT-3.3.1-10, MQTT-3.3.1-11]. */
  retain(message: CoreMessage): void {
    const stored = message.sequence !== 0;
    const retained = this.core.retained;
    if (message.payload.length === 0) {
      if (retained.delete(message.topic) && stored) this.stateWrite(this.state.remove(`retained/${message.topic}`));
      return;
    }
    retained.set(message.topic, stored ? { sequence: message.sequence } : { sequence: 0, message });
    if (stored) this.stateWrite(this.state.put(`retained/${message.topic}`, message.sequence));
  }

  /** Forgets a topic's retained message; false when it had none. */
  clearRetained(topic: string, routedUpTo: number): boolean {
    const entry = this.core.retained.get(topic);
    if (!entry) return false;
    // The checkpoint first passes the message's sequence, so a restart's replay cannot bring it back.
    this.checkpointRetained(routedUpTo);
    this.core.retained.delete(topic);
    if (entry.sequence !== 0) this.stateWrite(this.state.remove(`retained/${topic}`));
    return true;
  }

  /** A state write nobody waits for: its failure (a closed storage) is logged, never unhandled. */
  private stateWrite(written: Promise<void>): void {
    written.catch((error: unknown) => logStoreFailure(this.core.log, error, {}, 'message core state not stored'));
  }

  /** The session is written in this turn's commit. */
  markDirty(session: Session): void {
    this.dirty.add(session);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flushDirty());
  }

  /**
   * The session is written in this turn's commit; resolves once that write is stored (true), or
   * at once when it is not written (false: it is no longer persistent, or left this node), and
   * rejects when the write fails.
   */
  whenStored(session: Session): Promise<boolean> {
    this.markDirty(session);
    return new Promise((resolve, reject) => {
      this.storedWaiters ??= new Map();
      let waiting = this.storedWaiters.get(session);
      if (waiting === undefined) this.storedWaiters.set(session, waiting = []);
      waiting.push({ resolve, reject });
    });
  }

  /** The session is written with its next write or by the sweep (a PUBACK: see acknowledge). */
  markLazy(session: Session): void {
    this.lazyDirty.add(session);
  }

  /** The sweep: sessions marked lazily are written now. */
  flushLazy(): void {
    if (this.lazyDirty.size === 0) return;
    for (const session of this.lazyDirty) this.markDirty(session);
    this.lazyDirty.clear();
  }

  /** Closing: every session marked lazily is written with the last flush. */
  closing(): void {
    for (const session of this.lazyDirty) this.dirty.add(session);
    this.lazyDirty.clear();
  }

  /** A delivery sent once its in-flight entry (written in this turn's commit) is durable. */
  sendWhenDurable(session: Session, packetId: number): void {
    this.sendAfterCommit.push(session, packetId);
  }

  /** whenStored callers whose session was not written (no longer persistent, replaced, or gone from this node): nothing to wait for. */
  private settleUnwritten(): void {
    if (this.storedWaiters === null || this.storedWaiters.size === 0) return;
    for (const waiting of this.storedWaiters.values()) for (const w of waiting) w.resolve(false);
    this.storedWaiters.clear();
  }

  /** The session's stored record goes (the session ended); resolves once that is stored (failures are logged here). */
  removeSession(session: Session): Promise<void> {
    this.dirty.delete(session);
    const written = this.state.remove(`session/${session.clientId}`);
    this.stateWrite(written);
    return written;
  }

  /** Writes changed persistent sessions (into the commit of this turn's appends). */
  flushDirty(): void {
    this.flushScheduled = false;
    if (this.dirty.size === 0) {
      // Those waiting for a session that left the dirty set unwritten (forget, removeSession).
      this.settleUnwritten();
      return;
    }
    for (const session of this.dirty) this.lazyDirty.delete(session);
    const routedUpTo = this.core.router.routedUpTo;
    const sessions = this.core.sessions;
    let written: Promise<void> | undefined;
    for (const session of this.dirty) {
      if (!session.persistent || sessions.get(session.clientId) !== session) continue;
      const stored = session.toStored();
      // A live session's position is the router's.
      if (session.online && !session.lagging) stored.position = Math.max(stored.position, routedUpTo);
      written = this.state.put(`session/${session.clientId}`, stored);
      session.storedPosition = stored.position;
      // One commit: its failure is reported once, below.
      written.catch(() => undefined);
      const waiting = this.storedWaiters?.get(session);
      if (waiting !== undefined) {
        this.storedWaiters!.delete(session);
        for (const w of waiting) written.then(() => w.resolve(true), w.reject);
      }
    }
    this.dirty.clear();
    this.settleUnwritten();
    const waiting = this.sendAfterCommit;
    if (waiting.length === 0) return;
    this.sendAfterCommit = [];
    const router = this.core.router;
    // Every put of this turn shares one commit: the last one's promise is the commit's.
    if (!written) return router.sendCommitted(waiting);
    written.then(() => router.sendCommitted(waiting), (error: unknown) => {
      logStoreFailure(this.core.log, error, {}, 'session state could not be stored; deliveries wait for a reconnect');
    });
  }
}

/** A stored session as loaded (`now`: when it counts as created). */
function loadedSession(stored: StoredSession, now: number): Session {
  const session = Session.fromStored(stored);
  session.createdAt = now;
  if (session.disconnectedAt === null) {
    // Connected when last written (the server stopped, or its node lost it): offline since now,
    // its connection ended without a DISCONNECT, so its will is due after its delay.
    session.disconnectedAt = now;
    if (session.will && session.willDueAt === undefined) session.willDueAt = now + session.will.delay * 1000;
  }
  return session;
}
