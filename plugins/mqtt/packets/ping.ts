/** PINGREQ → PINGRESP [MQTT-3.12.4-1]. */
import type { Connection } from '../connection';

export function handlePingreq(connection: Connection): void {
  connection.send({ cmd: 'pingresp' });
}
