/**
 * PUBLISH, SUBSCRIBE, UNSUBSCRIBE and the QoS acknowledgements are not built yet (they arrive
 * with the message core, issue 8): the connection is closed rather than pretending, and an MQTT 5
 * client hears DISCONNECT 0x83 "implementation specific error" with a reason string saying so.
 */
import type { Packet } from 'mqtt-packet';
import type { Connection } from '../connection';
import { REASON } from '../reason-codes';

export const NOT_AVAILABLE_REASON = 'publish and subscribe are not available yet in this broker';

export function handleNotAvailable(connection: Connection, packet: Packet): void {
  connection.broker.log.debug({ clientId: connection.clientId, cmd: packet.cmd }, 'publish/subscribe not available yet: connection closed');
  connection.close(REASON.IMPLEMENTATION_SPECIFIC_ERROR, `${packet.cmd.toUpperCase()}: ${NOT_AVAILABLE_REASON}`);
}
