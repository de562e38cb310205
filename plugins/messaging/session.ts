/**
 * One client session (an MQTT client identifier or an MQ API client name: one registry): its
 * subscriptions, its position in the message log, its in-flight map, and the outlet of the
 * connection attached to it (none while offline).
 *
 * Position: the session has been offered every message with a sequence at or below it. While the
 * session is live (attached, not lagging) the router offers it messages as they become durable
 * and its position is implicitly the router's; when it cannot take more (its in-flight window is
 * full, or its connection's output is over the high-water mark) it becomes lagging at the first
 * message it could not take, and is served later by reading the log from its position, so nothing
 * waits in memory beyond the window. An offline session keeps its position the same way.
 */
import type { Principal } from '../../kernel/auth/principal';
import { fromSmallTime, smallTime } from '../../kernel/clock';
import type { CoreMessage, QoS } from './message';
import type { ConnectionFacts, SessionOutlet, SubscriptionOptions, WillMessage } from '../../kernel/messaging/session-types';

export type { Delivery, SessionOutlet, SubscriptionOptions, WillMessage } from '../../kernel/messaging/session-types';
export { MAX_SUBSCRIPTION_IDENTIFIER, MAX_SUBSCRIPTIONS, SESSION_NEVER_EXPIRES } from '../../kernel/messaging/session-types';

export type InflightState = 'publish' | 'pubrel';

export interface InflightEntry {
  sequence: number;
  qos: QoS;
  state: InflightState;
  /** Held while the broker runs; read back from the log after a restart. */
  message?: CoreMessage;
  retain: boolean;
  subscriptionIds?: number[];
  /** Written to the client (false while it waits for its entry to be durable, see MessageCore.deliver). */
  sent: boolean;
}

/** The session as the log's state store keeps it (`session/<clientId>`). */
export interface StoredSession {
  clientId: string;
  /**
   * The account the session belongs to (docs/mqtt.md "Session ownership"). Records written
   * before ownership was kept apart hold here the account of the session's last connection,
   * which is taken as its owner (docs/decisions.md).
   */
  owner: string;
  /** The account of the session's last connection, when it is not the owner (a takeover). */
  account?: string;
  /** The roles of the session's last connection. */
  roles: string[];
  kind: 'mqtt' | 'mqApi';
  /** Seconds the session outlives its connection (0xFFFFFFFF: never expires). */
  expiryInterval: number;
  subscriptions: Array<[string, SubscriptionOptions]>;
  position: number;
  /** [packetId, sequence, qos, state, retain, subscriptionIds] */
  inflight: Array<[number, number, QoS, InflightState, boolean, number[] | null]>;
  /** QoS 2 packet ids received (PUBREC sent) whose PUBREL has not come. */
  qos2Received: number[];
  nextPacketId: number;
  /** Engine clock ms of the disconnect (null: connected when last written). */
  disconnectedAt: number | null;
  /** The will of the last connection, while it may still be sent (MQTT 5 Will Delay Interval). */
  will?: StoredWill | null;
}

/** A will as stored: its message (payload bytes as published) and when it is due. */
export interface StoredWill {
  topic: string;
  payload: Buffer;
  qos: QoS;
  retain: boolean;
  properties: CoreMessage['properties'] | null;
  publisher: string | null;
  delay: number;
  /** Engine clock ms (null: the connection was still open when last written). */
  dueAt: number | null;
}

/** The most QoS 1/2 messages the broker keeps in flight to one client, whatever it accepts. */
export const MAX_WINDOW = 1024;

/** Published topics a session remembers for describeMqSessions. */
export const PUBLISHED_TOPICS_KEPT = 1000;

/**
 * What a session needs only once it does something (publishes, receives, lags, holds a will or
 * QoS 2 state, gets retained messages): created on first write, so an idle session carries none
 * of these fields, and no number boxes for the times among them.
 */
class SessionExtras {
  qos2Received?: Set<number>;
  receiveDecisions?: Map<string, boolean>;
  receiveDecisionsGeneration = -1;
  /** -Infinity: never served while lagging, so never a slow target (performance.now() starts near 0). */
  lastProgress = -Infinity;
  will?: WillMessage;
  willDueAt?: number;
  skipQos0UpTo = 0;
  retainedPending?: RetainedPending[];
  publishedTopics?: Set<string>;
  published = 0;
  received = 0;
  lastPublishedAt = 0;
  lastReceivedAt = 0;
  storedPosition = 0;
}
/** The defaults, read while a session has no extras of its own (never written). */
const NO_EXTRAS: Readonly<SessionExtras> = Object.freeze(new SessionExtras());

