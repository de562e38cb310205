/**
 * What a protocol and the message core exchange about one client session: subscription options,
 * a delivery, the protocol's side of a session (SessionOutlet) and of a publisher (PublishOrigin),
 * a will, and the limits both sides hold to.
 */
import type { CoreMessage, QoS } from './message';

export interface SubscriptionOptions {
  qos: QoS;
  noLocal: boolean;
  retainAsPublished: boolean;
  retainHandling: 0 | 1 | 2;
  subscriptionIdentifier?: number;
  /** The log's last sequence when it was made: older messages are not for it (set by the core). */
  since?: number;
  /** MQ API sessions: expired messages are returned too (marked), and how binary values are written. */
  includeExpired?: boolean;
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
}

/** What the core hands a protocol to send one message to its client. */
export interface Delivery {
  message: CoreMessage;
  qos: QoS;
  retain: boolean;
  /** 0 for QoS 0. */
  packetId: number;
  dup: boolean;
  /** Identifiers of every subscription that matched (MQTT 5). */
  subscriptionIds?: number[];
}

/** The connection side of a session, implemented by each protocol. */
export interface SessionOutlet {
  /** Messages of QoS 1 and 2 the client accepts unacknowledged (its Receive Maximum). */
  readonly receiveMaximum: number;
  /** false while the client's unsent output is over its high-water mark. */
  writable(): boolean;
  /**
   * false when it was not sent (larger than the client accepts [MQTT-3.1.2-25]). `delivery` is
   * the core's one object, filled in again for the next delivery: read it during the call, keep
   * nothing of it (copy what must be kept).
   */
  deliver(delivery: Delivery): boolean;
  /** A QoS 2 message whose PUBREC came before a reconnect: PUBREL again [MQTT-4.4.0-1]. */
  resendPubrel(packetId: number): void;
}

/** Who is told when a message is durable (an MQTT connection acknowledging a packet id). */
export interface PublishOrigin {
  /**
   * false when pausing it would stop its own acknowledgements (it has messages in flight to it):
   * a client that publishes and subscribes is never paused for the subscribers it feeds.
   */
  mayPause(): boolean;
  /** Stop reading publishes (a target lags, or the log's backlog is high) until resumed. */
  pausePublishing(): void;
  resumePublishing(): void;
  /**
   * `ok`: stored; else it was not (the commit failed, or the log refused this message), and
   * `error` says why (STORAGE_FULL when the disk is full: kernel/errors.ts).
   */
  stored(token: number, ok: boolean, message: CoreMessage, error?: unknown): void;
  /** Telling it threw: it alone ends (an MQTT connection closes), the turn's other publishers are still told. */
  fail(error: unknown, during: string): void;
}

/** A will message, published when the connection ends without a normal DISCONNECT. */
export interface WillMessage {
  message: CoreMessage;
  /** Seconds (MQTT 5 Will Delay Interval). */
  delay: number;
}

export interface OpenSessionOptions {
  cleanStart: boolean;
  /** Seconds; 0 ends the session with its connection; SESSION_NEVER_EXPIRES keeps it. */
  expiryInterval: number;
  kind: 'mqtt' | 'mqApi';
  /** The connection's facts the explorer shows (describeSessions); a protocol gives what it knows. */
  connection?: ConnectionFacts;
}

/** Where and how a client is connected (kept with the session while connected, not stored). */
export interface ConnectionFacts {
  /** The peer's address ('' when unknown). */
  address: string;
  /** MQTT protocol level: 3 (3.1), 4 (3.1.1), 5. */
  protocolVersion: number;
  /** The keep alive in force, in seconds (0: none). */
  keepAliveSeconds: number;
}

/** The largest Subscription Identifier (a variable byte integer) [MQTT-3.8.2.1.2]. */
export const MAX_SUBSCRIPTION_IDENTIFIER = 268_435_455;
/** Subscriptions one session may hold (a flood of SUBSCRIBEs pins no memory). */
export const MAX_SUBSCRIPTIONS = 10_000;
/** The never-expires value of Session Expiry Interval. */
export const SESSION_NEVER_EXPIRES = 0xffffffff;

/** Using a client name (resource `client:<name>`): an MQTT CONNECT, the mq session commands. */
export const CONNECT_COMMAND = 'mq.connect';
/** Using a session another account owns, connected or not, also needs this on its client name. */
export const TAKEOVER_COMMAND = 'mq.takeover';
export const PUBLISH_COMMAND = 'mq.publish';
export const SUBSCRIBE_COMMAND = 'mq.subscribe';
