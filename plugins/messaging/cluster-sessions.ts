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
 */
import type { SessionOwnershipListener, SessionOwnershipPort } from '../../kernel/messaging/session-ownership';
import type { Principal } from '../../kernel/auth/principal';
import type { MessageCore } from './message-core';
import type { CoreMessage } from './message';
import type { Session, StoredWill } from './session';
import { logStoreFailure } from './store-failure-log';

const WILL_PREFIX = 'will/';

/** `will/<clientId>`: the will of a connection whose session is not stored. */
interface StoredConnectionWill {
  account: string;
  roles: string[];
  will: Omit<StoredWill, 'dueAt'>;
}

export class ClusterSessions implements SessionOwnershipListener {
  /** Client ids whose `will/<clientId>` this node wrote and has not removed. */
  private readonly storedWills = new Set<string>();

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
    for (const [key] of core.messageLog.state.entries(WILL_PREFIX)) {
      const clientId = key.slice(WILL_PREFIX.length);
      if (this.ownership.owns(clientId) && !core.sessions.has(clientId)) this.sendStoredWill(clientId);
    }
  }

  /** A CONNECT's claim, when the client id is not this node's yet (undefined: nothing to wait for). */
  claim(clientId: string): Promise<boolean> | undefined {
    return this.ownership.owns(clientId) ? undefined : this.ownership.claim(clientId);
  }

  lost(clientId: string): void {
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
    const session = core.state.loadSession(clientId, core.engine.clock.now());
    if (session !== undefined) core.lifecycle.loaded([session]);
    // The connection it had elsewhere has ended (taken over, or its node died): its will is due.
    else if (core.messageLog.state.get(WILL_PREFIX + clientId) !== undefined) this.sendStoredWill(clientId);
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
    };
    this.storedWills.add(session.clientId);
    this.write(this.core.messageLog.state.put(WILL_PREFIX + session.clientId, value));
  }

  /** The session ended here (its will, if due, was published): its stored will goes. */
  sessionEnded(session: Session): void {
    const clientId = session.clientId;
    this.removeWill(clientId);
    // The claim goes too, unless a new session of the client id began in this turn (a clean start).
    setImmediate(() => {
      if (!this.core.sessions.has(clientId) && this.core.engine.clientConnections.holder(clientId) === undefined) this.ownership.release(clientId);
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
    const core = this.core;
    const stored = core.messageLog.state.get(WILL_PREFIX + clientId) as StoredConnectionWill | undefined;
    if (stored !== undefined) {
      const principal: Principal = { account: stored.account, roles: stored.roles };
      const will = stored.will;
      if (core.decisions.mayPublish(principal, will.topic)) {
        this.publishWill({
          topic: will.topic, payload: Buffer.from(will.payload), qos: will.qos, retain: will.retain, properties: will.properties ?? undefined,
          publisher: will.publisher, createdAt: core.engine.clock.now(), sequence: 0, wire: undefined, wireForm: 0,
        });
      } else {
        core.log.info({ clientId, topic: will.topic }, 'will not published: the account may not publish to its topic');
      }
    }
    this.storedWills.add(clientId);
    this.removeWill(clientId);
  }

  private write(written: Promise<void>): void {
    written.catch((error: unknown) => logStoreFailure(this.core.log, error, {}, 'a stored will could not be written'));
  }
}
