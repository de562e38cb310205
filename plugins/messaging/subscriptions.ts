/**
 * Subscriptions of a session: added to (or replaced in) the subscription tree, removed, and the
 * retained messages a new one asks for, sent as the session's window and output allow.
 */
import type { MessageCore } from './message-core';
import { fromLogged, remainingLifetime, type QoS } from './message';
import { MAX_SUBSCRIPTIONS, type Session, type SubscriptionOptions } from './session';
import { parseSharedFilter } from '../../kernel/auth/topic-filter';
import { idsOf } from './subscription-merge';

export class Subscriptions {
  constructor(private readonly core: MessageCore) {}

  /** The session holds MAX_SUBSCRIPTIONS filters and `filter` is not one of them. */
  atLimit(session: Session, filter: string): boolean {
    return session.subscriptionCount >= MAX_SUBSCRIPTIONS && !session.subscriptions.has(filter);
  }

  /**
   * Adds (or replaces) a subscription. The caller validated the filter and checked `maySubscribe`;
   * `sendRetained` follows once the protocol answered.
   */
  subscribe(session: Session, filter: string, options: SubscriptionOptions): boolean {
    // Messages the log holds now came before it: a catch-up does not give them to it. A replaced
    // subscription keeps its start: the flow of publications is not interrupted [MQTT-3.8.4-3].
    const replaced = session.subscriptions.get(filter);
    options.since = replaced ? replaced.since : this.core.messageLog.lastSequence();
    const existed = this.core.tree.add(session, filter, options);
    session.subscriptions.set(filter, options);
    if (session.online) this.core.catchUp.scheduleGroupsOf(session);
    if (session.persistent) this.core.state.markDirty(session);
    return existed;
  }

  unsubscribe(session: Session, filter: string): boolean {
    const existed = this.core.tree.remove(session, filter);
    session.subscriptions.delete(filter);
    if (session.persistent) this.core.state.markDirty(session);
    return existed;
  }

  /**
   * Retained messages for a new subscription (retain handling 0: always, 1: only when new, 2: never;
   * none for shared subscriptions, MQTT 5 §4.8.2). Call after the SUBACK is sent.
   */
  sendRetained(session: Session, filter: string, options: SubscriptionOptions, existed: boolean): void {
    if (options.retainHandling === 2 || (options.retainHandling === 1 && existed)) return;
    if (parseSharedFilter(filter) || !session.outlet) return;
    (session.retainedPending ??= []).push({ entries: this.core.retained.match(filter), options, held: undefined });
    this.drainRetained(session);
  }

  /**
   * Sends a session's pending retained messages while its window and output allow (like a
   * catch-up: `# ` over 100,000 retained topics does not fill the socket's buffer at once);
   * false when some are left for later (an acknowledgement or a drain goes on).
   */
  drainRetained(session: Session): boolean {
    const outlet = session.outlet;
    const pending = session.retainedPending;
    if (!pending) return true;
    if (!outlet) {
      session.retainedPending = undefined;
      return true;
    }
    const { messageLog, decisions, router } = this.core;
    const now = this.core.engine.clock.now();
    while (pending.length > 0) {
      const job = pending[0];
      const { options } = job;
      for (;;) {
        const item = job.held ?? job.entries.next();
        job.held = undefined;
        if (item.done) break;
        const [topic, ref] = item.value;
        let message = ref.message;
        if (!message) {
          const logged = messageLog.read(ref.sequence);
          if (!logged) continue;
          message = fromLogged(logged);
        }
        const lifetime = remainingLifetime(message, now);
        if (lifetime !== undefined && lifetime <= 0) continue;
        if (!decisions.mayReceive(session, topic)) continue;
        if (options.noLocal && message.publisher === session.clientId) continue;
        const qos = (ref.sequence === 0 ? 0 : Math.min(message.qos, options.qos)) as QoS;
        if (!outlet.writable() || (qos > 0 && session.inflight.size >= session.window)) {
          job.held = item;
          return false;
        }
        // Retained messages sent for a subscription carry the RETAIN flag [MQTT-3.3.1-8].
        router.deliver(session, outlet, message, qos, true, idsOf(options), false);
      }
      pending.shift();
    }
    session.retainedPending = undefined;
    return true;
  }
}
