/**
 * DISCONNECT from the client: the connection closes cleanly [MQTT-3.14.4-1] and the will is not
 * sent [MQTT-3.1.2-10], except on MQTT 5 reason 0x04 "disconnect with will message". MQTT 5 may
 * change the Session Expiry Interval here, but not raise it from 0 [MQTT-3.14.2-2].
 */
import type { IDisconnectPacket } from 'mqtt-packet';
import type { Connection } from '../connection';
import { REASON } from '../reason-codes';

export function handleDisconnect(connection: Connection, packet: IDisconnectPacket): void {
  // mqtt-packet reads an MQTT 5 reason code and properties past a DISCONNECT shorter than them
  // (from the bytes that follow it): length 0 is reason 0x00 without properties, length 1 has
  // no properties [MQTT 5 §3.14.2.1, §3.14.2.2.1].
  const length = packet.length ?? 0;
  const properties = length > 1 ? packet.properties : undefined;
  const requestedExpiry = properties?.sessionExpiryInterval;
  if (connection.protocolVersion === 5 && connection.sessionExpiryInterval === 0 && requestedExpiry !== undefined && requestedExpiry !== 0) {
    connection.close(REASON.PROTOCOL_ERROR, 'the session expiry interval cannot be set in DISCONNECT when CONNECT set 0');
    return;
  }
  const reasonCode = length > 0 ? packet.reasonCode ?? REASON.SUCCESS : REASON.SUCCESS;
  connection.broker.log.debug({ clientId: connection.clientId, reasonCode, reasonString: properties?.reasonString }, 'client disconnected');
  if (connection.protocolVersion === 5 && requestedExpiry !== undefined && connection.session) {
    connection.broker.core.setExpiryInterval(connection.session, requestedExpiry);
  }
  connection.sendWillOnClose = connection.protocolVersion === 5 && reasonCode === REASON.DISCONNECT_WITH_WILL;
  connection.close();
}