type RetainedPending = { entries: Iterator<[string, { sequence: number; message?: CoreMessage }]>; options: SubscriptionOptions; held: IteratorResult<[string, { sequence: number; message?: CoreMessage }]> | undefined };

export class Session {
  // Created on first use: an idle client costs no empty maps (thousands of connections).
  private subscriptionMap?: Map<string, SubscriptionOptions>;
  private inflightMap?: Map<number, InflightEntry>;
  private extra?: SessionExtras;

  private get extras(): SessionExtras {
    return (this.extra ??= new SessionExtras());
  }

  private get readExtras(): Readonly<SessionExtras> {
    return this.extra ?? NO_EXTRAS;
  }

  /** Filter (as subscribed, `$share/...` included) → options. */
  get subscriptions(): Map<string, SubscriptionOptions> {
    return (this.subscriptionMap ??= new Map());
  }

  /** Packet id → message delivered at QoS 1 or 2 and not yet acknowledged. */
  get inflight(): Map<number, InflightEntry> {
    return (this.inflightMap ??= new Map());
  }

  /** QoS 2 packet ids received (PUBREC sent) whose PUBREL has not come. */
  get qos2Received(): Set<number> {
    return (this.extras.qos2Received ??= new Set());
  }

  /** Topics this session may or may not receive, decided once per roles generation. */
  get receiveDecisions(): Map<string, boolean> {
    return (this.extras.receiveDecisions ??= new Map());
  }

  /** See the file comment. */
  position = 0;
  lagging = false;
  outlet: SessionOutlet | null = null;
  /** Seconds the session outlives its connection; 0: it ends with it. */
  expiryInterval = 0;
  disconnectedAt: number | null = null;
  /** The last connection (engine ms it began; what the protocol told of it): the explorer's client details. */
  connection?: { since: number; facts?: ConnectionFacts };
  /** The router's mark, to find a session matched by several subscriptions of one message. */
  routeStamp = 0;
  private nextPacketId = 1;
  /** createdAt as a kernel `smallTime` (no number box per session). */
  private createdAtOffset?: number;

  /**
   * performance.now() when it began to lag or was last served while lagging (a slow target slows
   * publishers, a stuck one does not): real elapsed time, not engine time, since it paces I/O.
   */
  get lastProgress(): number { return this.readExtras.lastProgress; }
  set lastProgress(value: number) { this.extras.lastProgress = value; }
  get will(): WillMessage | undefined { return this.readExtras.will; }
  set will(value: WillMessage | undefined) { if (value !== undefined || this.extra) this.extras.will = value; }
  /** When the will's delay ends (engine clock ms), once the connection is gone. */
  get willDueAt(): number | undefined { return this.readExtras.willDueAt; }
  set willDueAt(value: number | undefined) { if (value !== undefined || this.extra) this.extras.willDueAt = value; }
  /** QoS 0 messages up to this sequence were published while the session was offline: not sent. */
  get skipQos0UpTo(): number { return this.readExtras.skipQos0UpTo; }
  set skipQos0UpTo(value: number) { this.extras.skipQos0UpTo = value; }
  get receiveDecisionsGeneration(): number { return this.readExtras.receiveDecisionsGeneration; }
  set receiveDecisionsGeneration(value: number) { this.extras.receiveDecisionsGeneration = value; }
  /** Retained messages still to send for new subscriptions (sent as the window and output allow). */
  get retainedPending(): RetainedPending[] | undefined { return this.readExtras.retainedPending; }
  set retainedPending(value: RetainedPending[] | undefined) { if (value !== undefined || this.extra) this.extras.retainedPending = value; }
  /** Topics it published to (describeMqSessions; at most PUBLISHED_TOPICS_KEPT). */
  get publishedTopics(): Set<string> | undefined { return this.readExtras.publishedTopics; }
  set publishedTopics(value: Set<string> | undefined) { if (value !== undefined || this.extra) this.extras.publishedTopics = value; }
  /** Statistics (describeMqSessions): messages published and received, and when last. */
  get published(): number { return this.readExtras.published; }
  set published(value: number) { this.extras.published = value; }
  get received(): number { return this.readExtras.received; }
  set received(value: number) { this.extras.received = value; }
  get lastPublishedAt(): number { return this.readExtras.lastPublishedAt; }
  set lastPublishedAt(value: number) { this.extras.lastPublishedAt = value; }
  get lastReceivedAt(): number { return this.readExtras.lastReceivedAt; }
  set lastReceivedAt(value: number) { this.extras.lastReceivedAt = value; }
  /** The position last written to the state store. */
  get storedPosition(): number { return this.readExtras.storedPosition; }
  set storedPosition(value: number) { this.extras.storedPosition = value; }
  /** Engine clock ms when the session was created (or loaded). */
  get createdAt(): number { return this.createdAtOffset === undefined ? 0 : fromSmallTime(this.createdAtOffset); }
  set createdAt(value: number) { this.createdAtOffset = smallTime(value); }

