/**
 * The life of a client session with a connection: authorized, opened (created, resumed or
 * replaced), resumed after the protocol's answer (in-flight messages again, then the backlog),
 * closed (its will, its expiry), ended; and the sweep that ends expired sessions and sends
 * delayed wills.
 */
import type { Principal } from '../../kernel/auth/principal';
import type { CommandContext } from '../../kernel/bus/command';
import { CONNECT_COMMAND, TAKEOVER_COMMAND, type OpenSessionOptions } from '../../kernel/messaging/session-types';
import type { MessageCore } from './message-core';
import { fromLogged } from './message';
import { Session, SESSION_NEVER_EXPIRES, type SessionOutlet, type WillMessage } from './session';

/** Messages a live persistent session's stored position may fall behind before it is written again. */
const POSITION_CHECKPOINT_GAP = 10_000;

export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.account === b.account && a.roles.length === b.roles.length && a.roles.every((role, i) => role === b.roles[i]);
}

export class SessionLifecycle {
  /** Sessions without a connection (the sweep looks at them only). */
  readonly offline = new Set<Session>();

  constructor(private readonly core: MessageCore) {}

  /** Takes the sessions stored (CoreState.loadSessions): all of them offline. */
  loaded(sessions: Session[]): void {
    for (const session of sessions) {
      this.core.sessions.set(session.clientId, session);
      for (const [filter, options] of session.subscriptions) this.core.tree.add(session, filter, options);
      this.offline.add(session);
    }
  }

  /** The session of a client name, unless it has expired without a connection (it is gone then). */
  liveSession(clientName: string): Session | undefined {
    const session = this.core.sessions.get(clientName);
    if (session === undefined || (!session.online && this.expired(session, this.core.engine.clock.now()))) return undefined;
    return session;
  }

  /**
   * Authorizes opening the session of a client name (an MQTT CONNECT): `mq.connect` on
   * `client:<name>` and, when the session belongs to another account, `mq.takeover` on it too,
   * whether it is connected or not: the owner's queued and in-flight messages go to whoever
   * resumes it, and a clean start ends it. Throws NOT_AUTHORIZED (the session stays as it was).
   */
  authorizeSession(ctx: CommandContext, clientName: string): void {
    const resource = { kind: 'client' as const, clientName };
    this.core.engine.authorize(ctx, CONNECT_COMMAND, resource);
    const owner = this.liveSession(clientName)?.owner ?? this.storedOwner(clientName);
    if (owner !== undefined && owner !== ctx.principal.account) this.core.engine.authorize(ctx, TAKEOVER_COMMAND, resource);
  }

  /**
   * In a cluster, the account owning a session another node holds, from its stored state (undefined:
   * none, or expired): a takeover needs `mq.takeover` whichever node the client connects to.
   */
  private storedOwner(clientName: string): string | undefined {
    if (this.core.cluster === undefined) return undefined;
    const stored = this.core.state.storedSession(clientName);
    if (stored === undefined) return undefined;
    const ended = stored.expiryInterval !== SESSION_NEVER_EXPIRES && stored.disconnectedAt !== null
      && stored.disconnectedAt + stored.expiryInterval * 1000 <= this.core.engine.clock.now();
    return ended ? undefined : stored.owner;
  }

  /** `authorizeSession`'s rule for a session found (the mq session commands, listings). */
  mayUseSession(ctx: CommandContext, session: Pick<Session, 'clientId' | 'owner'>): boolean {
    const resource = { kind: 'client' as const, clientName: session.clientId };
    const engine = this.core.engine;
    return engine.allows(ctx, CONNECT_COMMAND, resource)
      && (session.owner === ctx.principal.account || engine.allows(ctx, TAKEOVER_COMMAND, resource));
  }

