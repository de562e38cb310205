/**
 * The `mq` api. getMessagesFromMqTopic maps to the `mq.retrieve` bus command (plugins/messaging),
 * publishMessagesToMq to `mq.publish` (mq-publish.ts); the topic actions read the message log's
 * catalog (mq-topics.ts); configureTopic sets a topic's retention (mq-configure.ts); the MQ
 * session actions are in mq-sessions.ts.
 */
import { EngineError } from '../../../kernel/errors';
import type { ActionDefinition } from '../action-table';
import { enumValue, RESPONSE_OPTION_ENUMS } from '../response-options';
import { NAME, schema, type Params } from './db/db-call';
import { mqSessionActions } from './mq-sessions';
import { mqExploreActions } from './mq-explore';
import { endBefore, startFrom } from './mq-start-from';
import { configureTopic } from './mq-configure';
import { publishMessagesToMq } from './mq-publish';
import { checkLocation, MAX_TOPIC_BYTES, topicActions } from './mq-topics';

const MAX_MESSAGES = 100_000;

function expiredFilter(p: Params): 'include' | 'exclude' | 'only' {
  const filter = p.expiredMessagesFilter === undefined ? 'include' : enumValue(p.expiredMessagesFilter, ['include', 'exclude', 'only'] as const, 'expiredMessagesFilter');
  if (p.includeExpiredMessages === false) {
    if (filter === 'only') throw new EngineError('INVALID_PARAMETER', { param: 'includeExpiredMessages', reason: 'false contradicts expiredMessagesFilter "only"' });
    return 'exclude';
  }
  return filter;
}

export const mqActions: readonly ActionDefinition[] = [
  {
    action: 'getMessagesFromMqTopic',
    summary: "Read a topic's messages (stateless: removes nothing, moves no client's position).",
    params: schema({
      topic: { type: 'string' },
      tableName: NAME,
      databaseName: NAME,
      ownerName: NAME,
      startFrom: { type: ['string', 'integer'] },
      endBefore: { type: ['string', 'integer'] },
      skip: { type: 'integer', minimum: 0 },
      maxMessages: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES, default: 20 },
      binaryFormat: { type: 'string' },
      expiredMessagesFilter: { type: 'string' },
      includeExpiredMessages: { type: 'boolean', default: true },
      includeMessageMetadata: { type: 'boolean', default: false },
      includeMqttProperties: { type: 'boolean', default: false },
      includeTransformFields: { type: 'boolean', default: false },
      includeOtherFields: { type: 'boolean', default: false },
    }),
    async handler(call) {
      const p = call.params as Params;
      const { database } = checkLocation(call, p);
      const hasTopic = p.topic !== undefined && p.topic !== '';
      const hasTable = p.tableName !== undefined;
      if (hasTopic === hasTable) {
        if (!hasTopic) throw new EngineError('MISSING_PARAMETER', { param: 'topic' });
        throw new EngineError('INVALID_PARAMETER', { param: 'tableName', reason: 'give exactly one of topic and tableName' });
      }
      if (hasTopic && Buffer.byteLength(p.topic) > MAX_TOPIC_BYTES) throw new EngineError('INVALID_PARAMETER', { param: 'topic', reason: 'at most 65,500 bytes' });
      const binaryFormat = p.binaryFormat !== undefined
        ? enumValue(p.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, 'binaryFormat')
        : call.options.binaryFormat;
      if (!call.engine.bus.has('mq.retrieve')) {
        throw new EngineError('NOT_AVAILABLE', { feature: 'getMessagesFromMqTopic', reason: 'no loaded plugin registers the command mq.retrieve (load the messaging plugin)' });
      }
      const result = await call.engine.bus.execute<{ messages: unknown[] }>('mq.retrieve', {
        ...(hasTopic ? { topic: p.topic } : { table: p.tableName, database }),
        startFrom: startFrom(p.startFrom),
        ...(p.endBefore === undefined || p.endBefore === null ? {} : { endBefore: endBefore(p.endBefore) }),
        ...(p.skip === undefined ? {} : { skip: p.skip }),
        maxMessages: p.maxMessages,
        binaryFormat,
        expired: expiredFilter(p),
        includeMessageMetadata: p.includeMessageMetadata,
        includeMqttProperties: p.includeMqttProperties,
        includeTransformFields: p.includeTransformFields,
        includeOtherFields: p.includeOtherFields,
      }, call.ctx!);
      return { messages: result.messages };
    },
  },
  publishMessagesToMq,
  ...topicActions,
  configureTopic,
  ...mqSessionActions,
  ...mqExploreActions,
];
