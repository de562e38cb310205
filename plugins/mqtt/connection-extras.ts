/**
 * The parts of a connection's state that only some connections need, kept apart so an idle
 * connection carries none of them, and its flags packed in one small integer.
 */
import type { Packet } from 'mqtt-packet';

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
}
/** The defaults, read while a connection has no extras of its own (never written). */
export const NO_EXTRAS: Readonly<ConnectionExtras> = Object.freeze(new ConnectionExtras());

// Flags of one Smi field (one field instead of six booleans per connection).
export const SEND_WILL_ON_CLOSE = 1;
export const CONNACK_SENT = 2;
export const CORKED = 4;
export const DRAINING = 8;
export const PAUSED_BY_CORE = 16;
export const WATCHING_DRAIN = 32;