  /**
   * Attaches a connection to the client's session, creating it or (with cleanStart) replacing it.
   * Returns the session and whether one was present [MQTT-3.2.2-2]. The caller authorized it
   * (`authorizeSession`); a resumed session keeps its owner, a new one is the principal's.
   */
  openSession(clientId: string, principal: Principal, options: OpenSessionOptions, outlet: SessionOutlet): { session: Session; present: boolean } {
    const core = this.core;
    let session = core.sessions.get(clientId);
    let present = false;
    if (session && !session.online && this.expired(session, core.engine.clock.now())) {
      // Expired and not yet swept: it is gone [MQTT-3.1.2-23].
      this.endSession(session);
      session = undefined;
    }
    if (session && session.online) this.detachOutlet(session);
    if (session && session.will) {
      // The previous connection's will: a new connection before its delay ends cancels it
      // [MQTT-3.1.3-9]; a clean start ends the old session, which sends it (§3.1.3.2.2).
      if (options.cleanStart) this.publishWill(session);
      session.will = undefined;
      session.willDueAt = undefined;
    }
    if (session && !options.cleanStart) {
      present = true;
      if (!samePrincipal(session.principal, principal)) core.decisions.generation++;
      session.principal = principal;
    } else {
      if (session) this.endSession(session);
      session = new Session(clientId, principal, options.kind);
      session.createdAt = core.engine.clock.now();
      session.position = core.router.routedUpTo;
      core.sessions.set(clientId, session);
    }
    session.expiryInterval = options.expiryInterval;
    session.outlet = outlet;
    session.disconnectedAt = null;
    session.connection = { since: core.engine.clock.now(), facts: options.connection };
    this.offline.delete(session);
    if (present) {
      // Messages of QoS 0 published while it was away are not sent (QoS 1 and 2 are); until
      // `resume`, nothing is offered live.
      session.skipQos0UpTo = core.messageLog.lastSequence();
      session.lagging = true;
    }
    if (session.persistent) core.state.markDirty(session);
    else if (present) core.state.removeSession(session);
    return { session, present };
  }

  /** After the protocol's answer to the connect (CONNACK): in-flight messages again, then the backlog. */
  resume(session: Session): void {
    const outlet = session.outlet;
    if (!outlet) return;
    this.core.catchUp.scheduleGroupsOf(session);
    if (!session.lagging) return;
    this.resendInflight(session, outlet);
    this.core.catchUp.schedule(session);
  }

  /** In-flight messages of a resumed session go again, DUP set, same packet ids [MQTT-4.4.0-1]. */
  private resendInflight(session: Session, outlet: SessionOutlet): void {
    if (session.inflightCount === 0) return;
    for (const [packetId, entry] of session.inflight) {
      if (entry.state === 'pubrel') {
        outlet.resendPubrel(packetId);
        continue;
      }
      // Never written yet: it goes once its entry is durable (sendCommitted), as a first delivery.
      if (!entry.sent) continue;
      let message = entry.message;
      if (!message) {
        const logged = this.core.messageLog.read(entry.sequence);
        if (!logged) {
          session.inflight.delete(packetId);
          continue;
        }
        message = entry.message = fromLogged(logged);
      }
      this.core.stats.messagesSent++;
      this.core.stats.sentByQos[entry.qos]++;
      if (!outlet.deliver({ message, qos: entry.qos, retain: entry.retain, packetId, dup: true, subscriptionIds: entry.subscriptionIds })) {
        // Larger than the client now accepts: as if delivered [MQTT-3.1.2-25].
        session.inflight.delete(packetId);
        if (session.persistent) this.core.state.markDirty(session);
      }
    }
  }

  /**
   * The connection of a session ended. `sendWill`: it ended without a normal DISCONNECT (the will
   * is due, after its delay). The session ends now when its expiry interval is 0.
   */
  closeSession(session: Session, outlet: SessionOutlet, sendWill: boolean): void {
    if (session.outlet !== outlet) return; // taken over meanwhile
    this.detachOutlet(session);
    const now = this.core.engine.clock.now();
    session.disconnectedAt = now;
    if (!sendWill) {
      session.will = undefined;
    } else if (session.will) {
      if (session.will.delay === 0 || !session.persistent) this.publishWill(session);
      else session.willDueAt = now + session.will.delay * 1000;
    }
    if (!session.persistent) {
      this.endSession(session, outlet);
      return;
    }
    this.offline.add(session);
    this.core.state.markDirty(session);
  }

