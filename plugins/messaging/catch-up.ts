/**
 * The catch-up: what lags behind the router (a session that could not take more, a shared group
 * none of whose members could) is served from its position in the log by ONE loop: from the
 * ring of messages routed last while it holds them (decoded and matched once for everyone),
 * else from the log, a step at a time so other clients are served meanwhile, until the target is
 * full again (it stays lagging) or reaches the router (it is live again).
 */
import type { LoggedMessage } from '../../kernel/storage/message-log-port';
import { topicMatches } from '../../kernel/auth/topic-filter';
import type { MessageCore } from './message-core';
import { fromLogged, remainingLifetime, type CoreMessage, type QoS } from './message';
import type { Session, SessionOutlet, SubscriptionOptions } from './session';
import type { SharedGroup } from './subscription-tree';
import { emptyMerge, mergeSubscription, resetMerge } from './subscription-merge';

/** Messages read from the log per step when a target catches up. */
export const CATCH_UP_CHUNK = 256;
/** Messages one catch-up step looks at before it lets the event loop serve others. */
const CATCH_UP_STEP = 4 * 256;

type Group = SharedGroup<Session, SubscriptionOptions>;

/** What the loop serves: its position (every message up to it was offered), and how it takes one. */
interface Target {
  position: number;
  /** One message, from the ring (`kept`) or the log (`logged`); false when it can take no more now. */
  take(kept: CoreMessage | null, logged: LoggedMessage | null, now: number): boolean;
}

/** How a step of the loop ended. */
type Served = 'end' | 'full' | 'step';

export class CatchUp {
  /** Messages catch-ups of live sessions read from the log, because the ring no longer held them. */
  messagesFromLog = 0;
  /** Shared groups that could not place a message: their position in the log. */
  readonly groupLag = new Map<Group, { lagging: boolean; position: number }>();
  private readonly sessions = new Set<Session>();
  private readonly groups = new Set<Group>();
  private scheduled = false;
  /** One merge, emptied for each message (takeForSession). */
  private readonly merged = emptyMerge(-1);

  constructor(private readonly core: MessageCore) {}

