/**
 * The message core: protocol-neutral publish, subscribe and sessions over the message log
 * (docs/message-core.md). MQTT connections and the mq actions use it alike.
 *
 * publish → (authorized by the caller through `mayPublish`) → one append per event-loop turn →
 * once durable: retained store, router (subscription tree → sessions) → the publisher is told.
 */
import { TopicActivity } from './topic-activity';
import type { Logger } from 'pino';
import type { Engine } from '../../kernel/engine';
import { EngineError, newErrorReference } from '../../kernel/errors';
import type { Principal } from '../../kernel/auth/principal';
import type { CommandContext } from '../../kernel/bus/command';
import type { LoggedMessage, LogStatePort, MessageLogPort } from '../../kernel/storage/message-log-port';
import { fromLogged, logTimestamp, remainingLifetime, toLogAppend, type CoreMessage, type QoS } from './message';
import { hasExpired } from './retrieve';
import { PublishBatch, type PublishOrigin } from './publish-batch';
import { RetainedStore } from './retained-store';
import { RecentRing } from './recent-ring';
import {
  Session, type Delivery, type SessionOutlet, type StoredSession, type SubscriptionOptions, type WillMessage,
  SESSION_NEVER_EXPIRES,
} from './session';
import { pickMember, SubscriptionTree, type DirectMatch, type SharedGroup, type TopicMatches } from './subscription-tree';
import { parseSharedFilter, topicMatches } from '../../kernel/auth/topic-filter';

export const PUBLISH_COMMAND = 'mq.publish';
export const SUBSCRIBE_COMMAND = 'mq.subscribe';
/** Using a client name (resource `client:<name>`): an MQTT CONNECT, the mq session commands. */
export const CONNECT_COMMAND = 'mq.connect';
/** Using a session another account owns, connected or not, also needs this on its client name. */
export const TAKEOVER_COMMAND = 'mq.takeover';

/** Messages waiting for their commit above which publishers are paused, and where they resume. */
const BACKLOG_HIGH = 50_000;
const BACKLOG_LOW = 12_500;
/** Messages read from the log per step when a session catches up. */
const CATCH_UP_CHUNK = 256;
/** Messages a live persistent session's stored position may fall behind before it is written again. */
const POSITION_CHECKPOINT_GAP = 10_000;
/** State key: retained pointers are durable for every message up to this sequence. */
const RETAINED_CHECKPOINT = 'retained-checkpoint';
/** Messages one catch-up step looks at before it lets the event loop serve others. */
const CATCH_UP_STEP = 4 * 256;
/** A lagging session not served for this long no longer slows the publishers (it is stuck, not slow). */
const SLOW_TARGET_MS = 2000;
/** Decisions a session keeps about topics it may receive (cleared when full). */
const RECEIVE_DECISIONS_LIMIT = 16_384;

interface RetainedRef {
  sequence: number;
  /** Held for messages never stored (`$SYS`); others are read from the log. */
  message?: CoreMessage;
}


/** A message read for a session without a connection. */
export interface SessionRead {
  message: LoggedMessage;
  /** Expired, and returned because a subscription includes expired messages. */
  expired: boolean;
  /** How the subscription that took it wants binary values written (MQ API subscriptions). */
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
}

/** The subscriptions of one session that match a topic. */
interface SessionMatches {
  options: SubscriptionOptions[];
}

type Matches = TopicMatches<Session, SubscriptionOptions>;

/** A match's receive decisions (`mayReceiveThrough`), by index of its direct subscriptions. */
interface ReceiveDecisions {
  generation: number;
  allowed: Array<boolean | undefined>;
}

function samePrincipal(a: Principal, b: Principal): boolean {
  return a.account === b.account && a.roles.length === b.roles.length && a.roles.every((role, i) => role === b.roles[i]);
}

export interface OpenSessionOptions {
  cleanStart: boolean;
  /** Seconds; 0 ends the session with its connection; SESSION_NEVER_EXPIRES keeps it. */
  expiryInterval: number;
  kind: 'mqtt' | 'mqApi';
}

export interface SubscribeResult {
  /** Granted QoS, or a reason code ≥ 0x80. */
  code: number;
  existed: boolean;
}

/** Counted by the protocols (clients' traffic, not the broker's own `$SYS` reports). */
export interface Statistics {
  messagesReceived: number;
  messagesSent: number;
  bytesReceived: number;
  bytesSent: number;
  publishDropped: number;
}

export class MessageCore {
  readonly log: Logger;
  readonly tree = new SubscriptionTree<Session, SubscriptionOptions>();
  readonly retained = new RetainedStore<RetainedRef>();
  readonly sessions = new Map<string, Session>();
  readonly stats: Statistics = { messagesReceived: 0, messagesSent: 0, bytesReceived: 0, bytesSent: 0, publishDropped: 0 };
  /** Engine clock ms when the core started (uptime). */
  readonly startedAt: number;
  /** Per-topic traffic while someone watches it (the explorer); costs nothing otherwise. */
  readonly activity: TopicActivity;
  /** Bumped when roles change, or a session resumes under other roles: every cached authorization decision is void. */
  rolesGeneration = 0;
  /** Engine clock ms of the batch being routed (statistics, read once per batch). */
  private routeTime = 0;
  /** The highest sequence the router has offered to live sessions. */
  private routedUpTo = 0;
  private readonly messageLog: MessageLogPort;
  private readonly state: LogStatePort;
  private readonly batch: PublishBatch;
  private readonly dirty = new Set<Session>();
  /** Sessions whose changes may wait for their next write or the sweep (acknowledgements). */
  private readonly lazyDirty = new Set<Session>();
  /** (session, packet id) pairs of deliveries waiting for their in-flight entry to be durable. */
  private sendAfterCommit: Array<Session | number> = [];
  private readonly catchUps = new Set<Session>();
  /** Shared groups that could not place a message: their position in the log. */
  private readonly groupLag = new Map<SharedGroup<Session, SubscriptionOptions>, { lagging: boolean; position: number }>();
  private readonly groupCatchUps = new Set<SharedGroup<Session, SubscriptionOptions>>();
  private catchUpScheduled = false;
  private readonly paused = new Set<PublishOrigin>();
  /**
   * The messages routed last, with their matches (recent-ring.ts; `mq_ring_messages`,
   * `mq_ring_bytes`). A turn of a busy fan-in routes ~9,000 messages, and a subscriber that lags
   * by a few turns must still find them here: served from the log instead, each message is
   * decoded again, and the catch-up fell behind for good.
   */
  readonly recent: RecentRing<Matches>;
  /** How far behind the router a lagging session may be when its publishers resume (a quarter of the ring). */
  private readonly resumeLag: number;
  /** Messages catch-ups of live sessions read from the log, because the ring no longer held them. */
  messagesCaughtUpFromLog = 0;
  /** A message of the batch being routed met a session that lags (its publishers pause). */
  private slowTargetSeen = false;
  private readonly offline = new Set<Session>();
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** The sequence up to which retained pointers are durable (see replayRetained). */
  private retainedCheckpoint = 0;
  /** The log's topics version at the last routed batch (see noteNewTopics). */
  private knownTopics = -1;

