/**
 * What a packet from a client must satisfy before its handler sees it, beyond what mqtt-packet's
 * parser already refuses (reserved header flags, QoS 3, reserved subscription option bits,
 * unknown property identifiers, lengths that run past the packet). A packet breaking one of these
 * rules closes the connection; MQTT 5 clients hear why (docs/mqtt.md "What closes a connection").
 */
import type { IPublishPacket, Packet } from 'mqtt-packet';
import { topicFilterProblem } from '../../../kernel/auth/topic-filter';
import { REASON } from '../reason-codes';

export interface Violation {
  /** The MQTT 5 DISCONNECT reason code (0x81 malformed packet, 0x82 protocol error). */
  code: number;
  reason: string;
}

/**
 * MQTT 5 properties a client may send, per packet type (MQTT 5 table 2-4): any other is a
 * Malformed Packet [MQTT 5 §2.2.2.2]. The PUBLISH Subscription Identifier is refused by
 * packets/publish.ts with its own reason [MQTT-3.3.4-6].
 */
const ALLOWED_PROPERTIES: Readonly<Record<string, ReadonlySet<string>>> = {
  connect: new Set(['sessionExpiryInterval', 'authenticationMethod', 'authenticationData', 'requestProblemInformation',
    'requestResponseInformation', 'receiveMaximum', 'topicAliasMaximum', 'userProperties', 'maximumPacketSize']),
  will: new Set(['willDelayInterval', 'payloadFormatIndicator', 'messageExpiryInterval', 'contentType', 'responseTopic',
    'correlationData', 'userProperties']),
  publish: new Set(['payloadFormatIndicator', 'messageExpiryInterval', 'contentType', 'responseTopic', 'correlationData',
    'topicAlias', 'userProperties', 'subscriptionIdentifier']),
  puback: new Set(['reasonString', 'userProperties']),
  pubrec: new Set(['reasonString', 'userProperties']),
  pubrel: new Set(['reasonString', 'userProperties']),
  pubcomp: new Set(['reasonString', 'userProperties']),
  subscribe: new Set(['subscriptionIdentifier', 'userProperties']),
  unsubscribe: new Set(['userProperties']),
  disconnect: new Set(['sessionExpiryInterval', 'reasonString', 'userProperties', 'serverReference']),
  auth: new Set(['authenticationMethod', 'authenticationData', 'reasonString', 'userProperties']),
};

/** The problem of an MQTT 5 property set on a packet of `kind`, or undefined. */
export function propertiesViolation(kind: string, properties: Record<string, unknown> | undefined): Violation | undefined {
  if (properties === undefined) return undefined;
  const allowed = ALLOWED_PROPERTIES[kind];
  for (const name in properties) {
    if (allowed === undefined || !allowed.has(name)) return { code: REASON.MALFORMED_PACKET, reason: `${name} is not a property of ${kind}` };
    // mqtt-packet turns a repeated property into an array; only user properties may repeat
    // (and a PUBLISH's subscription identifier, refused anyway) [MQTT 5 §2.2.2.2].
    if (name !== 'userProperties' && Array.isArray(properties[name])) return { code: REASON.PROTOCOL_ERROR, reason: `${name} is given more than once` };
  }
  return undefined;
}

/** The problem of a CONNECT (its will QoS; MQTT 5: its properties and will properties), or undefined. */
export function connectViolation(packet: Packet): Violation | undefined {
  if (packet.cmd !== 'connect') return undefined;
  // mqtt-packet reads Will QoS 3 as 3 [MQTT-3.1.2-14]; such a will could never be stored (and
  // would fail the commit it shares with other clients' messages).
  if (packet.will !== undefined && (packet.will.qos ?? 0) > 2) return { code: REASON.MALFORMED_PACKET, reason: 'the will QoS is 0, 1 or 2' };
  if (packet.protocolVersion !== 5) return undefined;
  return propertiesViolation('connect', packet.properties as Record<string, unknown> | undefined)
    ?? propertiesViolation('will', packet.will?.properties as Record<string, unknown> | undefined);
}

/**
 * The problem of a packet other than PUBLISH (see `qosPublishViolation`) on a connected session, or
 * undefined. Packets a client may not send at all (CONNACK, SUBACK, a second CONNECT, AUTH) are
 * the dispatcher's.
 */