  /**
   * The account the session belongs to: the one that created it. Another account resumes it,
   * connected or not, only with `mq.takeover`, and does not become its owner (MessageCore.mayUseSession).
   */
  readonly owner: string;

  constructor(
    readonly clientId: string,
    /** The principal of its connection (the last one while offline): what it may receive is decided for it. */
    public principal: Principal,
    readonly kind: 'mqtt' | 'mqApi',
    owner = principal.account,
  ) {
    this.owner = owner;
  }

  /** Subscriptions (without creating the map). */
  get subscriptionCount(): number {
    return this.subscriptionMap?.size ?? 0;
  }

  /** Messages in flight (without creating the map). */
  get inflightCount(): number {
    return this.inflightMap?.size ?? 0;
  }

  /** Counts a message it published (statistics). */
  notePublished(topic: string, now: number): void {
    this.published++;
    this.lastPublishedAt = now;
    const topics = (this.extras.publishedTopics ??= new Set());
    if (topics.size < PUBLISHED_TOPICS_KEPT) topics.add(topic);
  }

  get persistent(): boolean {
    return this.expiryInterval > 0;
  }

  get online(): boolean {
    return this.outlet !== null;
  }

  /** How many QoS 1/2 messages may be in flight now. */
  get window(): number {
    const outlet = this.outlet;
    return outlet ? Math.min(outlet.receiveMaximum, MAX_WINDOW) : 0;
  }

  /** A packet identifier not in flight (1..65535) [MQTT-2.2.1-3]. */
  allocatePacketId(): number {
    for (;;) {
      const id = this.nextPacketId;
      this.nextPacketId = id === 65535 ? 1 : id + 1;
      if (!this.inflight.has(id)) return id;
    }
  }

  toStored(): StoredSession {
    const inflight: StoredSession['inflight'] = [];
    for (const [packetId, entry] of this.inflightMap ?? []) {
      inflight.push([packetId, entry.sequence, entry.qos, entry.state, entry.retain, entry.subscriptionIds ?? null]);
    }
    return {
      clientId: this.clientId,
      owner: this.owner,
      ...(this.principal.account !== this.owner ? { account: this.principal.account } : {}),
      roles: [...this.principal.roles],
      kind: this.kind,
      expiryInterval: this.expiryInterval,
      subscriptions: [...(this.subscriptionMap ?? [])],
      position: this.position,
      inflight,
      qos2Received: [...(this.extra?.qos2Received ?? [])],
      nextPacketId: this.nextPacketId,
      disconnectedAt: this.disconnectedAt,
      will: this.will ? {
        topic: this.will.message.topic, payload: this.will.message.payload, qos: this.will.message.qos, retain: this.will.message.retain,
        properties: this.will.message.properties ?? null, publisher: this.will.message.publisher, delay: this.will.delay, dueAt: this.willDueAt ?? null,
      } : null,
    };
  }

  static fromStored(stored: StoredSession): Session {
    const session = new Session(stored.clientId, { account: stored.account ?? stored.owner, roles: stored.roles }, stored.kind, stored.owner);
    session.expiryInterval = stored.expiryInterval;
    for (const [filter, options] of stored.subscriptions) session.subscriptions.set(filter, options);
    session.position = stored.position;
    for (const [packetId, sequence, qos, state, retain, subscriptionIds] of stored.inflight) {
      // Whether it reached the client before the restart is unknown: sent again with DUP.
      session.inflight.set(packetId, { sequence, qos, state, retain, subscriptionIds: subscriptionIds ?? undefined, sent: true });
    }
    for (const packetId of stored.qos2Received) session.qos2Received.add(packetId);
    session.nextPacketId = stored.nextPacketId;
    session.disconnectedAt = stored.disconnectedAt;
    const will = stored.will;
    if (will) {
      session.will = {
        delay: will.delay,
        message: {
          topic: will.topic, payload: Buffer.from(will.payload), qos: will.qos, retain: will.retain, properties: will.properties ?? undefined,
          publisher: will.publisher, createdAt: 0, sequence: 0, wire: undefined, wireForm: 0,
        },
      };
      session.willDueAt = will.dueAt ?? undefined;
    }
    return session;
  }
}