  detachOutlet(session: Session): void {
    if (!session.lagging) session.position = Math.max(session.position, this.core.router.routedUpTo);
    session.lagging = false;
    session.outlet = null;
    session.retainedPending = undefined;
    this.core.catchUp.forget(session);
    // Messages in flight are kept for a persistent session (sent again on reconnect).
    if (session.inflightCount === 0) return;
    if (!session.persistent) session.inflight.clear();
    for (const [, entry] of session.inflight) entry.message = undefined;
  }

  /**
   * Another node owns the session now (cluster-sessions.ts): it leaves this node without a write
   * and without its will, which the new owner has with the session's stored state (or, for a
   * session that is not stored, as `will/<clientId>`) and sends as a takeover would.
   */
  forget(session: Session): void {
    if (session.online) this.detachOutlet(session);
    this.core.cluster?.forgetWill(session);
    session.will = undefined;
    session.willDueAt = undefined;
    this.core.tree.removeAll(session);
    if (this.core.sessions.get(session.clientId) === session) this.core.sessions.delete(session.clientId);
    this.offline.delete(session);
    this.core.state.forget(session);
  }

  /**
   * Ends a session: its subscriptions and state go; a will still pending is sent now. Resolves once
   * its removal is stored. `closed`: the connection whose end ended it (it still holds the client id for a moment).
   */
  endSession(session: Session, closed?: SessionOutlet): Promise<void> {
    if (session.will) this.publishWill(session);
    this.core.cluster?.sessionEnded(session, closed);
    this.core.tree.removeAll(session);
    this.core.sessions.delete(session.clientId);
    this.offline.delete(session);
    return this.core.state.removeSession(session);
  }

  setWill(session: Session, will: WillMessage | undefined): void {
    session.will = will;
    session.willDueAt = undefined;
    if (session.persistent) this.core.state.markDirty(session);
    else this.core.cluster?.storeWill(session);
  }

  /** The will of a session that ended here without it being sent (cluster-sessions.ts: held for another node's word), sent now. */
  publishWillOf(session: Session, will: WillMessage): void {
    session.will = will;
    this.publishWill(session);
  }

  private publishWill(session: Session): void {
    const will = session.will;
    session.will = undefined;
    session.willDueAt = undefined;
    if (!will) return;
    if (!this.core.decisions.mayPublishWill(session.principal, will.message.topic)) {
      this.core.log.info({ clientId: session.clientId, topic: will.message.topic }, 'will not published: the account may not publish to its topic');
      return;
    }
    will.message.createdAt = this.core.engine.clock.now();
    // The stored session forgets the will in the will's own commit: a restart (or, in a cluster,
    // a node adopting the session) does not send it again.
    if (session.persistent && this.core.sessions.get(session.clientId) === session) this.core.state.markDirty(session);
    const cluster = this.core.cluster;
    if (cluster === undefined) {
      this.core.publish(will.message);
      return;
    }
    // In a cluster the will and the write that clears it go as one stream record (cluster-sessions.ts).
    cluster.publishWill(will.message);
  }

  /** Expired sessions end; delayed wills whose time has come are sent. */
  sweep(now: number): void {
    for (const session of this.offline) {
      if (session.willDueAt !== undefined && session.willDueAt <= now) this.publishWill(session);
      if (this.expired(session, now)) this.endSession(session);
    }
  }

  /**
   * Live persistent sessions that receive nothing of QoS 1/2 are never written: now and then their
   * position (the router's) is, so a restart does not make them read the log from far back.
   */
  checkpointPositions(): void {
    const routedUpTo = this.core.router.routedUpTo;
    for (const session of this.core.sessions.values()) {
      if (session.online && session.persistent && !session.lagging && routedUpTo - session.storedPosition > POSITION_CHECKPOINT_GAP) {
        this.core.state.markDirty(session);
      }
    }
  }

  private expired(session: Session, now: number): boolean {
    return session.expiryInterval !== SESSION_NEVER_EXPIRES && session.disconnectedAt !== null
      && session.disconnectedAt + session.expiryInterval * 1000 <= now;
  }
}
