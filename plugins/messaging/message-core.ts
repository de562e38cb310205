/**
 * The message core: protocol-neutral publish, subscribe and sessions over the message log
 * (docs/message-core.md, docs/architecture.md "Message core layout"). MQTT connections and the mq
 * actions use it alike; protocols through its port (kernel/messaging/message-core-port.ts).
 *
 * publish → (authorized by the caller through `mayPublish`) → one append per event-loop turn →
 * once durable, the log's follower (routing.ts): retained store, counters, sessions → the
 * publisher is told. This class is a façade over one file per job:
 * routing.ts, catch-up.ts, subscriptions.ts, session-lifecycle.ts, api-sessions.ts,
 * flow-control.ts, core-state.ts, topic-decisions.ts.
 */
import type { Logger } from 'pino';
import type { Engine } from '../../kernel/engine';
import { newErrorReference } from '../../kernel/errors';
import type { Principal } from '../../kernel/auth/principal';
import type { CommandContext } from '../../kernel/bus/command';
import type { MessageLogPort } from '../../kernel/storage/message-log-port';
import type { AcknowledgementKind, MessageCorePort } from '../../kernel/messaging/message-core-port';
import type { OpenSessionOptions, PublishOrigin } from '../../kernel/messaging/session-types';
import { TopicActivity } from './topic-activity';
import { logTimestamp, toLogAppend, type CoreMessage } from './message';
import type { QoS } from '../../kernel/messaging/message';
import { PublishBatch } from './publish-batch';
import { logStoreFailure } from './store-failure-log';
import { RetainedStore } from './retained-store';
import { RecentRing } from './recent-ring';
import type { Session, SessionOutlet, SubscriptionOptions, WillMessage } from './session';
import { SubscriptionTree } from './subscription-tree';
import { TopicDecisions, type Matches } from './topic-decisions';
import { CoreState, type RetainedRef } from './core-state';
import { FlowControl } from './flow-control';
import { Router, type OwnAppend } from './routing';
import { CatchUp } from './catch-up';
import { Subscriptions } from './subscriptions';
import { SessionLifecycle } from './session-lifecycle';
import { ApiSessions, type SessionRead } from './api-sessions';
import { ClusterShares } from './cluster-shares';
import { ClusterSessions } from './cluster-sessions';

export { CONNECT_COMMAND, PUBLISH_COMMAND, SUBSCRIBE_COMMAND, TAKEOVER_COMMAND } from '../../kernel/messaging/session-types';
export type { OpenSessionOptions } from '../../kernel/messaging/session-types';
export type { SessionRead } from './api-sessions';

/** Counted by the protocols (clients' traffic, not the broker's own `$SYS` reports). */
export interface Statistics {
  messagesReceived: number;
  messagesSent: number;
  bytesReceived: number;
  bytesSent: number;
  publishDropped: number;
  /** By QoS (index 0, 1, 2), read by the metrics at scrape time: received from clients, sent to them, stored in the log (every append, whoever wrote it). */
  receivedByQos: [number, number, number];
  sentByQos: [number, number, number];
  storedByQos: [number, number, number];
}

export class MessageCore implements MessageCorePort {
  readonly log: Logger;
  readonly messageLog: MessageLogPort;
  readonly tree = new SubscriptionTree<Session, SubscriptionOptions>();
  readonly retained = new RetainedStore<RetainedRef>();
  readonly sessions = new Map<string, Session>();
  readonly stats: Statistics = {
    messagesReceived: 0, messagesSent: 0, bytesReceived: 0, bytesSent: 0, publishDropped: 0,
    receivedByQos: [0, 0, 0], sentByQos: [0, 0, 0], storedByQos: [0, 0, 0],
  };
  /** Engine clock ms when the core started (uptime). */
  readonly startedAt: number;
  /** Per-topic traffic while someone watches it (the explorer); costs nothing otherwise. */
  readonly activity: TopicActivity;
  /**
   * The messages routed last, with their matches (recent-ring.ts; `mq_ring_messages`,
   * `mq_ring_bytes`). A turn of a busy fan-in routes ~9,000 messages, and a subscriber that lags
   * by a few turns must still find them here: served from the log instead, each message is
   * decoded again, and the catch-up fell behind for good.
   */
  readonly recent: RecentRing<Matches>;
  /** How far behind the router a lagging session may be when its publishers resume (a quarter of the ring). */
  readonly resumeLag: number;
  readonly decisions: TopicDecisions;
  readonly state: CoreState;
  readonly flow: FlowControl;
  readonly router: Router;
  readonly catchUp: CatchUp;
  readonly subscriptions: Subscriptions;
  readonly lifecycle: SessionLifecycle;
  readonly apiSessions: ApiSessions;
  /** In a cluster: which node delivers each message of a shared group (null on a single node). */
  readonly shares: ClusterShares | null;
  /** In a cluster: which sessions this node owns (cluster-sessions.ts); undefined on a single node. */
  readonly cluster: ClusterSessions | undefined;
  closed = false;
  private readonly batch: PublishBatch<OwnAppend>;
  private timer?: NodeJS.Timeout;
  private unfollow?: () => void;

