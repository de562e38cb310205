/**
 * SUBSCRIBE: each filter is checked (syntax, shared-subscription rules, the kernel's `mq.subscribe`
 * decision), added to the message core (a subscription on the same filter is replaced
 * [MQTT-3.8.4-3]), answered in one SUBACK with a code per filter in order [MQTT-3.8.4-6], and then
 * the retained messages each asks for are sent. In a cluster, a SUBACK granting a shared
 * subscription waits until the member counts across the cluster (answer-order.ts).
 */
import type { ISubscribePacket, ISubscription } from 'mqtt-packet';
import type { QoS } from '../../../kernel/messaging/message';
import { MAX_SUBSCRIPTION_IDENTIFIER, type SubscriptionOptions } from '../../../kernel/messaging/session-types';
import { parseSharedFilter, topicFilterProblem } from '../../../kernel/auth/topic-filter';
import type { Connection } from '../connection';
import { REASON, SUBACK_311_FAILURE } from '../reason-codes';
import { answerInOrder } from './answer-order';


export function handleSubscribe(connection: Connection, packet: ISubscribePacket): void {
  const session = connection.session;
  if (!session) return;
  const core = connection.broker.core;
  const v5 = connection.protocolVersion === 5;
  const subscriptionIdentifier = packet.properties?.subscriptionIdentifier as number | undefined;
  if (subscriptionIdentifier !== undefined && (subscriptionIdentifier < 1 || subscriptionIdentifier > MAX_SUBSCRIPTION_IDENTIFIER)) {
    return connection.close(REASON.PROTOCOL_ERROR, 'a subscription identifier is between 1 and 268435455');
  }
  const refused = v5 ? REASON.NOT_AUTHORIZED : SUBACK_311_FAILURE;
  const codes: number[] = [];
  const granted: Array<{ filter: string; options: SubscriptionOptions; existed: boolean }> = [];
  let shares = false;
  for (const subscription of packet.subscriptions as ISubscription[]) {
    const filter = subscription.topic;
    const shared = parseSharedFilter(filter);
    if (shared && subscription.nl) {
      // No Local on a shared subscription is a protocol error [MQTT-3.8.3-4].
      return connection.close(REASON.PROTOCOL_ERROR, 'no local is not allowed on a shared subscription');
    }
    // A filter breaking the wildcard or share-name rules is a protocol violation, not a refusal:
    // the connection closes [MQTT-4.7.1-1, MQTT-4.7.1-2, MQTT-4.8.2-1, MQTT-4.8.2-2, MQTT-4.13.1-1].
    const problem = filter.includes('\uFFFD') ? 'a topic filter must be valid UTF-8' : topicFilterProblem(filter);
    if (problem) return connection.close(REASON.PROTOCOL_ERROR, `invalid topic filter: ${problem}`);
    // One client holds at most MAX_SUBSCRIPTIONS filters (a flood of SUBSCRIBEs pins no memory):
    // MQTT 5 0x97 quota exceeded, 3.1.1 0x80 [MQTT-3.9.3].
    if (core.atSubscriptionLimit(session, filter)) {
      codes.push(v5 ? REASON.QUOTA_EXCEEDED : SUBACK_311_FAILURE);
      continue;
    }
    if (!core.maySubscribe(connection.principal!, filter)) {
      connection.broker.log.debug({ clientId: connection.clientId, filter }, 'SUBSCRIBE not authorized');
      codes.push(refused);
      continue;
    }
    const options: SubscriptionOptions = {
      qos: Math.min(subscription.qos, 2) as QoS,
      noLocal: v5 && subscription.nl === true,
      retainAsPublished: v5 && subscription.rap === true,
      retainHandling: v5 ? ((subscription.rh ?? 0) as 0 | 1 | 2) : 0,
    };
    if (subscriptionIdentifier !== undefined) options.subscriptionIdentifier = subscriptionIdentifier;
    const existed = core.subscribe(session, filter, options);
    codes.push(options.qos);
    granted.push({ filter, options, existed });
    if (shared) shares = true;
  }
  answerInOrder(connection, shares ? core.sharedMembershipSettled() : undefined, () => {
    connection.send(v5
      ? { cmd: 'suback', messageId: packet.messageId, granted: codes, reasonCode: REASON.SUCCESS, properties: {} }
      : { cmd: 'suback', messageId: packet.messageId, granted: codes });
    for (const { filter, options, existed } of granted) core.sendRetained(session, filter, options, existed);
  });
}
