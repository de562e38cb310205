/**
 * A connection's fields that only some connections need, kept apart (`extra`) so an idle
 * connection carries none of them, and its flags packed in one small integer: the base of
 * Connection (connection.ts), which adds the connection's behaviour.
 */
import type { Packet } from 'mqtt-packet';
import type { TurnOutput } from './turn-output';

/**
 * What only some connections need (MQTT 5 limits, topic aliases, QoS 1/2 counters, a token
 * login, packets waiting behind CONNECT): created on first write, so an idle 3.1.1 connection
 * does not carry these fields.
 */
export class ConnectionExtras {
  apiSessionId?: string;
  clientMaxPacketSize = Infinity;
  sessionExpiryInterval = 0;
  receiveMaximum = 65535;
  clientTopicAliasMaximum = 0;
  outboundAliases?: Map<string, number>;
  inboundAliases?: Map<number, string>;
  publishDecisions?: Map<string, boolean>;
  qos2Storing?: Set<number>;
  /** QoS 2 packet ids received on this connection whose PUBREL has not come (its Receive Maximum counts them). */
  qos2AwaitingRelease?: Set<number>;
  publishDecisionsGeneration = -1;
  inboundAliasBytes = 0;
  unacknowledged = 0;
  largestDelivery = 0;
  /** Output the client had not taken at this turn's first write (see connection.ts DELIVERY_HIGH_WATER). */
  unsentBeforeTurn = 0;
  pending?: Packet[];
  /** The start of a PUBLISH the last chunk ended with (wire/simple-publish.ts `isCutPublish`). */
  cutPublish?: Buffer;
  /**
   * Answers to PUBLISHes refused at once, waiting behind the messages received before them that
   * are still being stored [MQTT-4.6.0-2, MQTT-4.6.0-3]; each with how many more of those stored
   * answers it waits for after the answer before it (connection.ts `writeAnswerInOrder`).
   */
  answersBehindStored?: Array<{ bytes: Buffer; waitFor: number }>;
  /** Packet ids of this turn's success PUBACKs, written together (connection.ts `writePuback`). */
  pubacks?: number[];
  /** This turn's output, gathered into one chunk (turn-output.ts). */
  output?: TurnOutput;
}
/** The defaults, read while a connection has no extras of its own (never written). */
export const NO_EXTRAS: Readonly<ConnectionExtras> = Object.freeze(new ConnectionExtras());

// Flags of one Smi field (one field instead of six booleans per connection).
export const SEND_WILL_ON_CLOSE = 1;
export const CONNACK_SENT = 2;
export const GATHERING = 4;
export const DRAINING = 8;
export const PAUSED_BY_CORE = 16;
export const WATCHING_DRAIN = 32;
/** Shutdown: nothing more is read (the broker drains: what was taken is acknowledged, then DISCONNECT). */
export const HELD_FOR_SHUTDOWN = 256;
/** Two bits above the flags: the transport (TRANSPORTS index) the connection came on. */
const TRANSPORT_SHIFT = 6;

/** The transports, in the order of Broker.openByTransport (metrics label `transport`). */
export const TRANSPORTS = ['tcp', 'tls', 'ws', 'wss'] as const;
export type TransportIndex = 0 | 1 | 2 | 3;

/** The fields of a connection (see the file comment); Connection extends it. */
export abstract class ConnectionFields {
  protected flags = SEND_WILL_ON_CLOSE;
  protected extra?: ConnectionExtras;

  protected get extras(): ConnectionExtras {
    return (this.extra ??= new ConnectionExtras());
  }

  protected get readExtras(): Readonly<ConnectionExtras> {
    return this.extra ?? NO_EXTRAS;
  }