  constructor(readonly engine: Engine) {
    this.log = engine.log.child({ plugin: 'messaging' });
    this.startedAt = engine.clock.now();
    this.activity = new TopicActivity(engine.clock);
    this.messageLog = engine.need('storage').messageLog;
    this.recent = new RecentRing<Matches>(engine.settings.mq_ring_messages, engine.settings.mq_ring_bytes);
    this.resumeLag = this.recent.capacity / 4;
    this.decisions = new TopicDecisions(engine);
    this.state = new CoreState(this, this.messageLog.state, this.messageLog.localState);
    this.router = new Router(this);
    this.catchUp = new CatchUp(this);
    this.subscriptions = new Subscriptions(this);
    this.lifecycle = new SessionLifecycle(this);
    this.apiSessions = new ApiSessions(this);
    this.shares = ClusterShares.forEngine(engine, this.messageLog, this.log);
    if (this.shares !== null) {
      this.tree.groupSizeChanged = this.shares.groupSize;
      this.shares.oldestNeeded = () => this.catchUp.oldestGroupPosition(this.router.routedUpTo);
    }
    this.cluster = engine.has('sessionOwnership') ? new ClusterSessions(this, engine.need('sessionOwnership')) : undefined;
    const flow = this.flow = new FlowControl(() => this.batch.backlog);
    this.batch = new PublishBatch<OwnAppend>(
      this.messageLog,
      () => engine.clock.now(),
      (entries, messages) => this.router.expect(entries, messages, true),
      (own, origins) => {
        this.router.settled(own);
        if (origins) flow.published(own.slowTargetSeen, origins);
      },
      () => this.state.flushDirty(),
      (error, count) => {
        this.stats.publishDropped += count;
        logStoreFailure(this.log, error, { count }, 'messages could not be stored');
      },
      (origin) => flow.holdForTurn(origin),
      () => flow.releaseTurn(),
      (error) => this.log.error({ err: error, reference: newErrorReference() }, 'routing stored messages failed'),
    );
  }

  /** Loads persisted sessions and retained messages, follows the log; starts the expiry timer. */
  load(): void {
    this.router.routedUpTo = this.messageLog.lastSequence();
    const cluster = this.cluster;
    this.lifecycle.loaded(this.state.loadSessions(this.engine.clock.now(), cluster ? (clientId) => cluster.holds(clientId) : undefined));
    cluster?.loaded();
    this.state.loadRetained();
    this.shares?.load();
    this.unfollow = this.messageLog.follow((messages) => this.router.committed(messages));
    this.timer = setInterval(() => this.sweep(), 1000).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.state.closing();
    if (this.timer) clearInterval(this.timer);
    this.unfollow?.();
    this.shares?.close();
    const now = this.engine.clock.now();
    for (const session of this.sessions.values()) {
      if (session.online && session.persistent) {
        session.disconnectedAt = now;
        this.state.markDirty(session);
      }
    }
    this.state.flushDirty();
  }

  /** Resolves once every publish taken so far is durable (or failed) and its publisher told (shutdown). */
  published(): Promise<void> {
    return this.batch.settled();
  }

  /** Expired sessions end; delayed wills whose time has come are sent. Runs every second. */
  sweep(now = this.engine.clock.now()): void {
    // In a cluster, a node resumed from a pause fences before sessions expire or delayed wills go.
    this.fenced();
    this.flow.resumePublishers();
    this.state.checkpointRetained(this.router.routedUpTo);
    this.lifecycle.checkpointPositions();
    this.state.flushLazy();
    this.catchUp.dropEmptyGroups();
    this.shares?.retry();
    this.cluster?.sweep();
    this.lifecycle.sweep(now);
  }

  /** Sessions with a connection, and in all ($SYS figures, getMqOverview). */
  sessionCounts(): { connected: number; total: number } {
    let connected = 0;
    for (const session of this.sessions.values()) if (session.online) connected++;
    return { connected, total: this.sessions.size };
  }

  /** Messages the log holds (its last sequence: sequences are never reused). */
  storedMessages(): number {
    return this.messageLog.lastSequence();
  }

