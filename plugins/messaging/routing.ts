/**
 * Routing: the core follows the message log (`messageLog.follow`) and, for each durable commit,
 * whoever appended it (MQTT, the mq actions, an insert into an integration table), updates the
 * retained store and the per-topic counters and offers every message to the sessions whose
 * subscriptions match it (the subscription tree → direct subscribers and shared groups). Messages
 * the core appended itself are routed as the very objects published (their encodings are shared);
 * others are read from the log's entry. A session that cannot take a message now lags and is
 * served by the catch-up (catch-up.ts).
 */
import type { LogAppend, LoggedMessage } from '../../kernel/storage/message-log-port';
import type { MessageCore } from './message-core';
import { fromLogged, remainingLifetime, type CoreMessage, type QoS } from './message';
import type { Delivery, Session, SessionOutlet, SubscriptionOptions } from './session';
import { pickMember, type DirectMatch, type SharedGroup } from './subscription-tree';
import { emptyMerge, idsOf, mergeSubscription, type MergedDelivery } from './subscription-merge';
import type { Matches } from './topic-decisions';

/** A lagging session not served for this long no longer slows the publishers (it is stuck, not slow). */
const SLOW_TARGET_MS = 2000;

/** Messages the core appended itself, expected back from the log's follower. */
export interface OwnAppend {
  entries: LogAppend[];
  messages: CoreMessage[];
  /** Its publishers are paused when it met a lagging subscriber (PublishBatch turns); else they resume at once. */
  batched: boolean;
  /** Routing it met a session or group that lags. */
  slowTargetSeen: boolean;
}

export type Member = { subscriber: Session; options: SubscriptionOptions };

export class Router {
  /** The highest sequence the router has offered to live sessions. */
  routedUpTo = 0;
  /** Engine clock ms of the batch being routed (statistics, read once per batch). */
  private routeTime = 0;
  /** A message of the batch being routed met a session that lags (its publishers pause). */
  private slowTargetSeen = false;
  private routeStamp = 0;
  /** The log's topics version at the last routed batch (see noteNewTopics). */
  private knownTopics = -1;
  /** The core's own appends not yet seen by the follower, in the order they were issued. */
  private readonly own: OwnAppend[] = [];

  constructor(private readonly core: MessageCore) {}

  /** Messages the core is about to append: routed as these objects when the log hands them back. */
  expect(entries: LogAppend[], messages: CoreMessage[], batched: boolean): OwnAppend {
    const own: OwnAppend = { entries, messages, batched, slowTargetSeen: false };
    this.own.push(own);
    return own;
  }

  /** The append settled (durable or failed): no longer expected. */
  settled(own: OwnAppend): void {
    const at = this.own.indexOf(own);
    if (at >= 0) this.own.splice(at, 1);
  }

  /** The log's follower: one durable commit's messages, in sequence order. */
  committed(logged: readonly LoggedMessage[]): void {
    if (logged.length === 0) return;
    try {
      const own = this.ownAppendOf(logged[0]);
      const messages = own ? this.ownMessages(own, logged) : logged.map(fromLogged);
      this.routeCommit(messages);
      if (own) own.slowTargetSeen = this.slowTargetSeen;
      // A turn's publishers are paused or resumed once it settles (FlowControl.published).
      if (!own?.batched) this.core.flow.resumePublishers();
    } catch (error) {
      this.core.log.error({ err: error }, 'routing stored messages failed');
    }
  }

  /** The own append these messages come from (the same payload objects), if any. */
  private ownAppendOf(first: LoggedMessage): OwnAppend | undefined {
    for (let a = 0; a < this.own.length; a++) {
      const entries = this.own[a].entries;
      for (let i = 0; i < entries.length; i++) {
        if (entries[i].message.payload === first.payload) return this.own.splice(a, 1)[0];
      }
    }
    return undefined;
  }

  /** The published objects of a commit of the core's own (those the log refused are not in it). */
  private ownMessages(own: OwnAppend, logged: readonly LoggedMessage[]): CoreMessage[] {
    const { entries, messages } = own;
    const n = logged.length;
    if (n === entries.length && logged[n - 1].sequence - logged[0].sequence === n - 1) {
      // All stored, numbered in a row (one append call is): the sequences follow from the first.
      // Reading each logged entry instead cost about a microsecond a message in fan-in (the
      // follower's fresh objects, touched for the first time here), a third of the broker's time.
      const first = logged[0].sequence;
      for (let i = 0; i < n; i++) messages[i].sequence = first + i;
      return messages;
    }
    const out = new Array<CoreMessage>(logged.length);
    let j = 0;
    for (let i = 0; i < logged.length; i++) {
      while (j < entries.length && entries[j].message.payload !== logged[i].payload) j++;
      const message = j < entries.length ? messages[j++] : fromLogged(logged[i]);
      message.sequence = logged[i].sequence;
      out[i] = message;
    }
    return out;
  }