export function packetViolation(packet: Packet, protocolVersion: number): Violation | undefined {
  const length = packet.length ?? 0;
  switch (packet.cmd) {
    case 'subscribe':
      // A non-zero packet identifier [MQTT-2.2.1-3]; at least one filter [MQTT-3.8.3-3] (each
      // filter's own rules are packets/subscribe.ts's).
      if (packet.messageId === 0) return { code: REASON.MALFORMED_PACKET, reason: 'a SUBSCRIBE needs a packet identifier other than 0' };
      if (packet.subscriptions.length === 0) return { code: REASON.PROTOCOL_ERROR, reason: 'a SUBSCRIBE needs at least one topic filter' };
      break;
    case 'unsubscribe':
      // The same; a filter is at least one character long [MQTT-4.7.3-1].
      if (packet.messageId === 0) return { code: REASON.MALFORMED_PACKET, reason: 'an UNSUBSCRIBE needs a packet identifier other than 0' };
      if (packet.unsubscriptions.length === 0) return { code: REASON.PROTOCOL_ERROR, reason: 'an UNSUBSCRIBE needs at least one topic filter' };
      for (const filter of packet.unsubscriptions) {
        if (filter.length === 0) return { code: REASON.PROTOCOL_ERROR, reason: 'a topic filter is at least one character long' };
        // As in a SUBSCRIBE (packets/subscribe.ts): valid UTF-8 [MQTT-1.5.4-1] and the wildcard and
        // share-name rules [MQTT-4.7.1-1]; Mosquitto closes such a client too.
        const problem = filter.includes('\uFFFD') ? 'a topic filter must be valid UTF-8' : topicFilterProblem(filter);
        if (problem !== null) return { code: REASON.PROTOCOL_ERROR, reason: `invalid topic filter: ${problem}` };
      }
      break;
    case 'pingreq':
      // No variable header, no payload [MQTT 3.12].
      if (length !== 0) return { code: REASON.MALFORMED_PACKET, reason: 'a PINGREQ carries nothing' };
      return undefined;
    case 'disconnect':
      // 3.1.1: no variable header, no payload [MQTT 3.1.1 §3.14].
      if (protocolVersion !== 5 && length !== 0) return { code: REASON.MALFORMED_PACKET, reason: 'a DISCONNECT carries nothing' };
      break;
    case 'puback':
    case 'pubrec':
    case 'pubrel':
    case 'pubcomp':
      // 3.1.1: the packet identifier only [MQTT 3.1.1 §3.4 to §3.7].
      if (protocolVersion !== 5 && length !== 2) return { code: REASON.MALFORMED_PACKET, reason: `a ${packet.cmd.toUpperCase()} carries a packet identifier only` };
      break;
    default:
      return undefined;
  }
  return protocolVersion === 5 ? propertiesViolation(packet.cmd, packet.properties as Record<string, unknown> | undefined) : undefined;
}

/** DUP is 0 on every QoS 0 PUBLISH [MQTT-3.3.1-2] (Mosquitto closes such a client as malformed too). */
export const DUP_ON_QOS_0: Violation = Object.freeze({ code: REASON.MALFORMED_PACKET, reason: 'a QoS 0 PUBLISH has DUP 0' });

/**
 * The problem of a QoS 1 or 2 PUBLISH, or undefined: a non-zero packet identifier
 * [MQTT-2.2.1-3]; an MQTT 5 client keeps at most the server's Receive Maximum unanswered
 * (`inFlight`: being stored, or QoS 2 awaiting PUBREL) [MQTT-3.3.4-8].
 */
export function qosPublishViolation(packet: IPublishPacket, inFlight: number, receiveMaximum: number): Violation | undefined {
  if (packet.messageId === 0) return { code: REASON.MALFORMED_PACKET, reason: 'a QoS 1 or 2 PUBLISH needs a packet identifier other than 0' };
  if (inFlight >= receiveMaximum) return { code: REASON.RECEIVE_MAXIMUM_EXCEEDED, reason: `more than ${receiveMaximum} unacknowledged QoS 1 and 2 PUBLISHes` };
  return undefined;
}