  /** Messages catch-ups of live sessions read from the log, because the ring no longer held them. */
  get messagesCaughtUpFromLog(): number {
    return this.catchUp.messagesFromLog;
  }

  // ---- authorization ---------------------------------------------------------------------

  get authorizationGeneration(): number {
    return this.decisions.generation;
  }

  /** Every cached topic decision is void (a topic lost its integration table's name). */
  invalidateDecisions(): void {
    this.decisions.generation++;
  }

  mayPublish(principal: Principal, topic: string): boolean {
    return this.decisions.mayPublish(principal, topic);
  }

  maySubscribe(principal: Principal, filter: string): boolean {
    return this.decisions.maySubscribe(principal, filter);
  }

  /** May the principal run `command` on the topic (the kernel's decision, as a boolean)? */
  allowed(principal: Principal, command: string, topic: string): boolean {
    return this.decisions.allowed(principal, command, topic);
  }

  authorizeSession(ctx: CommandContext, clientName: string): void {
    this.lifecycle.authorizeSession(ctx, clientName);
  }

  /** `authorizeSession`'s rule for a session found (the mq session commands, listings). */
  mayUseSession(ctx: CommandContext, session: Pick<Session, 'clientId' | 'owner'>): boolean {
    return this.lifecycle.mayUseSession(ctx, session);
  }

  // ---- publish ---------------------------------------------------------------------------

  /**
   * Publishes one message: stored in this turn's commit, then routed; `origin.stored(token)` is
   * called once it is durable. `$SYS/...` messages are never stored (docs/mqtt.md, `$SYS`): routed
   * at once. While the log's backlog is high, the publisher waits until it drains.
   */
  publish(message: CoreMessage, origin: PublishOrigin | null = null, token = 0): void {
    if (message.topic.charCodeAt(0) === 0x24 /* $ */ && message.topic.startsWith('$SYS/')) {
      message.sequence = 0;
      if (message.retain) this.state.retain(message);
      this.router.route(message);
      origin?.stored(token, true, message);
      return;
    }
    this.batch.add(message, origin, token);
    if (origin !== null && this.flow.overloaded) this.flow.pausePublisher(origin);
  }

  /** Publishes messages all or nothing, in one commit; resolves with their sequences once durable (and routed). */
  publishAll(messages: CoreMessage[]): Promise<number[]> {
    this.state.flushDirty();
    const createTs = logTimestamp(this.engine.clock.now());
    const entries = messages.map((m) => toLogAppend(m, createTs));
    const own = this.router.expect(entries, messages, false);
    return this.messageLog.append(entries).then((sequences) => {
      this.router.settled(own);
      for (let i = 0; i < messages.length; i++) messages[i].sequence = sequences[i];
      return sequences;
    }, (error: unknown) => {
      this.router.settled(own);
      throw error;
    });
  }

  /** Forgets a topic's retained message (an operator's delete); false when it had none. */
  clearRetained(topic: string): boolean {
    return this.state.clearRetained(topic, this.router.routedUpTo);
  }

  /** The sequence of the topic's retained message (undefined: none, or one never stored). */
  retainedSequence(topic: string): number | undefined {
    const sequence = this.retained.get(topic)?.sequence;
    return sequence !== undefined && sequence > 0 ? sequence : undefined;
  }

  /** Client names subscribed (directly or in a shared group) to filters matching the topic, sorted. */
  subscribersOf(topic: string): string[] {
    const matches = this.tree.match(topic);
    const names = new Set<string>();
    for (const match of matches.direct) names.add(match.subscriber.clientId);
    for (const group of matches.groups) for (const member of group.members) names.add(member.subscriber.clientId);
    return [...names].sort();
  }

  // ---- sessions with a connection ----------------------------------------------------------

  liveSession(clientName: string): Session | undefined {
    return this.lifecycle.liveSession(clientName);
  }

  fenced(): boolean {
    return this.cluster?.ownership.fenced === true;
  }

  claimSession(clientId: string, account?: string): Promise<boolean> | undefined {
    return this.cluster?.claim(clientId, account);
  }

  openSession(clientId: string, principal: Principal, options: OpenSessionOptions, outlet: SessionOutlet): { session: Session; present: boolean } {
    const opened = this.lifecycle.openSession(clientId, principal, options, outlet);
    this.cluster?.opened(opened.session, opened.present);
    return opened;
  }