  /** One commit: retained store, counters, then the sessions, in log order. */
  private routeCommit(messages: CoreMessage[]): void {
    const core = this.core;
    this.noteNewTopics();
    this.slowTargetSeen = false;
    this.routeTime = core.engine.clock.now();
    const recent = core.recent;
    const state = core.state;
    core.activity.record(messages);
    const storedByQos = core.stats.storedByQos;
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i];
      storedByQos[message.qos]++;
      if (message.retain) state.retain(message);
      const matches = this.route(message);
      if (message.sequence > this.routedUpTo) this.routedUpTo = message.sequence;
      recent.put(message, matches);
    }
  }

  /**
   * A new topic gives its integration table's name to authorization (kernel/auth/resource-aliases.ts):
   * decisions cached while it had none (a publish that created it) are void when a role denies by
   * a table name. Once per batch.
   */
  private noteNewTopics(): void {
    // The catalog's version, not its count: a topic deleted and another created leave the count as it was.
    const topics = this.core.messageLog.topicsVersion();
    if (topics === this.knownTopics) return;
    this.knownTopics = topics;
    if (this.core.engine.roles.deniesByTableName) this.core.decisions.generation++;
  }

  /** Offers a message to every session whose subscriptions match it (a `$SYS` one too, never stored). */
  route(message: CoreMessage): Matches {
    const matches = this.core.tree.match(message.topic);
    const direct = matches.direct;
    if (direct.length === 1) {
      if (includes(direct[0], message)) this.offerOne(matches, 0, message);
    } else if (direct.length > 1) {
      this.routeMany(matches, message);
    }
    const shares = this.core.shares;
    const groups = matches.groups;
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i];
      // In a cluster, one node delivers each message of a group (cluster-shares.ts).
      if (shares === null || shares.mine(group.share, group.filter, message.sequence)) this.offerShared(group, message);
    }
    return matches;
  }

  /**
   * A shared subscription's message goes to ONE member that can take it now (connected, keeping
   * up, room in its window). When none can, the group lags like a session: it keeps its position
   * in the log and is served from there when a member can take more (catch-up.ts).
   */
  private offerShared(group: SharedGroup<Session, SubscriptionOptions>, message: CoreMessage): boolean {
    const groupLag = this.core.catchUp.groupLag;
    let lag = groupLag.get(group);
    if (lag && message.sequence !== 0) {
      if (lag.lagging) {
        this.slowTargetSeen = true;
        return false;
      }
      if (message.sequence <= lag.position) return false; // served by the group's catch-up
    }
    const member = this.pickTaker(group, message);
    if (!member) {
      if (message.sequence === 0) return false; // $SYS: nothing to catch up from
      if (!lag) groupLag.set(group, lag = { lagging: true, position: message.sequence - 1 });
      lag.lagging = true;
      lag.position = message.sequence - 1;
      this.slowTargetSeen = true;
      return false;
    }
    this.deliverToMember(member, message);
    return true;
  }

  /** A shared group's message to the member picked for it (one that can take it now). */
  deliverToMember(member: Member, message: CoreMessage): void {
    const { subscriber: session, options } = member;
    if (!this.core.decisions.mayReceive(session, message.topic)) return;
    this.deliver(session, session.outlet!, message, (message.sequence === 0 ? 0 : Math.min(message.qos, options.qos)) as QoS,
      options.retainAsPublished && message.retain, idsOf(options), false);
  }

  /** A member that can take the message now, round robin; undefined when none can. */
  pickTaker(group: SharedGroup<Session, SubscriptionOptions>, message: CoreMessage): Member | undefined {
    let taker: Member | undefined;
    pickMember(group, (session) => {
      if (session.outlet === null || session.lagging || !session.outlet.writable()) return false;
      const options = group.members.find((m) => m.subscriber === session)!.options;
      if (options.noLocal && session.clientId === message.publisher) return false;
      const qos = Math.min(message.qos, options.qos);
      if (qos > 0 && message.sequence !== 0 && session.inflight.size >= session.window) return false;
      taker = { subscriber: session, options };
      return true;
    });
    return taker;
  }

  /** Offers a message through one subscription of a match (`matches.direct[index]`). */
  private offerOne(matches: Matches, index: number, message: CoreMessage): void {
    if (!this.core.decisions.mayReceiveThrough(matches, index, message.topic)) return;
    const { subscriber: session, options } = matches.direct[index];
    this.offer(session, message, Math.min(message.qos, options.qos) as QoS, options.retainAsPublished && message.retain,
      idsOf(options));
  }

  /**
   * Several subscriptions match: a session with overlapping ones gets ONE copy, merged by the one
   * rule (subscription-merge.ts).
   */
  private routeMany(matches: Matches, message: CoreMessage): void {
    const direct = matches.direct;
    const stamp = ++this.routeStamp;
    let repeated = false;
    // Indexed: the for-of iterator's results were ~40 bytes a delivery in a fan-out.
    for (let i = 0; i < direct.length; i++) {
      const session = direct[i].subscriber;
      if (session.routeStamp === stamp) { repeated = true; break; }
      session.routeStamp = stamp;
    }
    if (!repeated) {
      for (let i = 0; i < direct.length; i++) if (includes(direct[i], message)) this.offerOne(matches, i, message);
      return;
    }
    const merged = new Map<Session, MergedDelivery>();
    for (let i = 0; i < direct.length; i++) {
      const session = direct[i].subscriber;
      let m = merged.get(session);
      if (!m) merged.set(session, m = emptyMerge(i));
      mergeSubscription(m, direct[i].options, session.clientId, message.publisher, Infinity, message.qos, message.retain);
    }
    for (const [session, m] of merged) {
      if (!m.taken || !this.core.decisions.mayReceiveThrough(matches, m.index, message.topic)) continue;
      this.offer(session, message, m.qos as QoS, m.retain, m.subscriptionIds);
    }
  }

  /** Offers a live message to a session (see session.ts for position and lagging). */
  private offer(session: Session, message: CoreMessage, qos: QoS, retain: boolean, subscriptionIds: number[] | undefined): void {
    const outlet = session.outlet;
    if (outlet === null) return;
    if (session.lagging) {
      if (performance.now() - session.lastProgress < SLOW_TARGET_MS) this.slowTargetSeen = true;
      return;
    }
    const sequence = message.sequence;
    if (sequence !== 0 && sequence <= session.position) return;
    const interval = message.properties?.messageExpiryInterval;
    if (interval !== undefined) {
      const lifetime = remainingLifetime(message, this.core.engine.clock.now());
      // An interval of 0 expires at once, but the onward delivery to the subscribers connected now
      // starts at once too [MQTT-3.3.2-5]: they get it, within its second; nothing later does.
      if (lifetime !== undefined && (lifetime < 0 || (lifetime === 0 && interval !== 0))) return;
    }
    if (sequence !== 0 && (!outlet.writable() || (qos > 0 && session.inflight.size >= session.window))) {
      // Served from the log once it can take more.
      session.lagging = true;
      session.lastProgress = performance.now();
      session.position = sequence - 1;
      this.slowTargetSeen = true;
      return;
    }
    if (sequence === 0 && !outlet.writable()) return; // $SYS: nothing to catch up from
    this.deliver(session, outlet, message, sequence === 0 ? 0 : qos, retain, subscriptionIds, false);
  }

  /** Hands one message to a session's connection; at QoS 1/2 it is in flight first. */
  deliver(session: Session, outlet: SessionOutlet, message: CoreMessage, qos: QoS, retain: boolean, subscriptionIds: number[] | undefined, dup: boolean, packetId = 0): void {
    this.core.stats.messagesSent++;
    this.core.stats.sentByQos[qos]++;
    session.received++;
    session.lastReceivedAt = this.routeTime;
    if (qos > 0) {
      if (packetId === 0) packetId = session.allocatePacketId();
      const persistent = session.persistent;
      session.inflight.set(packetId, { sequence: message.sequence, qos, state: 'publish', message, retain, subscriptionIds, sent: !persistent });
      if (persistent) {
        // Sent once its in-flight entry is durable: after a crash, a message a client may have
        // seen is in flight (sent again with DUP, same packet id) [MQTT-4.4.0-1], never new.
        this.core.state.markDirty(session);
        this.core.state.sendWhenDurable(session, packetId);
        return;
      }
    }
    const delivery = deliveryOf(message, qos, retain, packetId, dup, subscriptionIds);
    // Not sent (larger than the client accepts): as if delivered [MQTT-3.1.2-25].
    if (!outlet.deliver(delivery) && qos > 0) session.inflight.delete(packetId);
  }

  /** Sends the deliveries whose in-flight entries the commit just made durable. */
  sendCommitted(waiting: Array<Session | number>): void {
    for (let i = 0; i < waiting.length; i += 2) {
      const session = waiting[i] as Session;
      const packetId = waiting[i + 1] as number;
      const entry = session.inflightCount > 0 ? session.inflight.get(packetId) : undefined;
      const outlet = session.outlet;
      if (!entry || entry.sent || entry.state !== 'publish' || !entry.message || !outlet) continue;
      entry.sent = true;
      const delivery = deliveryOf(entry.message, entry.qos, entry.retain, packetId, false, entry.subscriptionIds);
      if (!outlet.deliver(delivery)) {
        session.inflight.delete(packetId);
        this.core.state.markDirty(session);
      }
    }
  }
}

/**
 * The one Delivery handed to outlets, filled in for each delivery: an outlet reads it during the
 * call and keeps nothing of it (SessionOutlet.deliver), so a fan-out to many sessions makes no
 * object per delivery.
 */
const delivery: Delivery = { message: undefined as unknown as CoreMessage, qos: 0, retain: false, packetId: 0, dup: false, subscriptionIds: undefined };

function deliveryOf(message: CoreMessage, qos: QoS, retain: boolean, packetId: number, dup: boolean, subscriptionIds: number[] | undefined): Delivery {
  delivery.message = message;
  delivery.qos = qos;
  delivery.retain = retain;
  delivery.packetId = packetId;
  delivery.dup = dup;
  delivery.subscriptionIds = subscriptionIds;
  return delivery;
}

function includes(entry: DirectMatch<Session, SubscriptionOptions>, message: CoreMessage): boolean {
  return !(entry.options.noLocal && entry.subscriber.clientId === message.publisher);
}
