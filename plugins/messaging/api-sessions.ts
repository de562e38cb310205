/**
 * MQ API sessions: persistent sessions that never have a connection. Their client reads them
 * (`read`) from their position in the log, and may move them (`reposition`); one registry of
 * client names with the MQTT sessions (docs/actions.md).
 */
import type { Principal } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import type { LoggedMessage } from '../../kernel/storage/message-log-port';
import type { MessageCore } from './message-core';
import { hasExpired } from './retrieve';
import { Session, SESSION_NEVER_EXPIRES, type SubscriptionOptions } from './session';
import { CATCH_UP_CHUNK } from './catch-up';
import { emptyMerge, mergeSubscription, resetMerge } from './subscription-merge';
import { samePrincipal } from './session-lifecycle';

/** A message read for a session without a connection. */
export interface SessionRead {
  message: LoggedMessage;
  /** Expired, and returned because a subscription includes expired messages. */
  expired: boolean;
  /** How the subscription that took it wants binary values written (MQ API subscriptions). */
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
}

export class ApiSessions {
  constructor(private readonly core: MessageCore) {}

  /**
   * Creates an MQ API session: a persistent session that never has a connection. A name in use by
   * any session (MQTT or MQ API) is CLIENT_NAME_IN_USE (14221).
   */
  create(clientName: string, principal: Principal): Session {
    const core = this.core;
    if (core.sessions.has(clientName) || core.engine.clientConnections.holder(clientName) !== undefined) {
      throw new EngineError('CLIENT_NAME_IN_USE', { clientName });
    }
    const session = new Session(clientName, principal, 'mqApi');
    session.createdAt = core.engine.clock.now();
    session.expiryInterval = SESSION_NEVER_EXPIRES;
    session.position = core.router.routedUpTo;
    session.disconnectedAt = core.engine.clock.now();
    core.sessions.set(clientName, session);
    core.lifecycle.offline.add(session);
    core.state.markDirty(session);
    return session;
  }

  /**
   * Moves a session without a connection in the log: `head` (from the first message), `tail`
   * (from now on), a message id (that message next) or `{ since }` (the first message created at
   * or after a canonical timestamp: create_ts never goes back along the log, so a binary search
   * over sequences finds it). Returns the new position.
   */
  reposition(session: Session, startFrom: 'head' | 'tail' | number | { since: string }): number {
    if (session.online) throw new EngineError('INVALID_PARAMETER', { param: 'clientName', reason: 'a connected MQTT session follows the router: it cannot be moved' });
    const log = this.core.messageLog;
    const last = log.lastSequence();
    let position: number;
    if (startFrom === 'head') position = 0;
    else if (startFrom === 'tail') position = last;
    else if (typeof startFrom === 'number') position = Math.max(0, Math.min(startFrom - 1, last));
    else {
      // The last sequence whose message was created before `since` (0 when none).
      let low = 0;
      let high = last;
      while (low < high) {
        const mid = Math.ceil((low + high) / 2);
        const at = log.readFrom(mid - 1, 1)[0];
        if (at !== undefined && at.createTs < startFrom.since) low = at.sequence;
        else high = mid - 1;
      }
      position = low;
    }
    session.position = position;
    this.core.state.markDirty(session);
    return position;
  }

  /**
   * Ends a session by name; a connected MQTT client holding it is disconnected (0x8E). Resolves
   * once its removal is stored (undefined: no session had the name).
   */
  delete(clientName: string): Promise<void> | undefined {
    const core = this.core;
    // The connection closed here still holds the client id until its socket has closed: named as
    // the one that ended the session, so that in a cluster the claim goes with the session now
    // (ClusterSessions.sessionEnded), not with the sweep 10 s later (listed meanwhile).
    const closing = core.sessions.get(clientName)?.outlet ?? undefined;
    core.engine.clientConnections.holder(clientName)?.takeOver();
    const session = core.sessions.get(clientName);
    if (!session) return undefined;
    if (session.outlet) core.lifecycle.detachOutlet(session);
    session.will = undefined;
    return core.lifecycle.endSession(session, closing);
  }

  /**
   * Reads up to `max` messages for a session without a connection, from its position, matching
   * its subscriptions (each from the time it was made) and what it may receive; its position moves
   * past them (stored in the next commit). Synchronous: two readers of one session never get the
   * same message. What it may receive is decided for `reader` (as for an MQTT client resuming
   * it): an account with `mq.takeover` reading another's session gets only what its own roles allow.
   */
  read(session: Session, max: number, reader: Principal): SessionRead[] {
    const core = this.core;
    if (!samePrincipal(session.principal, reader)) {
      session.principal = reader;
      core.decisions.generation++;
    }
    const out: SessionRead[] = [];
    const cache = new Map<string, SubscriptionOptions[] | null>();
    const now = core.engine.clock.now();
    const log = core.messageLog;
    const end = log.lastSequence();
    const merged = emptyMerge(-1);
    while (out.length < max && session.position < end) {
      const chunk = log.readFrom(session.position, CATCH_UP_CHUNK);
      if (chunk.length === 0) break;
      for (const logged of chunk) {
        if (out.length >= max) break;
        session.position = logged.sequence;
        let matching = cache.get(logged.topic);
        if (matching === undefined) cache.set(logged.topic, matching = this.matching(session, logged.topic));
        if (matching === null) continue;
        resetMerge(merged, -1);
        for (const o of matching) mergeSubscription(merged, o, session.clientId, logged.publisher ?? null, logged.sequence, 0, false);
        if (!merged.taken) continue;
        const expired = hasExpired(logged, now);
        if (expired && !merged.includeExpired) continue;
        out.push({ message: logged, expired, binaryFormat: merged.first!.binaryFormat });
      }
    }
    session.received += out.length;
    if (out.length > 0) session.lastReceivedAt = now;
    core.state.markDirty(session);
    return out;
  }

  /**
   * The session's subscriptions (not shared ones) matching a topic it may receive; null: none.
   * Taken from the subscription tree's match of the topic, which the router caches.
   */
  private matching(session: Session, topic: string): SubscriptionOptions[] | null {
    let options: SubscriptionOptions[] | undefined;
    for (const m of this.core.tree.match(topic).direct) if (m.subscriber === session) (options ??= []).push(m.options);
    if (options === undefined || !this.core.decisions.mayReceive(session, topic)) return null;
    return options;
  }
}
