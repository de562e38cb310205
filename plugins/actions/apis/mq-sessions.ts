/**
 * The MQ session actions over the message core's session commands (plugins/messaging/
 * session-commands.ts): subscribeToMq (any session, MQTT or MQ API, without disconnecting an MQTT
 * client), createMqApiSession, alterMqSession (moves its position), deleteMqSession,
 * listMqSessions, describeMqSessions and
 * getMessagesFromMqApiSession (stateful: continues from the session's position in the log).
 * Parameters the specification does not show are our decisions (docs/decisions.md).
 */
import { EngineError } from '../../../kernel/errors';
import type { ActionCall, ActionDefinition } from '../action-table';
import { enumValue, RESPONSE_OPTION_ENUMS } from '../response-options';
import type { SubscriptionChange, SubscriptionChangeResult } from '../../../kernel/messaging/commands';
import { exec, schema, type Params } from './db/db-call';
import { MAX_TOPIC_BYTES } from './mq-topics';
import { MAX_CLIENT_NAME_BYTES, MAX_USER_PROPERTY_KEY_BYTES } from './mq-publish';
import { MAX_SUBSCRIPTION_IDENTIFIER } from '../../../kernel/messaging/session-types';
import { startFrom } from './mq-start-from';

/** A client name is 1 to MAX_CLIENT_NAME_BYTES bytes (the spec allows 0; here it names a session). */
const MAX_MESSAGES = 100_000;
const CLIENT_NAME = { type: 'string' };

function clientName(p: Params): string {
  const name = p.clientName;
  if (name === undefined || name === '') throw new EngineError('MISSING_PARAMETER', { param: 'clientName' });
  if (Buffer.byteLength(name) > MAX_CLIENT_NAME_BYTES) throw new EngineError('INVALID_PARAMETER', { param: 'clientName', reason: 'at most 65,550 bytes' });
  return name;
}

const RETAINED = ['onSubscription', 'onNewSubscription', 'never'] as const;

/** One of the spec's subscription objects as a core subscription change (checked field by field). */
function subscriptionChange(entry: unknown, i: number): SubscriptionChange {
  const param = `subscriptionActions[${i}]`;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new EngineError('INVALID_PARAMETER', { param, reason: 'a subscription object' });
  const s = entry as Params;
  const action = s.subscriptionAction;
  if (action === undefined) throw new EngineError('MISSING_PARAMETER', { param: `${param}.subscriptionAction` });
  if (action !== 'add' && action !== 'remove') throw new EngineError('INVALID_PARAMETER', { param: `${param}.subscriptionAction`, reason: '"add" or "remove"' });
  if (typeof s.topicFilter !== 'string' || s.topicFilter === '') throw new EngineError('MISSING_PARAMETER', { param: `${param}.topicFilter` });
  if (Buffer.byteLength(s.topicFilter) > MAX_TOPIC_BYTES) throw new EngineError('INVALID_PARAMETER', { param: `${param}.topicFilter`, reason: 'at most 65,500 bytes' });
  if (s.userProperties !== undefined && s.userProperties !== null) {
    if (!Array.isArray(s.userProperties)) throw new EngineError('INVALID_PARAMETER', { param: `${param}.userProperties`, reason: 'an array of { key, value }' });
    s.userProperties.forEach((property: unknown, j: number) => {
      const { key, value } = (property ?? {}) as { key?: unknown; value?: unknown };
      if (typeof key !== 'string' || key === '' || Buffer.byteLength(key) > MAX_USER_PROPERTY_KEY_BYTES || typeof value !== 'string') {
        throw new EngineError('INVALID_PARAMETER', { param: `${param}.userProperties[${j}]`, reason: 'a key of 1 to 128 bytes and a string value' });
      }
    });
  }
  const change: SubscriptionChange = { action, topicFilter: s.topicFilter };
  if (s.subscriptionIdentifier !== undefined && s.subscriptionIdentifier !== null) {
    if (!Number.isInteger(s.subscriptionIdentifier) || s.subscriptionIdentifier < 1 || s.subscriptionIdentifier > MAX_SUBSCRIPTION_IDENTIFIER) {
      throw new EngineError('INVALID_PARAMETER', { param: `${param}.subscriptionIdentifier`, reason: `an integer from 1 to ${MAX_SUBSCRIPTION_IDENTIFIER}` });
    }
    change.subscriptionIdentifier = s.subscriptionIdentifier;
  }
  for (const flag of ['receiveMyMessages', 'receiveRetainedFlagAsPublished', 'includeExpiredMessages'] as const) {
    if (s[flag] !== undefined && typeof s[flag] !== 'boolean') throw new EngineError('INVALID_PARAMETER', { param: `${param}.${flag}`, reason: 'true or false' });
  }
  if (s.receiveMyMessages !== undefined) change.receiveMyMessages = s.receiveMyMessages;
  if (s.receiveRetainedFlagAsPublished !== undefined) change.receiveRetainedFlagAsPublished = s.receiveRetainedFlagAsPublished;
  if (s.receiveRetainedMessages !== undefined) change.receiveRetainedMessages = enumValue(s.receiveRetainedMessages, RETAINED, `${param}.receiveRetainedMessages`);
  if (s.qos !== undefined) {
    if (s.qos !== 0 && s.qos !== 1 && s.qos !== 2) throw new EngineError('INVALID_PARAMETER', { param: `${param}.qos`, reason: '0, 1 or 2' });
    change.qos = s.qos;
  }
  if (s.binaryFormat !== undefined) change.binaryFormat = enumValue(s.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, `${param}.binaryFormat`);
  if (s.includeExpiredMessages !== undefined) change.includeExpiredMessages = s.includeExpiredMessages;
  return change;
}