  storeNewSession(session: Session, present: boolean, outlet: SessionOutlet): Promise<void> | null {
    // A resumed session is stored already: refusing it (and ending it) would lose what it holds.
    if (this.shares === null || present || !session.persistent) return null;
    return this.state.whenStored(session).then(() => undefined, (error: unknown) => {
      // Not stored (quorum lost): the client is refused, and its next attempt starts anew.
      if (this.sessions.get(session.clientId) === session && session.outlet === outlet) {
        this.lifecycle.detachOutlet(session);
        session.will = undefined;
        this.lifecycle.endSession(session);
      }
      throw error;
    });
  }

  resume(session: Session): void {
    this.lifecycle.resume(session);
  }

  setWill(session: Session, will: WillMessage | undefined): void {
    this.lifecycle.setWill(session, will);
  }

  setExpiryInterval(session: Session, seconds: number): void {
    session.expiryInterval = seconds;
  }

  closeSession(session: Session, outlet: SessionOutlet, sendWill: boolean): void {
    this.lifecycle.closeSession(session, outlet, sendWill);
  }

  /** The client's output drained: a session that lagged for it is served from the log. */
  writable(session: Session): void {
    if (session.lagging || session.retainedPending) this.catchUp.schedule(session);
    this.catchUp.scheduleGroupsOf(session);
  }

  hasPendingDeliveries(session: Session): boolean {
    return session.inflightCount > 0 || session.lagging;
  }

  // ---- subscriptions ---------------------------------------------------------------------

  atSubscriptionLimit(session: Session, filter: string): boolean {
    return this.subscriptions.atLimit(session, filter);
  }

  subscribe(session: Session, filter: string, options: SubscriptionOptions): boolean {
    return this.subscriptions.subscribe(session, filter, options);
  }

  sharedMembershipSettled(): Promise<void> | undefined {
    return this.shares?.announced();
  }

  sendRetained(session: Session, filter: string, options: SubscriptionOptions, existed: boolean): void {
    this.subscriptions.sendRetained(session, filter, options, existed);
  }

  unsubscribe(session: Session, filter: string): boolean {
    return this.subscriptions.unsubscribe(session, filter);
  }

  // ---- acknowledgements and QoS 2 receipts ---------------------------------------------------

  /** PUBACK / PUBCOMP: the message leaves the window. PUBREC: it waits for PUBCOMP. */
  acknowledge(session: Session, packetId: number, kind: AcknowledgementKind): boolean {
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
      if (session.lagging || session.retainedPending) this.catchUp.schedule(session);
      this.catchUp.scheduleGroupsOf(session);
    }
    // A PUBACK is written with the session's next write or by the sweep: lost in a crash, its
    // QoS 1 message is only sent again with DUP (allowed). PUBREC and PUBCOMP are written now:
    // a client forgets a QoS 2 packet id after PUBCOMP, so a resend would be a new message to it.
    if (session.persistent) {
      if (kind === 'puback') this.state.markLazy(session);
      else this.state.markDirty(session);
    }
    return true;
  }

  awaitsPubcomp(session: Session, packetId: number): boolean {
    return session.inflightCount > 0 && session.inflight.get(packetId)?.state === 'pubrel';
  }

  hasReceivedQos2(session: Session, packetId: number): boolean {
    return session.qos2Received.has(packetId);
  }

  /** Written with the message's commit: a restart still knows it was received [MQTT-4.3.3-10]. */
  receivedQos2(session: Session, packetId: number): void {
    session.qos2Received.add(packetId);
    if (session.persistent) this.state.markDirty(session);
  }

  releasedQos2(session: Session, packetId: number): boolean {
    const known = session.qos2Received.delete(packetId);
    if (known && session.persistent) this.state.markDirty(session);
    return known;
  }

  // ---- statistics ------------------------------------------------------------------------

  countPublished(session: Session, topic: string, now: number, qos: QoS): void {
    this.stats.messagesReceived++;
    this.stats.receivedByQos[qos]++;
    session.notePublished(topic, now);
  }

  countBytesReceived(bytes: number): void {
    this.stats.bytesReceived += bytes;
  }

  countBytesSent(bytes: number): void {
    this.stats.bytesSent += bytes;
  }

  // ---- MQ API sessions -------------------------------------------------------------------

  createApiSession(clientName: string, principal: Principal): Session {
    return this.apiSessions.create(clientName, principal);
  }

  repositionSession(session: Session, startFrom: 'head' | 'tail' | number | { since: string }): number {
    return this.apiSessions.reposition(session, startFrom);
  }

  deleteSession(clientName: string): Promise<void> | undefined {
    return this.apiSessions.delete(clientName);
  }

  readSession(session: Session, max: number, reader: Principal): SessionRead[] {
    return this.apiSessions.read(session, max, reader);
  }
}
