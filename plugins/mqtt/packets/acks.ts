/**
 * The acknowledgements of the QoS 1 and 2 flows [MQTT-4.3]:
 * - towards the client (messages the broker delivered): PUBACK ends a QoS 1 delivery; PUBREC
 *   turns a QoS 2 one into "PUBREL sent"; PUBCOMP ends it. Each frees a place in the window.
 * - from the client (messages it published at QoS 2): PUBREL → PUBCOMP, and the packet id may
 *   be used again.
 */
import type { IPubackPacket, IPubcompPacket, IPubrecPacket, IPubrelPacket } from 'mqtt-packet';
import type { Connection } from '../connection';
import { encodeAck } from '../outbound';
import { isFailure, REASON } from '../reason-codes';

export function handlePuback(connection: Connection, packet: IPubackPacket): void {
  const session = connection.session;
  if (session) connection.broker.core.acknowledge(session, packet.messageId ?? 0, 'puback');
}

export function handlePubrec(connection: Connection, packet: IPubrecPacket): void {
  const session = connection.session;
  if (!session) return;
  const packetId = packet.messageId ?? 0;
  const core = connection.broker.core;
  if (isFailure(packet.reasonCode ?? REASON.SUCCESS)) {
    // The client refused the message: the delivery ends here (MQTT 5 §4.3.3).
    if (core.acknowledge(session, packetId, 'pubrec')) core.acknowledge(session, packetId, 'pubcomp');
    return;
  }
  const known = core.acknowledge(session, packetId, 'pubrec') || core.awaitsPubcomp(session, packetId);
  connection.writeAnswer(encodeAck('pubrel', packetId, connection.protocolVersion, known ? REASON.SUCCESS : REASON.PACKET_IDENTIFIER_NOT_FOUND));
}

export function handlePubcomp(connection: Connection, packet: IPubcompPacket): void {
  const session = connection.session;
  if (session) connection.broker.core.acknowledge(session, packet.messageId ?? 0, 'pubcomp');
}

export function handlePubrel(connection: Connection, packet: IPubrelPacket): void {
  const session = connection.session;
  if (!session) return;
  const packetId = packet.messageId ?? 0;
  const known = connection.broker.core.releasedQos2(session, packetId);
  connection.released(packetId);
  connection.writeAnswer(encodeAck('pubcomp', packetId, connection.protocolVersion, known ? REASON.SUCCESS : REASON.PACKET_IDENTIFIER_NOT_FOUND));
}