  constructor(readonly engine: Engine) {
    this.startedAt = engine.clock.now();
    this.activity = new TopicActivity(engine.clock);
    this.log = engine.log.child({ plugin: 'messaging' });
    this.messageLog = engine.need('storage').messageLog;
    this.state = this.messageLog.state;
    this.recent = new RecentRing<Matches>(engine.settings.mq_ring_messages, engine.settings.mq_ring_bytes);
    this.resumeLag = this.recent.capacity / 4;
    this.batch = new PublishBatch(
      this.messageLog,
      () => engine.clock.now(),
      (messages, origins) => this.durable(messages, origins),
      () => this.flushDirty(),
      (error, count) => {
        this.stats.publishDropped += count;
        this.log.error({ err: error, count }, 'messages could not be stored');
      },
      (origin) => this.holdForTurn(origin),
      () => this.releaseTurn(),
      (error) => this.log.error({ err: error, reference: newErrorReference() }, 'routing stored messages failed'),
    );
    engine.roles.onChange(() => { this.rolesGeneration++; });
  }

  /** Loads persisted sessions and retained messages; starts the expiry timer. */
  load(): void {
    this.routedUpTo = this.messageLog.lastSequence();
    const now = this.engine.clock.now();
    for (const [, value] of this.state.entries('session/')) {
      const session = Session.fromStored(value as StoredSession);
      session.createdAt = now;
      if (session.disconnectedAt === null) {
        // Connected when the server stopped: offline since now, its connection ended without a
        // DISCONNECT, so its will is due after its delay.
        session.disconnectedAt = now;
        if (session.will && session.willDueAt === undefined) session.willDueAt = now + session.will.delay * 1000;
      }
      this.sessions.set(session.clientId, session);
      for (const [filter, options] of session.subscriptions) this.tree.add(session, filter, options);
      this.offline.add(session);
    }
    for (const [key, value] of this.state.entries('retained/')) {
      this.retained.set(key.slice('retained/'.length), { sequence: value as number });
    }
    this.replayRetained();
    this.timer = setInterval(() => this.sweep(), 1000).unref();
  }

  /**
   * A retained message's pointer is written in the commit after the message's own (its sequence
   * is known only then): messages after RETAINED_CHECKPOINT are read again at start so a crash
   * between the two commits loses no retained message.
   */
  private replayRetained(): void {
    let after = (this.state.get(RETAINED_CHECKPOINT) as number | undefined) ?? 0;
    for (;;) {
      const chunk = this.messageLog.readFrom(after, CATCH_UP_CHUNK);
      for (const logged of chunk) {
        after = logged.sequence;
        if (logged.retain === true) this.retain(fromLogged(logged));
      }
      if (chunk.length < CATCH_UP_CHUNK) break;
    }
    this.retainedCheckpoint = after;
    if (after > 0) void this.state.put(RETAINED_CHECKPOINT, after).catch(() => undefined);
  }

