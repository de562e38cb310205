/**
 * The dispatcher of a connected client's packets: the rules mqtt-packet does not check
 * (packet-rules.ts) first, then one handler per packet type; a packet only a server sends, a
 * second CONNECT or an AUTH closes the connection.
 */
import type { IPublishPacket, Packet } from 'mqtt-packet';
import { SERVER_RECEIVE_MAXIMUM, type Connection } from '../connection';
import { REASON } from '../reason-codes';
import { handleDisconnect } from './disconnect';
import { handlePingreq } from './ping';
import { handlePublish } from './publish';
import { handlePuback, handlePubcomp, handlePubrec, handlePubrel } from './acks';
import { handleSubscribe } from './subscribe';
import { handleUnsubscribe } from './unsubscribe';
import { DUP_ON_QOS_0, packetViolation, propertiesViolation, qosPublishViolation, type Violation } from './packet-rules';

export function dispatchPacket(connection: Connection, packet: Packet): void {
  if (packet.cmd === 'publish') {
    // A 3.1.1 QoS 0 PUBLISH (the commonest packet) passes with three comparisons.
    if (packet.qos !== 0 || packet.dup || (connection.protocolVersion === 5 && packet.properties !== undefined)) {
      const violation = publishViolation(connection, packet);
      if (violation !== undefined) return connection.refuse(violation);
    }
    return handlePublish(connection, packet);
  }
  const violation = packetViolation(packet, connection.protocolVersion);
  if (violation !== undefined) return connection.refuse(violation);
  switch (packet.cmd) {
    case 'pingreq': return handlePingreq(connection);
    case 'disconnect': return handleDisconnect(connection, packet);
    case 'puback': return handlePuback(connection, packet);
    case 'pubrec': return handlePubrec(connection, packet);
    case 'pubrel': return handlePubrel(connection, packet);
    case 'pubcomp': return handlePubcomp(connection, packet);
    case 'subscribe': return handleSubscribe(connection, packet);
    case 'unsubscribe': return handleUnsubscribe(connection, packet);
    case 'connect':
      // A second CONNECT is a protocol violation [MQTT-3.1.0-2].
      return connection.close(REASON.PROTOCOL_ERROR, 'a second CONNECT on one connection');
    case 'auth':
      // No Authentication Method was accepted in CONNECT, so AUTH is a protocol error [MQTT-4.12.0-6].
      return connection.close(REASON.PROTOCOL_ERROR, 'AUTH without an authentication method');
    default:
      // CONNACK, SUBACK, PINGRESP, …: packets only a server sends.
      return connection.close(REASON.PROTOCOL_ERROR, `${packet.cmd} is not a packet a client sends`);
  }
}

/** The problem of a PUBLISH with QoS 1 or 2 or with properties (see packet-rules.ts). */
function publishViolation(connection: Connection, packet: IPublishPacket): Violation | undefined {
  const v5 = connection.protocolVersion === 5;
  if (v5 && packet.properties !== undefined) {
    const violation = propertiesViolation('publish', packet.properties as Record<string, unknown>);
    if (violation !== undefined) return violation;
  }
  if (packet.qos === 0) return packet.dup ? DUP_ON_QOS_0 : undefined;
  // 3.1.1 clients are not told a Receive Maximum: held to the protocol's largest.
  if (!v5) return qosPublishViolation(packet, connection.unacknowledged, SERVER_RECEIVE_MAXIMUM);
  const session = connection.session;
  // A QoS 2 PUBLISH again (DUP) whose PUBREL has not come takes no new place.
  if (packet.qos === 2 && session !== undefined && connection.broker.core.hasReceivedQos2(session, packet.messageId ?? 0)) return qosPublishViolation(packet, 0, Infinity);
  return qosPublishViolation(packet, connection.inFlightFromClient, connection.broker.receiveMaximum);
}
