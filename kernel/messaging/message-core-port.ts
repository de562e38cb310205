/**
 * The message core's port: the narrow, typed API a protocol (the MQTT broker, a plugin of a
 * third party) uses to publish, hold client sessions, subscribe, acknowledge and count. The
 * messaging plugin implements it and provides it as the service `messageCore`
 * (`engine.need('messageCore')`); a protocol imports nothing of that plugin (docs/architecture.md,
 * "Message core layout").
 *
 * A session is handed out as an opaque SessionHandle: what a session holds (its in-flight map,
 * QoS 2 receipts, position in the log) changes only through the core, which stores it.
 */
import type { Principal } from '../auth/principal';
import type { CommandContext } from '../bus/command';
import type { CoreMessage, QoS } from './message';
import type { OpenSessionOptions, PublishOrigin, SessionOutlet, SubscriptionOptions, WillMessage } from './session-types';

/** A client session as a protocol holds it: its client name; everything else is the core's. */
export interface SessionHandle {
  readonly clientId: string;
}

/** The acknowledgements of a delivery at QoS 1 (PUBACK) and QoS 2 (PUBREC, then PUBCOMP). */
export type AcknowledgementKind = 'puback' | 'pubrec' | 'pubcomp';

export interface MessageCorePort {
  // ---- authorization (the kernel decides; a protocol may cache while the generation holds) ----
  /** Changes whenever a cached publish or subscribe decision may no longer hold. */
  readonly authorizationGeneration: number;
  mayPublish(principal: Principal, topic: string): boolean;
  /** May the principal subscribe to the filter (the filter part of a shared one)? */
  maySubscribe(principal: Principal, filter: string): boolean;
  /** `mq.connect` on the client name, and `mq.takeover` when another account owns its session; throws NOT_AUTHORIZED. */
  authorizeSession(ctx: CommandContext, clientName: string): void;

  // ---- publish ----
  /**
   * Publishes one message: stored in this turn's commit; `origin.stored(token, ok, message)` is
   * called once it is durable (and routed). While the log's backlog is high, `origin` is paused.
   */
  publish(message: CoreMessage, origin?: PublishOrigin | null, token?: number): void;
  /**
   * Resolves once every message published so far is durable (or its commit failed) and its
   * origin was told: a protocol draining at shutdown acknowledges what it took, then disconnects.
   */
  published(): Promise<void>;

  // ---- sessions ----
  /**
   * In a cluster, a CONNECT first claims its client id for this node (docs/cluster.md, "Sessions"):
   * the promise resolves once the claim is applied, true when this node owns the session then
   * (false: a later claim of another node won), and rejects CLUSTER_UNAVAILABLE when the claim
   * cannot be stored. undefined: nothing to wait for (one node, or this node owns it already).
   * `account`: the logged-in account, kept in the claim for the cluster's listings of sessions.
   */
  claimSession(clientId: string, account?: string): Promise<boolean> | undefined;
  /**
   * In a cluster: this node is fenced (cut off from the stream, docs/cluster.md "Self-fencing"); a
   * CONNECT is refused (0x88 / 0x03). Asking checks the node's lease first: a node that no longer
   * holds it (resumed from a pause) fences at once, closing every connection. One clock read.
   */
  fenced(): boolean;
  /** Attaches a connection to the client's session, created or (cleanStart) replaced; `present`: one was resumed. */
  openSession(clientId: string, principal: Principal, options: OpenSessionOptions, outlet: SessionOutlet): { session: SessionHandle; present: boolean };
  /**
   * In a cluster, a NEW persistent session is stored before the protocol confirms it (CONNACK):
   * resolves once it is; rejects when the cluster cannot store it (the session is then ended, so
   * the client's next attempt is a new session again). Null where nothing needs waiting for (one
   * node, a clean session, a session resumed: `present`, as openSession answered).
   */
  storeNewSession(session: SessionHandle, present: boolean, outlet: SessionOutlet): Promise<void> | null;
  /** After the protocol's answer to the connect: in-flight messages again, then what the session missed. */
  resume(session: SessionHandle): void;
  setWill(session: SessionHandle, will: WillMessage | undefined): void;
  /** A new Session Expiry Interval (MQTT 5 DISCONNECT), in seconds. */
  setExpiryInterval(session: SessionHandle, seconds: number): void;
  /** The connection ended; `sendWill`: without a normal DISCONNECT (the will is due). */
  closeSession(session: SessionHandle, outlet: SessionOutlet, sendWill: boolean): void;
  /** The client's output drained: what waited for it is served. */
  writable(session: SessionHandle): void;
  /** Messages are in flight to it or wait for it (its publishing is then never paused). */
  hasPendingDeliveries(session: SessionHandle): boolean;

  // ---- subscriptions ----
  /** The session holds as many filters as it may, and `filter` is not one of them. */
  atSubscriptionLimit(session: SessionHandle, filter: string): boolean;
  /** Adds or replaces a subscription (the caller checked the filter and `maySubscribe`); true when it existed. */
  subscribe(session: SessionHandle, filter: string, options: SubscriptionOptions): boolean;
  /**
   * In a cluster, a shared subscription counts on this node only once its node's membership
   * announcement is applied from the stream (docs/cluster.md, "Shared subscriptions"): resolves
   * then (it never rejects), so that the protocol's answer (SUBACK) covers every message
   * published after it. undefined: nothing to wait for (one node, or no group changed size).
   */
  sharedMembershipSettled(): Promise<void> | undefined;
  /** Sends the retained messages a new subscription asks for (after the protocol's answer). */
  sendRetained(session: SessionHandle, filter: string, options: SubscriptionOptions, existed: boolean): void;
  /** false when there was no such subscription. */
  unsubscribe(session: SessionHandle, filter: string): boolean;

  // ---- deliveries to the client ----
  /** false when no delivery in flight answers it. */
  acknowledge(session: SessionHandle, packetId: number, kind: AcknowledgementKind): boolean;
  /** A QoS 2 delivery whose PUBREC came (its PUBREL is sent, PUBCOMP awaited). */
  awaitsPubcomp(session: SessionHandle, packetId: number): boolean;

  // ---- QoS 2 messages from the client ----
  /** Stored and acknowledged (PUBREC), and not yet released by PUBREL. */
  hasReceivedQos2(session: SessionHandle, packetId: number): boolean;
  /** A QoS 2 message was taken: kept until PUBREL, durable with the message's commit. */
  receivedQos2(session: SessionHandle, packetId: number): void;
  /** PUBREL: the packet id may be used again; false when it was unknown. */
  releasedQos2(session: SessionHandle, packetId: number): boolean;

  // ---- topics ----
  /** Client names subscribed (directly or in a shared group) to filters matching the topic, sorted. */
  subscribersOf(topic: string): string[];

  // ---- statistics (clients' traffic; `$SYS` reports) ----
  /** A message the session's client published (counted before authorization, as received). */
  countPublished(session: SessionHandle, topic: string, now: number, qos: QoS): void;
  countBytesReceived(bytes: number): void;
  countBytesSent(bytes: number): void;
}

declare module '../services' {
  interface EngineServices {
    /** The message core, as protocols use it (provided by the messaging plugin). */
    messageCore: MessageCorePort;
  }
}