  /** Serves the session (or, null, only the groups waiting) in a later turn. */
  schedule(session: Session | null): void {
    if (session) this.sessions.add(session);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const sessions = [...this.sessions];
      this.sessions.clear();
      for (const s of sessions) this.serveSession(s);
      const groups = [...this.groups];
      this.groups.clear();
      for (const group of groups) this.serveGroup(group);
    });
  }

  /** The session's connection went: nothing is served to it. */
  forget(session: Session): void {
    this.sessions.delete(session);
  }

  /** A member of lagging groups can take more: those groups are served from the log. */
  scheduleGroupsOf(session: Session): void {
    if (this.groupLag.size === 0 || session.subscriptionCount === 0) return;
    for (const filter of session.subscriptions.keys()) {
      const group = this.core.tree.sharedGroup(filter);
      if (group && this.groupLag.get(group)?.lagging) this.groups.add(group);
    }
    if (this.groups.size > 0) this.schedule(null);
  }

  /** The lowest position a shared group's delivery may go on from: `routedUpTo`, or a group's lag below it. */
  oldestGroupPosition(routedUpTo: number): number {
    let oldest = routedUpTo;
    for (const lag of this.groupLag.values()) if (lag.position < oldest) oldest = lag.position;
    return oldest;
  }

  /** Groups left without members lag no more (the sweep). */
  dropEmptyGroups(): void {
    for (const group of this.groupLag.keys()) if (group.members.length === 0) this.groupLag.delete(group);
  }

  /** The one loop: serves a target from its position until it is full, a step is done, or it reaches the router. */
  private serve(target: Target, countFromLog: boolean): Served {
    const { recent, router, messageLog } = this.core;
    const now = this.core.engine.clock.now();
    for (let looked = 0; ; ) {
      if (looked >= CATCH_UP_STEP) return 'step';
      let sequence = target.position + 1;
      if (sequence <= router.routedUpTo && recent.at(sequence)) {
        for (; sequence <= router.routedUpTo && looked < CATCH_UP_STEP; sequence++, looked++) {
          const message = recent.at(sequence);
          if (!message) break;
          if (!target.take(message, null, now)) return 'full';
        }
        if (sequence > router.routedUpTo) return 'end';
        continue;
      }
      const chunk = messageLog.readFrom(target.position, CATCH_UP_CHUNK);
      looked += CATCH_UP_CHUNK;
      if (countFromLog) this.messagesFromLog += chunk.length;
      for (const logged of chunk) if (!target.take(null, logged, now)) return 'full';
      if (chunk.length < CATCH_UP_CHUNK) return 'end';
    }
  }

  /** Serves a lagging session (and first its pending retained messages). */
  private serveSession(session: Session): void {
    const outlet = session.outlet;
    if (outlet === null || this.core.closed) return;
    if (session.retainedPending && !this.core.subscriptions.drainRetained(session)) return;
    if (!session.lagging) return;
    // Served again: a slow subscriber, not a stuck one (its publishers keep waiting for it).
    session.lastProgress = performance.now(); // real elapsed time, not engine time
    const target: Target = {
      get position() { return session.position; },
      take: (kept, logged, now) => this.takeForSession(session, outlet, kept, logged, now),
    };
    const served = this.serve(target, true);
    if (served === 'step') this.schedule(session); // a long way behind: the rest in later turns
    if (served !== 'end') return this.caughtUpSome(session);
    // The log's end: live again (messages up to here that the router offers later are skipped).
    session.position = Math.max(session.position, this.core.router.routedUpTo);
    session.lagging = false;
    if (session.persistent) this.core.state.markDirty(session);
    this.core.flow.resumePublishers();
  }

  /**
   * A lagging session was served some: its publishers go on once it is close behind (its
   * messages are still in the ring, cheap to send), not before, or they would outrun it for good.
   */
  private caughtUpSome(session: Session): void {
    if (this.core.router.routedUpTo - session.position <= this.core.resumeLag) this.core.flow.resumePublishers();
  }

  /** One message of a session's catch-up; false when the session is full. */
  private takeForSession(session: Session, outlet: SessionOutlet, kept: CoreMessage | null, logged: LoggedMessage | null, now: number): boolean {
    const { recent, tree } = this.core;
    const topic = kept ? kept.topic : logged!.topic;
    const sequence = kept ? kept.sequence : logged!.sequence;
    // The match the router made, while no subscription changed since; else the tree's.
    let matches = kept ? recent.matchesAt(sequence) : undefined;
    if (matches === undefined || matches.generation !== tree.generation) matches = tree.match(topic);
    const publishedQos = kept ? kept.qos : (logged!.qos ?? 0);
    const publishedRetain = kept ? kept.retain : logged!.retain === true;
    const publisher = kept ? kept.publisher : (logged!.publisher ?? null);
    const direct = matches.direct;
    const merged = resetMerge(this.merged, -1);
    for (let i = 0; i < direct.length; i++) {
      if (direct[i].subscriber !== session) continue;
      merged.index = i;
      mergeSubscription(merged, direct[i].options, session.clientId, publisher, sequence, publishedQos, publishedRetain);
    }
    let qos = merged.taken ? merged.qos : -1;
    if (qos >= 0 && !this.core.decisions.mayReceiveThrough(matches, merged.index, topic)) qos = -1;
    if (qos < 0 || (qos === 0 && sequence <= session.skipQos0UpTo)) {
      session.position = sequence;
      return true;
    }
    if (!outlet.writable() || (qos > 0 && session.inflight.size >= session.window)) return false;
    session.position = sequence;
    const message = kept ?? recent.at(sequence) ?? fromLogged(logged!);
    const lifetime = remainingLifetime(message, now);
    if (lifetime !== undefined && lifetime <= 0) return true;
    this.core.router.deliver(session, outlet, message, qos as QoS, merged.retain, merged.subscriptionIds, false);
    return true;
  }

  /** Serves a lagging shared group while members can take its messages. */
  private serveGroup(group: Group): void {
    const lag = this.groupLag.get(group);
    if (!lag || !lag.lagging || this.core.closed) return;
    if (group.members.length === 0) {
      this.groupLag.delete(group);
      return;
    }
    const { recent, router } = this.core;
    const target: Target = {
      get position() { return lag.position; },
      take: (kept, logged, now) => {
        const topic = kept ? kept.topic : logged!.topic;
        const sequence = kept ? kept.sequence : logged!.sequence;
        if (topicMatches(group.filter, topic) && (this.core.shares === null || this.core.shares.mine(group.share, group.filter, sequence))) {
          const message = kept ?? recent.at(sequence) ?? fromLogged(logged!);
          const lifetime = remainingLifetime(message, now);
          if (lifetime === undefined || lifetime > 0) {
            const member = router.pickTaker(group, message);
            if (!member) return false;
            router.deliverToMember(member, message);
          }
        }
        lag.position = sequence;
        return true;
      },
    };
    const served = this.serve(target, false);
    if (served === 'step') {
      this.groups.add(group);
      this.schedule(null);
    } else if (served === 'end') {
      // The log's end: live again (the router skips what it offers up to here).
      lag.position = Math.max(lag.position, router.routedUpTo);
      lag.lagging = false;
    }
  }
}