export const mqSessionActions: readonly ActionDefinition[] = [
  {
    action: 'subscribeToMq',
    summary: 'Add or remove subscriptions of an MQTT or MQ API session (an MQTT client stays connected).',
    params: schema({ clientName: CLIENT_NAME, subscriptionActions: { type: 'array', maxItems: 1000 } }),
    async handler(call: ActionCall) {
      const p = call.params as Params;
      const name = clientName(p);
      const changes = (p.subscriptionActions ?? []).map(subscriptionChange);
      const result = await exec<{ subscriptions: SubscriptionChangeResult[] }>(call, 'mq.changeSubscriptions', { clientName: name, changes });
      return {
        subscriptions: result.subscriptions.map((s, i) => ({
          ...s,
          debugInfo: { subscriptionAction: changes[i].action, clientName: name },
        })),
      };
    },
  },
  {
    action: 'createMqApiSession',
    summary: 'Create an MQ API session: a client name whose messages are read with getMessagesFromMqApiSession.',
    params: schema({ clientName: CLIENT_NAME }),
    handler: (call: ActionCall) => exec(call, 'mq.createApiSession', { clientName: clientName(call.params as Params) }),
  },
  {
    action: 'alterMqSession',
    summary: "Move an MQ API session's position in the log (startFrom: head, tail, a message id or an ISO 8601 date-time).",
    params: schema({ clientName: CLIENT_NAME, startFrom: { type: ['string', 'integer'] } }),
    async handler(call: ActionCall) {
      const p = call.params as Params;
      const name = clientName(p);
      if (p.startFrom === undefined || p.startFrom === null) throw new EngineError('MISSING_PARAMETER', { param: 'startFrom' });
      return exec(call, 'mq.repositionSession', { clientName: name, startFrom: startFrom(p.startFrom) });
    },
  },
  {
    action: 'deleteMqSession',
    summary: 'End an MQTT or MQ API session (a connected MQTT client holding it is disconnected).',
    params: schema({ clientName: CLIENT_NAME }),
    async handler(call: ActionCall) {
      await exec(call, 'mq.deleteSession', { clientName: clientName(call.params as Params) });
      return {};
    },
  },
  {
    action: 'listMqSessions',
    summary: 'The MQTT and MQ API sessions whose client names the caller may use.',
    params: schema({ filter: { type: 'string' }, offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 100_000 } }),
    handler(call: ActionCall) {
      const p = call.params as Params;
      const params: Record<string, unknown> = {};
      for (const name of ['filter', 'offset', 'limit']) if (p[name] !== undefined) params[name] = p[name];
      return exec(call, 'mq.listSessions', params);
    },
  },
  {
    action: 'describeMqSessions',
    summary: 'Subscriptions, subscribed topics and statistics of sessions.',
    params: schema({ clientNames: { type: 'array', items: { type: 'string' }, maxItems: 1000 } }),
    handler(call: ActionCall) {
      const p = call.params as Params;
      return exec(call, 'mq.describeSessions', p.clientNames === undefined ? {} : { clientNames: p.clientNames });
    },
  },
  {
    action: 'getMessagesFromMqApiSession',
    summary: "An MQ API session's next messages, from its position in the log (the position moves past them).",
    params: schema({
      clientName: CLIENT_NAME,
      maxMessages: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES, default: 20 },
      binaryFormat: { type: 'string' },
      includeMessageMetadata: { type: 'boolean', default: false },
      includeMqttProperties: { type: 'boolean', default: false },
      includeTransformFields: { type: 'boolean', default: false },
      includeOtherFields: { type: 'boolean', default: false },
    }),
    async handler(call: ActionCall) {
      const p = call.params as Params;
      // Binary values: this call's binaryFormat, else the subscription's, else hex.
      const binaryFormat = p.binaryFormat !== undefined ? enumValue(p.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, 'binaryFormat') : undefined;
      const result = await exec<{ messages: unknown[] }>(call, 'mq.readSession', {
        clientName: clientName(p),
        maxMessages: p.maxMessages,
        ...(binaryFormat ? { binaryFormat } : {}),
        includeMessageMetadata: p.includeMessageMetadata,
        includeMqttProperties: p.includeMqttProperties,
        includeTransformFields: p.includeTransformFields,
        includeOtherFields: p.includeOtherFields,
      });
      return { messages: result.messages };
    },
  },
];
