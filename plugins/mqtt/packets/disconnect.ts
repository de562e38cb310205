/**
 * DISCONNECT from the client: the connection closes cleanly [MQTT-3.14.4-1]. MQTT 5 reason
 * codes are read and logged (0x04 "disconnect with will message" will matter once wills exist);
 * raising the Session Expiry Interval from 0 is a protocol error [MQTT-3.14.2-2].
 */
import type { IDisconnectPacket } from 'mqtt-packet';
import type { Connection } from '../connection';
import { REASON } from '../reason-codes';

export function handleDisconnect(connection: Connection, packet: IDisconnectPacket): void {
  const requestedExpiry = packet.properties?.sessionExpiryInterval;
  if (connection.protocolVersion === 5 && connection.sessionExpiryInterval === 0 && requestedExpiry !== undefined && requestedExpiry !== 0) {
    connection.close(REASON.PROTOCOL_ERROR, 'the session expiry interval cannot be set in DISCONNECT when CONNECT set 0');
    return;
  }
  connection.broker.log.debug({ clientId: connection.clientId, reasonCode: packet.reasonCode ?? 0, reasonString: packet.properties?.reasonString }, 'client disconnected');
  connection.close();
}