  /** The JSON-action session whose token this connection logged in with (closed when it ends). */
  get apiSessionId(): string | undefined { return this.readExtras.apiSessionId; }
  set apiSessionId(value: string | undefined) { this.extras.apiSessionId = value; }
  /** What the client accepts (MQTT 5 Maximum Packet Size); packets larger are not sent [MQTT-3.1.2-25]. */
  get clientMaxPacketSize(): number { return this.readExtras.clientMaxPacketSize; }
  set clientMaxPacketSize(value: number) { this.extras.clientMaxPacketSize = value; }
  /** MQTT 5 Session Expiry Interval the CONNECT asked for (a DISCONNECT may not raise it from 0) [MQTT-3.14.2-2]. */
  get sessionExpiryInterval(): number { return this.readExtras.sessionExpiryInterval; }
  set sessionExpiryInterval(value: number) { this.extras.sessionExpiryInterval = value; }
  /** The client's Receive Maximum (MQTT 5; 3.1.1 clients get the broker's window). */
  get receiveMaximum(): number { return this.readExtras.receiveMaximum; }
  set receiveMaximum(value: number) { this.extras.receiveMaximum = value; }
  /** The client's Topic Alias Maximum: aliases the broker may use towards it. */
  get clientTopicAliasMaximum(): number { return this.readExtras.clientTopicAliasMaximum; }
  set clientTopicAliasMaximum(value: number) { this.extras.clientTopicAliasMaximum = value; }
  get publishDecisionsGeneration(): number { return this.readExtras.publishDecisionsGeneration; }
  set publishDecisionsGeneration(value: number) { this.extras.publishDecisionsGeneration = value; }
  /** Characters of the topics held by inbound aliases (bounded). */
  get inboundAliasBytes(): number { return this.readExtras.inboundAliasBytes; }
  set inboundAliasBytes(value: number) { this.extras.inboundAliasBytes = value; }
  /** QoS 1/2 PUBLISHes received and not yet acknowledged (the server's Receive Maximum). */
  get unacknowledged(): number { return this.readExtras.unacknowledged; }
  set unacknowledged(value: number) { this.extras.unacknowledged = value; }
  /** The client's QoS 1/2 messages its Receive Maximum counts: QoS 1 being stored (no PUBACK yet), QoS 2 until its PUBREL. */
  get inFlightFromClient(): number {
    const extra = this.readExtras;
    return extra.unacknowledged - (extra.qos2Storing?.size ?? 0) + (extra.qos2AwaitingRelease?.size ?? 0);
  }

  /** The will goes out when the connection ends (not after a normal DISCONNECT). */
  get sendWillOnClose(): boolean { return (this.flags & SEND_WILL_ON_CLOSE) !== 0; }
  set sendWillOnClose(value: boolean) { this.setFlag(SEND_WILL_ON_CLOSE, value); }
  /** The transport the connection came on (TRANSPORTS index), kept in the flags: no field per connection. */
  get transport(): TransportIndex { return ((this.flags >> TRANSPORT_SHIFT) & 3) as TransportIndex; }
  set transport(value: TransportIndex) { this.flags = (this.flags & ~(3 << TRANSPORT_SHIFT)) | (value << TRANSPORT_SHIFT); }
  /** This turn's output is being gathered (turn-output.ts) until the turn ends (the broker's `endTurns`). */
  get gathering(): boolean { return (this.flags & GATHERING) !== 0; }
  set gathering(value: boolean) { this.setFlag(GATHERING, value); }

  protected setFlag(flag: number, value: boolean): void {
    this.flags = value ? this.flags | flag : this.flags & ~flag;
  }

  protected hasFlag(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  /** Aliases the broker assigned towards the client: topic → alias. */
  get outboundAliases(): Map<string, number> {
    return (this.extras.outboundAliases ??= new Map());
  }

  /** Aliases the client set: alias → topic. */
  get inboundAliases(): Map<number, string> {
    return (this.extras.inboundAliases ??= new Map());
  }

  /** Publish decisions of this connection's principal, per topic, for one roles generation. */
  get publishDecisions(): Map<string, boolean> {
    return (this.extras.publishDecisions ??= new Map());
  }

  /** QoS 2 packet ids whose message is being stored (PUBREC not sent yet). */
  get qos2Storing(): Set<number> {
    return (this.extras.qos2Storing ??= new Set());
  }

  /**
   * QoS 2 packet ids received on this connection and not yet released (PUBREL). Not the session's
   * `qos2Received`: Receive Maximum holds per network connection, and a resumed session's ids from
   * an earlier connection take no place in this one's [MQTT 5 §4.9].
   */
  get qos2AwaitingRelease(): Set<number> {
    return (this.extras.qos2AwaitingRelease ??= new Set());
  }

  /** A QoS 2 message's PUBREL came, or it was not stored: it takes no place any more. */
  released(packetId: number): void {
    this.extra?.qos2AwaitingRelease?.delete(packetId);
  }
}