  /** Moves the retained checkpoint (see replayRetained) to what is routed; once a second at most. */
  private checkpointRetained(): void {
    if (this.routedUpTo <= this.retainedCheckpoint) return;
    this.retainedCheckpoint = this.routedUpTo;
    void this.state.put(RETAINED_CHECKPOINT, this.routedUpTo).catch((error: unknown) => this.log.error({ err: error }, 'retained checkpoint not stored'));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const session of this.lazyDirty) this.dirty.add(session);
    this.lazyDirty.clear();
    if (this.timer) clearInterval(this.timer);
    const now = this.engine.clock.now();
    for (const session of this.sessions.values()) {
      if (session.online && session.persistent) {
        session.disconnectedAt = now;
        this.markDirty(session);
      }
    }
    this.flushDirty();
  }

  /** Messages the log holds (its last sequence: sequences are never reused). */
  /** Sessions with a connection, and in all ($SYS figures, getMqOverview). */
  sessionCounts(): { connected: number; total: number } {
    let connected = 0;
    for (const session of this.sessions.values()) if (session.online) connected++;
    return { connected, total: this.sessions.size };
  }

  storedMessages(): number {
    return this.messageLog.lastSequence();
  }

  // ---- authorization ---------------------------------------------------------------------

  /** May the principal publish to the topic? (the kernel decides; callers cache per connection) */
  mayPublish(principal: Principal, topic: string): boolean {
    return this.allowed(principal, PUBLISH_COMMAND, topic);
  }

  /** May the principal subscribe to the filter (the filter part of a shared one)? */
  maySubscribe(principal: Principal, filter: string): boolean {
    return this.allowed(principal, SUBSCRIBE_COMMAND, parseSharedFilter(filter)?.filter ?? filter);
  }

  /** May the principal run `command` on the topic (the kernel's decision, as a boolean)? */
  allowed(principal: Principal, command: string, topic: string): boolean {
    return this.engine.allows({ principal, origin: 'mq' }, command, { kind: 'topic', topic });
  }

  /**
   * Whether the session may receive a message of this topic (`mq.subscribe` on it), decided once
   * per topic and roles generation: a wildcard subscription covering denied topics is granted and
   * their messages are withheld here, and a role changed after a subscription applies at once.
   */
  private mayReceive(session: Session, topic: string): boolean {
    if (session.receiveDecisionsGeneration !== this.rolesGeneration) {
      session.receiveDecisions.clear();
      session.receiveDecisionsGeneration = this.rolesGeneration;
    }
    let allowed = session.receiveDecisions.get(topic);
    if (allowed === undefined) {
      allowed = this.allowed(session.principal, SUBSCRIBE_COMMAND, topic);
      if (session.receiveDecisions.size >= RECEIVE_DECISIONS_LIMIT) session.receiveDecisions.clear();
      if (topic.length <= 1024) session.receiveDecisions.set(topic, allowed);
    }
    return allowed;
  }

  /**
   * `mayReceive` for the subscriber of `matches.direct[index]`, kept on the match itself (the
   * router and the catch-up hold it already): no lookup by topic per message.
   */
  private mayReceiveThrough(matches: Matches, index: number, topic: string): boolean {
    let memo = matches.memo as ReceiveDecisions | undefined;
    if (memo === undefined || memo.generation !== this.rolesGeneration) {
      memo = { generation: this.rolesGeneration, allowed: new Array<boolean | undefined>(matches.direct.length) };
      matches.memo = memo;
    }
    let allowed = memo.allowed[index];
    if (allowed === undefined) memo.allowed[index] = allowed = this.allowed(matches.direct[index].subscriber.principal, SUBSCRIBE_COMMAND, topic);
    return allowed;
  }

  // ---- publish ---------------------------------------------------------------------------

  /**
   * Publishes one message: stored in this turn's commit, then routed; `origin.stored(token)` is
   * called once it is durable. `$SYS/...` messages are never stored (docs/mqtt.md, `$SYS`): routed at once.
   */
  publish(message: CoreMessage, origin: PublishOrigin | null = null, token = 0): void {
    if (message.topic.charCodeAt(0) === 0x24 /* $ */ && message.topic.startsWith('$SYS/')) {
      message.sequence = 0;
      if (message.retain) this.retain(message);
      this.route(message);
      origin?.stored(token, true, message);
      return;
    }
    this.batch.add(message, origin, token);
  }

  /** Publishes messages all or nothing, in one commit; resolves with their sequences once durable. */
  publishAll(messages: CoreMessage[]): Promise<number[]> {
    this.flushDirty();
    const createTs = logTimestamp(this.engine.clock.now());
    return this.messageLog.append(messages.map((m) => toLogAppend(m, createTs))).then((sequences) => {
      for (let i = 0; i < messages.length; i++) messages[i].sequence = sequences[i];
      this.durable(messages);
      return sequences;
    });
  }

  /** True while the log's backlog is over its high-water mark: the caller pauses and registers. */
  get overloaded(): boolean {
    return this.batch.backlog > BACKLOG_HIGH;
  }

  /** Pauses a publisher until the backlog drains or lagging targets catch up. */
  pausePublisher(origin: PublishOrigin): void {
    if (this.paused.has(origin) || !origin.mayPause()) return;
    this.paused.add(origin);
    origin.pausePublishing();
  }

  /** Publishers held until the next turn because this one is full (PublishBatch). */
  private readonly heldForTurn = new Set<PublishOrigin>();

  private holdForTurn(origin: PublishOrigin): void {
    if (this.paused.has(origin) || this.heldForTurn.has(origin) || !origin.mayPause()) return;
    this.heldForTurn.add(origin);
    origin.pausePublishing();
  }

  private releaseTurn(): void {
    if (this.heldForTurn.size === 0) return;
    // Those the core paused meanwhile (backlog, lagging targets) stay paused.
    for (const origin of this.heldForTurn) if (!this.paused.has(origin)) origin.resumePublishing();
    this.heldForTurn.clear();
  }

  private resumePublishers(): void {
    if (this.paused.size === 0 || this.batch.backlog >= BACKLOG_LOW) return;
    const paused = [...this.paused];
    this.paused.clear();
    for (const origin of paused) origin.resumePublishing();
  }

  private durable(messages: CoreMessage[], origins?: ReadonlyArray<PublishOrigin | null>): void {
    this.noteNewTopics();
    this.slowTargetSeen = false;
    this.routeTime = this.engine.clock.now();
    const recent = this.recent;
    this.activity.record(messages);
    for (const message of messages) {
      if (message.retain) this.retain(message);
      const matches = this.route(message);
      if (message.sequence > this.routedUpTo) this.routedUpTo = message.sequence;
      recent.put(message, matches);
    }
    if (this.slowTargetSeen && origins) {
      // Publishers wait for the subscribers they outpace (served from the log meanwhile), instead
      // of starving them of the CPU; resumed as those catch up, or by the sweep.
      for (const origin of origins) if (origin) this.pausePublisher(origin);
    } else {
      this.resumePublishers();
    }
  }

  /**
   * A new topic gives its integration table's name to authorization (kernel/auth/resource-aliases.ts):
   * decisions cached while it had none (a publish that created it) are void when a role denies by
   * a table name. Once per batch.
   */
  private noteNewTopics(): void {
    // The catalog's version, not its count: a topic deleted and another created leave the count as it was.
    const topics = this.messageLog.topicsVersion();
    if (topics === this.knownTopics) return;
    this.knownTopics = topics;
    if (this.engine.roles.deniesByTableName) this.rolesGeneration++;
  }

  /** Forgets a topic's retained message (an operator's delete); false when it had none. */
  clearRetained(topic: string): boolean {
    const entry = this.retained.get(topic);
    if (!entry) return false;
    // The checkpoint first passes the message's sequence, so a restart's replay cannot bring it back.
    this.checkpointRetained();
    this.retained.delete(topic);
    if (entry.sequence !== 0) this.stateWrite(this.state.remove(`retained/${topic}`));
    return true;
  }

  /** A retained message replaces the topic's; an empty one clears it and is not kept [MQTT-3.3.1-10, MQTT-3.3.1-11]. */
  private retain(message: CoreMessage): void {
    const stored = message.sequence !== 0;
    if (message.payload.length === 0) {
      if (this.retained.delete(message.topic) && stored) this.stateWrite(this.state.remove(`retained/${message.topic}`));
      return;
    }
    this.retained.set(message.topic, stored ? { sequence: message.sequence } : { sequence: 0, message });
    if (stored) this.stateWrite(this.state.put(`retained/${message.topic}`, message.sequence));
  }

  // ---- routing ---------------------------------------------------------------------------

  private routeStamp = 0;

  private route(message: CoreMessage): Matches {
    const matches = this.tree.match(message.topic);
    const direct = matches.direct;
    if (direct.length === 1) {
      if (this.includes(direct[0], message)) this.offerOne(matches, 0, message);
    } else if (direct.length > 1) {
      this.routeMany(matches, message);
    }
    for (const group of matches.groups) this.offerShared(group, message);
    return matches;
  }

  /**
   * A shared subscription's message goes to ONE member that can take it now (connected, keeping
   * up, room in its window). When none can, the group lags like a session: it keeps its position
   * in the log and is served from there when a member can take more (`catchUpGroup`).
   */
  private offerShared(group: SharedGroup<Session, SubscriptionOptions>, message: CoreMessage): boolean {
    let lag = this.groupLag.get(group);
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
      if (!lag) this.groupLag.set(group, lag = { lagging: true, position: message.sequence - 1 });
      lag.lagging = true;
      lag.position = message.sequence - 1;
      this.slowTargetSeen = true;
      return false;
    }
    this.deliverToMember(member, message);
    return true;
  }

  /** A shared group's message to the member picked for it (one that can take it now). */
  private deliverToMember(member: { subscriber: Session; options: SubscriptionOptions }, message: CoreMessage): void {
    const { subscriber: session, options } = member;
    if (!this.mayReceive(session, message.topic)) return;
    this.deliver(session, session.outlet!, message, (message.sequence === 0 ? 0 : Math.min(message.qos, options.qos)) as QoS,
      options.retainAsPublished && message.retain, idsOf(options), false);
  }

  /** A member that can take the message now, round robin; undefined when none can. */
  private pickTaker(group: SharedGroup<Session, SubscriptionOptions>, message: CoreMessage): { subscriber: Session; options: SubscriptionOptions } | undefined {
    let taker: { subscriber: Session; options: SubscriptionOptions } | undefined;
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

  /** A member of lagging groups can take more: those groups are served from the log. */
  private scheduleGroupsOf(session: Session): void {
    if (this.groupLag.size === 0 || session.subscriptionCount === 0) return;
    for (const filter of session.subscriptions.keys()) {
      const group = this.tree.sharedGroup(filter);
      if (group && this.groupLag.get(group)?.lagging) this.groupCatchUps.add(group);
    }
    if (this.groupCatchUps.size > 0) this.scheduleCatchUp(null);
  }

  /** Serves a lagging shared group from the log, from its position, while members can take. */
  private catchUpGroup(group: SharedGroup<Session, SubscriptionOptions>): void {
    const lag = this.groupLag.get(group);
    if (!lag || !lag.lagging || this.closed) return;
    if (group.members.length === 0) {
      this.groupLag.delete(group);
      return;
    }
    for (let looked = 0; looked < CATCH_UP_STEP;) {
      const chunk = this.messageLog.readFrom(lag.position, CATCH_UP_CHUNK);
      looked += CATCH_UP_CHUNK;
      for (const logged of chunk) {
        if (!topicMatches(group.filter, logged.topic)) {
          lag.position = logged.sequence;
          continue;
        }
        const message = this.recent.at(logged.sequence) ?? fromLogged(logged);
        const lifetime = remainingLifetime(message, this.engine.clock.now());
        if (lifetime === undefined || lifetime > 0) {
          const member = this.pickTaker(group, message);
          if (!member) return;
          this.deliverToMember(member, message);
        }
        lag.position = logged.sequence;
      }
      if (chunk.length < CATCH_UP_CHUNK) {
        // The log's end: live again (the router skips what it offers up to here).
        lag.position = Math.max(lag.position, this.routedUpTo);
        lag.lagging = false;
        return;
      }
    }
    this.groupCatchUps.add(group);
    this.scheduleCatchUp(null);
  }

  private includes(entry: DirectMatch<Session, SubscriptionOptions>, message: CoreMessage): boolean {
    return !(entry.options.noLocal && entry.subscriber.clientId === message.publisher);
  }

  /** Offers a message through one subscription of a match (`matches.direct[index]`). */
  private offerOne(matches: Matches, index: number, message: CoreMessage): void {
    if (!this.mayReceiveThrough(matches, index, message.topic)) return;
    const { subscriber: session, options } = matches.direct[index];
    this.offer(session, message, Math.min(message.qos, options.qos) as QoS, options.retainAsPublished && message.retain,
      idsOf(options));
  }

  /**
   * Several subscriptions match: a session with overlapping ones gets ONE copy at the highest
   * granted QoS carrying every matching subscription identifier (MQTT 5 §3.3.4).
   */
  private routeMany(matches: Matches, message: CoreMessage): void {
    const direct = matches.direct;
    const stamp = ++this.routeStamp;
    let repeated = false;
    for (const entry of direct) {
      const session = entry.subscriber;
      if (session.routeStamp === stamp) { repeated = true; break; }
      session.routeStamp = stamp;
    }
    if (!repeated) {
      for (let i = 0; i < direct.length; i++) if (this.includes(direct[i], message)) this.offerOne(matches, i, message);
      return;
    }
    const merged = new Map<Session, { index: number; qos: number; retain: boolean; ids: number[] | undefined }>();
    for (let i = 0; i < direct.length; i++) {
      const entry = direct[i];
      if (!this.includes(entry, message)) continue;
      const o = entry.options;
      let m = merged.get(entry.subscriber);
      if (!m) merged.set(entry.subscriber, m = { index: i, qos: 0, retain: false, ids: undefined });
      m.qos = Math.max(m.qos, Math.min(message.qos, o.qos));
      m.retain ||= o.retainAsPublished && message.retain;
      if (o.subscriptionIdentifier !== undefined) (m.ids ??= []).push(o.subscriptionIdentifier);
    }
    for (const [session, m] of merged) {
      if (!this.mayReceiveThrough(matches, m.index, message.topic)) continue;
      this.offer(session, message, m.qos as QoS, m.retain, m.ids);
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
    if (message.properties?.messageExpiryInterval !== undefined) {
      const lifetime = remainingLifetime(message, this.engine.clock.now());
      if (lifetime !== undefined && lifetime <= 0) return;
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

  private deliver(session: Session, outlet: SessionOutlet, message: CoreMessage, qos: QoS, retain: boolean, subscriptionIds: number[] | undefined, dup: boolean, packetId = 0): void {
    this.stats.messagesSent++;
    session.received++;
    session.lastReceivedAt = this.routeTime;
    if (qos > 0) {
      if (packetId === 0) packetId = session.allocatePacketId();
      const persistent = session.persistent;
      session.inflight.set(packetId, { sequence: message.sequence, qos, state: 'publish', message, retain, subscriptionIds, sent: !persistent });
      if (persistent) {
        // Sent once its in-flight entry is durable: after a crash, a message a client may have
        // seen is in flight (sent again with DUP, same packet id) [MQTT-4.4.0-1], never new.
        this.markDirty(session);
        this.sendAfterCommit.push(session, packetId);
        return;
      }
    }
    const delivery: Delivery = { message, qos, retain, packetId, dup, subscriptionIds };
    // Not sent (larger than the client accepts): as if delivered [MQTT-3.1.2-25].
    if (!outlet.deliver(delivery) && qos > 0) session.inflight.delete(packetId);
  }

  /** Sends the deliveries whose in-flight entries the commit just made durable. */
  private sendCommitted(waiting: Array<Session | number>): void {
    for (let i = 0; i < waiting.length; i += 2) {
      const session = waiting[i] as Session;
      const packetId = waiting[i + 1] as number;
      const entry = session.inflightCount > 0 ? session.inflight.get(packetId) : undefined;
      const outlet = session.outlet;
      if (!entry || entry.sent || entry.state !== 'publish' || !entry.message || !outlet) continue;
      entry.sent = true;
      const delivery: Delivery = { message: entry.message, qos: entry.qos, retain: entry.retain, packetId, dup: false, subscriptionIds: entry.subscriptionIds };
      if (!outlet.deliver(delivery)) {
        session.inflight.delete(packetId);
        this.markDirty(session);
      }
    }
  }

  // ---- sessions --------------------------------------------------------------------------

  /** The session of a client name, unless it has expired without a connection (it is gone then). */
  liveSession(clientName: string): Session | undefined {
    const session = this.sessions.get(clientName);
    if (session === undefined || (!session.online && this.expired(session, this.engine.clock.now()))) return undefined;
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
    this.engine.authorize(ctx, CONNECT_COMMAND, resource);
    const session = this.liveSession(clientName);
    if (session !== undefined && session.owner !== ctx.principal.account) this.engine.authorize(ctx, TAKEOVER_COMMAND, resource);
  }

  /** `authorizeSession`'s rule for a session found (the mq session commands, listings). */
  mayUseSession(ctx: CommandContext, session: Session): boolean {
    const resource = { kind: 'client' as const, clientName: session.clientId };
    return this.engine.allows(ctx, CONNECT_COMMAND, resource)
      && (session.owner === ctx.principal.account || this.engine.allows(ctx, TAKEOVER_COMMAND, resource));
  }

  /**
   * Attaches a connection to the client's session, creating it or (with cleanStart) replacing it.
   * Returns the session and whether one was present [MQTT-3.2.2-2]. The caller authorized it
   * (`authorizeSession`); a resumed session keeps its owner, a new one is the principal's.
   */
  openSession(clientId: string, principal: Principal, options: OpenSessionOptions, outlet: SessionOutlet): { session: Session; present: boolean } {
    let session = this.sessions.get(clientId);
    let present = false;
    if (session && !session.online && this.expired(session, this.engine.clock.now())) {
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
      if (!samePrincipal(session.principal, principal)) this.rolesGeneration++;
      session.principal = principal;
    } else {
      if (session) this.endSession(session);
      session = new Session(clientId, principal, options.kind);
      session.createdAt = this.engine.clock.now();
      session.position = this.routedUpTo;
      this.sessions.set(clientId, session);
    }
    session.expiryInterval = options.expiryInterval;
    session.outlet = outlet;
    session.disconnectedAt = null;
    this.offline.delete(session);
    if (present) {
      // Messages of QoS 0 published while it was away are not sent (QoS 1 and 2 are); until
      // `resume`, nothing is offered live.
      session.skipQos0UpTo = this.messageLog.lastSequence();
      session.lagging = true;
    }
    if (session.persistent) this.markDirty(session);
    else if (present) this.stateWrite(this.state.remove(`session/${clientId}`));
    return { session, present };
  }

  /** After the protocol's answer to the connect (CONNACK): in-flight messages again, then the backlog. */
  resume(session: Session): void {
    const outlet = session.outlet;
    if (!outlet) return;
    this.scheduleGroupsOf(session);
    if (!session.lagging) return;
    this.resendInflight(session, outlet);
    this.scheduleCatchUp(session);
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
        const logged = this.messageLog.read(entry.sequence);
        if (!logged) {
          session.inflight.delete(packetId);
          continue;
        }
        message = entry.message = fromLogged(logged);
      }
      this.stats.messagesSent++;
      if (!outlet.deliver({ message, qos: entry.qos, retain: entry.retain, packetId, dup: true, subscriptionIds: entry.subscriptionIds })) {
        // Larger than the client now accepts: as if delivered [MQTT-3.1.2-25].
        session.inflight.delete(packetId);
        if (session.persistent) this.markDirty(session);
      }
    }
  }

  /**
   * The connection of a session ended. `willNow`: it ended without a normal DISCONNECT (the will
   * is due, after its delay). The session ends now when its expiry interval is 0.
   */
  closeSession(session: Session, outlet: SessionOutlet, sendWill: boolean): void {
    if (session.outlet !== outlet) return; // taken over meanwhile
    this.detachOutlet(session);
    const now = this.engine.clock.now();
    session.disconnectedAt = now;
    if (!sendWill) {
      session.will = undefined;
    } else if (session.will) {
      if (session.will.delay === 0 || !session.persistent) this.publishWill(session);
      else session.willDueAt = now + session.will.delay * 1000;
    }
    if (!session.persistent) {
      this.endSession(session);
      return;
    }
    this.offline.add(session);
    this.markDirty(session);
  }

  private detachOutlet(session: Session): void {
    if (!session.lagging) session.position = Math.max(session.position, this.routedUpTo);
    session.lagging = false;
    session.outlet = null;
    session.retainedPending = undefined;
    this.catchUps.delete(session);
    // Messages in flight are kept for a persistent session (sent again on reconnect).
    if (session.inflightCount === 0) return;
    if (!session.persistent) session.inflight.clear();
    for (const [, entry] of session.inflight) entry.message = undefined;
  }

  /** Ends a session: its subscriptions and state go; a will still pending is sent now. */
  endSession(session: Session): void {
    if (session.will) this.publishWill(session);
    this.tree.removeAll(session);
    this.sessions.delete(session.clientId);
    this.offline.delete(session);
    this.dirty.delete(session);
    this.stateWrite(this.state.remove(`session/${session.clientId}`));
  }

  setWill(session: Session, will: WillMessage | undefined): void {
    session.will = will;
    session.willDueAt = undefined;
    if (session.persistent) this.markDirty(session);
  }

  private publishWill(session: Session): void {
    const will = session.will;
    session.will = undefined;
    session.willDueAt = undefined;
    if (!will) return;
    if (!this.mayPublish(session.principal, will.message.topic)) {
      this.log.info({ clientId: session.clientId, topic: will.message.topic }, 'will not published: the account may not publish to its topic');
      return;
    }
    will.message.createdAt = this.engine.clock.now();
    this.publish(will.message);
  }

  /** Expired sessions end; delayed wills whose time has come are sent. Runs every second. */
  sweep(now = this.engine.clock.now()): void {
    this.resumePublishers();
    this.checkpointRetained();
    this.checkpointPositions();
    if (this.lazyDirty.size > 0) {
      for (const session of this.lazyDirty) this.markDirty(session);
      this.lazyDirty.clear();
    }
    for (const group of this.groupLag.keys()) if (group.members.length === 0) this.groupLag.delete(group);
    for (const session of this.offline) {
      if (session.willDueAt !== undefined && session.willDueAt <= now) this.publishWill(session);
      if (this.expired(session, now)) this.endSession(session);
    }
  }

  /**
   * Live persistent sessions that receive nothing of QoS 1/2 are never written: now and then their
   * position (the router's) is, so a restart does not make them read the log from far back.
   */
  private checkpointPositions(): void {
    for (const session of this.sessions.values()) {
      if (session.online && session.persistent && !session.lagging && this.routedUpTo - session.storedPosition > POSITION_CHECKPOINT_GAP) {
        this.markDirty(session);
      }
    }
  }

  private expired(session: Session, now: number): boolean {
    return session.expiryInterval !== SESSION_NEVER_EXPIRES && session.disconnectedAt !== null
      && session.disconnectedAt + session.expiryInterval * 1000 <= now;
  }

  /** PUBACK / PUBCOMP: the message leaves the window. PUBREC: it waits for PUBCOMP. */
  acknowledge(session: Session, packetId: number, kind: 'puback' | 'pubrec' | 'pubcomp'): boolean {
    const entry = session.inflight.get(packetId);
    if (!entry) return false;
    if (kind === 'pubrec') {
      if (entry.qos !== 2) return false;
      entry.state = 'pubrel';
      entry.message = undefined;
      // PUBRELs are resent in the order their PUBRECs came [MQTT-4.6.0-3]: last in the map.
      session.inflight.delete(packetId);
      session.inflight.set(packetId, entry);
    } else {
      if (kind === 'puback' ? entry.qos !== 1 : entry.state !== 'pubrel') return false;
      session.inflight.delete(packetId);
      if (session.lagging || session.retainedPending) this.scheduleCatchUp(session);
      this.scheduleGroupsOf(session);
    }
    // A PUBACK is written with the session's next write or by the sweep: lost in a crash, its
    // QoS 1 message is only sent again with DUP (allowed). PUBREC and PUBCOMP are written now:
    // a client forgets a QoS 2 packet id after PUBCOMP, so a resend would be a new message to it.
    if (session.persistent) {
      if (kind === 'puback') this.lazyDirty.add(session);
      else this.markDirty(session);
    }
    return true;
  }

  /** The client's output drained: a session that lagged for it is served from the log. */
  writable(session: Session): void {
    if (session.lagging || session.retainedPending) this.scheduleCatchUp(session);
    this.scheduleGroupsOf(session);
  }

  // ---- subscriptions ---------------------------------------------------------------------

  /**
   * Adds (or replaces) a subscription and sends the retained messages it asks for. The caller
   * validated the filter and checked `maySubscribe`.
   */
  subscribe(session: Session, filter: string, options: SubscriptionOptions): boolean {
    // Messages the log holds now came before it: a catch-up does not give them to it. A replaced
    // subscription keeps its start: the flow of publications is not interrupted [MQTT-3.8.4-3].
    const replaced = session.subscriptions.get(filter);
    options.since = replaced ? replaced.since : this.messageLog.lastSequence();
    const existed = this.tree.add(session, filter, options);
    session.subscriptions.set(filter, options);
    if (session.online) this.scheduleGroupsOf(session);
    if (session.persistent) this.markDirty(session);
    return existed;
  }

  /**
   * Retained messages for a new subscription (retain handling 0: always, 1: only when new, 2: never;
   * none for shared subscriptions [MQTT-3.8.4-?, §4.8.2]). Call after the SUBACK is sent.
   */
  sendRetained(session: Session, filter: string, options: SubscriptionOptions, existed: boolean): void {
    if (options.retainHandling === 2 || (options.retainHandling === 1 && existed)) return;
    if (parseSharedFilter(filter) || !session.outlet) return;
    (session.retainedPending ??= []).push({ entries: this.retained.match(filter), options, held: undefined });
    this.drainRetained(session);
  }

  /**
   * Sends a session's pending retained messages while its window and output allow (like a
   * catch-up: `# ` over 100,000 retained topics does not fill the socket's buffer at once);
   * false when some are left for later (an acknowledgement or a drain goes on).
   */
  private drainRetained(session: Session): boolean {
    const outlet = session.outlet;
    const pending = session.retainedPending;
    if (!pending) return true;
    if (!outlet) {
      session.retainedPending = undefined;
      return true;
    }
    const now = this.engine.clock.now();
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
          const logged = this.messageLog.read(ref.sequence);
          if (!logged) continue;
          message = fromLogged(logged);
        }
        const lifetime = remainingLifetime(message, now);
        if (lifetime !== undefined && lifetime <= 0) continue;
        if (!this.mayReceive(session, topic)) continue;
        if (options.noLocal && message.publisher === session.clientId) continue;
        const qos = (ref.sequence === 0 ? 0 : Math.min(message.qos, options.qos)) as QoS;
        if (!outlet.writable() || (qos > 0 && session.inflight.size >= session.window)) {
          job.held = item;
          return false;
        }
        // Retained messages sent for a subscription carry the RETAIN flag [MQTT-3.3.1-8].
        this.deliver(session, outlet, message, qos, true,
          idsOf(options), false);
      }
      pending.shift();
    }
    session.retainedPending = undefined;
    return true;
  }


  unsubscribe(session: Session, filter: string): boolean {
    const existed = this.tree.remove(session, filter);
    session.subscriptions.delete(filter);
    if (session.persistent) this.markDirty(session);
    return existed;
  }

  // ---- sessions without a connection (MQ API sessions) -----------------------------------

  /**
   * Creates an MQ API session: a persistent session that never has a connection; its client
   * reads it (`readSession`) from its position in the log. A name in use by any session (MQTT or
   * MQ API) is CLIENT_NAME_IN_USE (14221): one registry of client names (docs/actions.md).
   */
  createApiSession(clientName: string, principal: Principal): Session {
    if (this.sessions.has(clientName) || this.engine.clientConnections.holder(clientName) !== undefined) {
      throw new EngineError('CLIENT_NAME_IN_USE', { clientName });
    }
    const session = new Session(clientName, principal, 'mqApi');
    session.createdAt = this.engine.clock.now();
    session.expiryInterval = SESSION_NEVER_EXPIRES;
    session.position = this.routedUpTo;
    session.disconnectedAt = this.engine.clock.now();
    this.sessions.set(clientName, session);
    this.offline.add(session);
    this.markDirty(session);
    return session;
  }

  /**
   * Moves a session without a connection in the log: `head` (from the first message), `tail`
   * (from now on), a message id (that message next) or `{ since }` (the first message created at
   * or after a canonical timestamp: create_ts never goes back along the log, so a binary search
   * over sequences finds it). Returns the new position.
   */
  repositionSession(session: Session, startFrom: 'head' | 'tail' | number | { since: string }): number {
    if (session.online) throw new EngineError('INVALID_PARAMETER', { param: 'clientName', reason: 'a connected MQTT session follows the router: it cannot be moved' });
    const last = this.messageLog.lastSequence();
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
        const at = this.messageLog.readFrom(mid - 1, 1)[0];
        if (at !== undefined && at.createTs < startFrom.since) low = at.sequence;
        else high = mid - 1;
      }
      position = low;
    }
    session.position = position;
    this.markDirty(session);
    return position;
  }

  /** Ends a session by name; a connected MQTT client holding it is disconnected (0x8E). */
  deleteSession(clientName: string): boolean {
    this.engine.clientConnections.holder(clientName)?.takeOver();
    const session = this.sessions.get(clientName);
    if (!session) return false;
    if (session.outlet) this.detachOutlet(session);
    session.will = undefined;
    this.endSession(session);
    return true;
  }

  /**
   * Reads up to `max` messages for a session without a connection, from its position, matching
   * its subscriptions (each from the time it was made) and what it may receive; its position moves
   * past them (stored in the next commit). Synchronous: two readers of one session never get the
   * same message. What it may receive is decided for `reader` (as for an MQTT client resuming
   * it): an account with `mq.takeover` reading another's session gets only what its own roles allow.
   */
  readSession(session: Session, max: number, reader: Principal): SessionRead[] {
    if (!samePrincipal(session.principal, reader)) {
      session.principal = reader;
      this.rolesGeneration++;
    }
    const out: SessionRead[] = [];
    const cache = new Map<string, SessionMatches | null>();
    const now = this.engine.clock.now();
    const end = this.messageLog.lastSequence();
    while (out.length < max && session.position < end) {
      const chunk = this.messageLog.readFrom(session.position, CATCH_UP_CHUNK);
      if (chunk.length === 0) break;
      for (const logged of chunk) {
        if (out.length >= max) break;
        session.position = logged.sequence;
        let matching = cache.get(logged.topic);
        if (matching === undefined) cache.set(logged.topic, matching = this.sessionMatches(session, logged.topic));
        if (matching === null) continue;
        let taken: SubscriptionOptions | undefined;
        let includeExpired = false;
        for (const o of matching.options) {
          if (o.noLocal && logged.publisher === session.clientId) continue;
          if (o.since !== undefined && logged.sequence <= o.since) continue;
          taken ??= o;
          includeExpired ||= o.includeExpired === true;
        }
        if (!taken) continue;
        const expired = hasExpired(logged, now);
        if (expired && !includeExpired) continue;
        out.push({ message: logged, expired, binaryFormat: taken.binaryFormat });
      }
    }
    session.received += out.length;
    if (out.length > 0) session.lastReceivedAt = now;
    this.markDirty(session);
    return out;
  }

  // ---- catching up from the log ----------------------------------------------------------

  private scheduleCatchUp(session: Session | null): void {
    if (session) this.catchUps.add(session);
    if (this.catchUpScheduled) return;
    this.catchUpScheduled = true;
    setImmediate(() => {
      this.catchUpScheduled = false;
      const sessions = [...this.catchUps];
      this.catchUps.clear();
      for (const s of sessions) this.catchUp(s);
      const groups = [...this.groupCatchUps];
      this.groupCatchUps.clear();
      for (const group of groups) this.catchUpGroup(group);
    });
  }

  /**
   * Serves a lagging session from the log, from its position, until its window or its output is
   * full (it stays lagging) or it reaches the end of the log (it is live again). Messages still
   * kept as routed are taken from memory (decoded and encoded once for every session); older
   * ones are read from the log.
   */
  private catchUp(session: Session): void {
    const outlet = session.outlet;
    if (outlet === null || this.closed) return;
    if (session.retainedPending && !this.drainRetained(session)) return;
    if (!session.lagging) return;
    // Served again: a slow subscriber, not a stuck one (its publishers keep waiting for it).
    session.lastProgress = performance.now();
    const now = this.engine.clock.now();
    for (let looked = 0; ; ) {
      if (looked >= CATCH_UP_STEP) {
        // A long way behind: the rest in later turns, so other clients are served meanwhile.
        this.scheduleCatchUp(session);
        return this.caughtUpSome(session);
      }
      let sequence = session.position + 1;
      if (sequence <= this.routedUpTo && this.recent.at(sequence)) {
        for (; sequence <= this.routedUpTo && looked < CATCH_UP_STEP; sequence++, looked++) {
          const message = this.recent.at(sequence);
          if (!message) break;
          if (!this.catchUpOne(session, outlet, message, null, now)) return this.caughtUpSome(session);
        }
        if (sequence > this.routedUpTo) break;
        continue;
      }
      const chunk = this.messageLog.readFrom(session.position, CATCH_UP_CHUNK);
      looked += CATCH_UP_CHUNK;
      this.messagesCaughtUpFromLog += chunk.length;
      for (const logged of chunk) {
        if (!this.catchUpOne(session, outlet, null, logged, now)) return this.caughtUpSome(session);
      }
      if (chunk.length < CATCH_UP_CHUNK) break;
    }
    // The log's end: live again (messages up to here that the router offers later are skipped).
    session.position = Math.max(session.position, this.routedUpTo);
    session.lagging = false;
    if (session.persistent) this.markDirty(session);
    this.resumePublishers();
  }

  /**
   * A lagging session was served some: its publishers go on once it is close behind (its
   * messages are still in the ring, cheap to send), not before, or they would outrun it for good.
   */
  private caughtUpSome(session: Session): void {
    if (this.routedUpTo - session.position <= this.resumeLag) this.resumePublishers();
  }

  /** One message of a catch-up (from memory or from the log); false when the session is full. */
  private catchUpOne(session: Session, outlet: SessionOutlet, kept: CoreMessage | null, logged: LoggedMessage | null, now: number): boolean {
    const topic = kept ? kept.topic : logged!.topic;
    const sequence = kept ? kept.sequence : logged!.sequence;
    // The match the router made, while no subscription changed since; else the tree's.
    let matches = kept ? this.recent.matchesAt(sequence) : undefined;
    if (matches === undefined || matches.generation !== this.tree.generation) matches = this.tree.match(topic);
    const publishedQos = kept ? kept.qos : (logged!.qos ?? 0);
    const publishedRetain = kept ? kept.retain : logged!.retain === true;
    const publisher = kept ? kept.publisher : (logged!.publisher ?? null);
    const direct = matches.direct;
    let through = -1;
    let qos = -1;
    let retain = false;
    let ids: number[] | undefined;
    for (let i = 0; i < direct.length; i++) {
      if (direct[i].subscriber !== session) continue;
      through = i;
      const o = direct[i].options;
      if (o.noLocal && publisher === session.clientId) continue;
      // Published before this subscription existed (a session resumed or lagging) [MQTT-3.8.4-?].
      if (o.since !== undefined && sequence <= o.since) continue;
      qos = Math.max(qos, Math.min(publishedQos, o.qos));
      retain ||= o.retainAsPublished && publishedRetain;
      if (o.subscriptionIdentifier !== undefined) (ids ??= []).push(o.subscriptionIdentifier);
    }
    if (qos >= 0 && !this.mayReceiveThrough(matches, through, topic)) qos = -1;
    if (qos < 0 || (qos === 0 && sequence <= session.skipQos0UpTo)) {
      session.position = sequence;
      return true;
    }
    if (!outlet.writable() || (qos > 0 && session.inflight.size >= session.window)) return false;
    session.position = sequence;
    const message = kept ?? this.recent.at(sequence) ?? fromLogged(logged!);
    const lifetime = remainingLifetime(message, now);
    if (lifetime !== undefined && lifetime <= 0) return true;
    this.deliver(session, outlet, message, qos as QoS, retain, ids, false);
    return true;
  }

  /**
   * The session's subscriptions (not shared ones) matching a topic it may receive; null: none.
   * Taken from the subscription tree's match of the topic, which the router caches.
   */
  private sessionMatches(session: Session, topic: string): SessionMatches | null {
    let options: SubscriptionOptions[] | undefined;
    for (const m of this.tree.match(topic).direct) if (m.subscriber === session) (options ??= []).push(m.options);
    if (options === undefined || !this.mayReceive(session, topic)) return null;
    return { options };
  }

  // ---- persistence -----------------------------------------------------------------------

  /** A state write nobody waits for: its failure (a closed storage) is logged, never unhandled. */
  private stateWrite(written: Promise<void>): void {
    written.catch((error: unknown) => this.log.error({ err: error }, 'message core state not stored'));
  }

  private flushScheduled = false;

  markDirty(session: Session): void {
    this.dirty.add(session);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flushDirty());
  }

  /** Writes changed persistent sessions (into the commit of this turn's appends). */
  private flushDirty(): void {
    this.flushScheduled = false;
    if (this.dirty.size === 0) return;
    for (const session of this.dirty) this.lazyDirty.delete(session);
    let written: Promise<void> | undefined;
    for (const session of this.dirty) {
      if (!session.persistent || this.sessions.get(session.clientId) !== session) continue;
      const stored = session.toStored();
      // A live session's position is the router's.
      if (session.online && !session.lagging) stored.position = Math.max(stored.position, this.routedUpTo);
      written = this.state.put(`session/${session.clientId}`, stored);
      session.storedPosition = stored.position;
      // One commit: its failure is reported once, below.
      written.catch(() => undefined);
    }
    this.dirty.clear();
    const waiting = this.sendAfterCommit;
    if (waiting.length === 0) return;
    this.sendAfterCommit = [];
    // Every put of this turn shares one commit: the last one's promise is the commit's.
    if (!written) return this.sendCommitted(waiting);
    written.then(() => this.sendCommitted(waiting), (error: unknown) => {
      this.log.error({ err: error }, 'session state could not be stored; deliveries wait for a reconnect');
    });
  }
}

/** The Subscription Identifiers a delivery through one subscription carries. */
function idsOf(options: SubscriptionOptions): number[] | undefined {
  return options.subscriptionIdentifier === undefined ? undefined : [options.subscriptionIdentifier];
}
