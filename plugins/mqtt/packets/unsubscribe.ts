/**
 * UNSUBSCRIBE: each filter is removed from the session [MQTT-3.10.4-1]; one UNSUBACK answers
 * (MQTT 5: 0x00 per removed filter, 0x11 where none existed) [MQTT-3.10.4-4, MQTT-3.11.3-1].
 */
import type { IUnsubscribePacket } from 'mqtt-packet';
import type { Connection } from '../connection';
import { REASON } from '../reason-codes';
import { answerInOrder } from './answer-order';

export function handleUnsubscribe(connection: Connection, packet: IUnsubscribePacket): void {
  const session = connection.session;
  if (!session) return;
  const core = connection.broker.core;
  const codes = packet.unsubscriptions.map((filter) => (core.unsubscribe(session, filter) ? REASON.SUCCESS : REASON.NO_SUBSCRIPTION_EXISTED));
  // The reason codes are written for MQTT 5 only.
  // After a SUBACK still waiting (answer-order.ts), never before it.
  answerInOrder(connection, undefined, () => connection.send({ cmd: 'unsuback', messageId: packet.messageId, granted: codes }));
}
