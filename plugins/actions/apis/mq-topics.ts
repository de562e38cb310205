/**
 * The topic actions (listTopics, describeTopics, deleteTopic) over the message log's catalog
 * (`engine.need('storage').messageLog`), and what the mq actions share about where a call points.
 *
 * Authorization, per topic, on `topic:<name>`: `topic.list`, `topic.describe`, `topic.delete`
 * (named like `table.*`, so the built-in `reader` role may list and describe topics but not
 * delete them). listTopics and describeTopics without names leave out topics the caller may not
 * see; a topic named explicitly that the caller may not see is 12030.
 */
import { EngineError, isEngineError } from '../../../kernel/errors';
import { TOPIC_DELETE_COMMAND } from '../../../kernel/messaging/commands';
import type { LogTopic, MessageLogPort } from '../../../kernel/storage/message-log-port';
import { MAX_TOPIC_NAME_BYTES } from '../../../kernel/topic-name';
import type { ActionCall, ActionDefinition } from '../action-table';
import { firstSince } from '../../../kernel/messaging/log-search';
import { msToTimestamp } from '../../../lib/values/timestamps';
import { NAME, schema, type Params } from './db/db-call';

/** The topic rule's length limit (kernel/topic-name.ts), for the actions' own checks. */
export const MAX_TOPIC_BYTES = MAX_TOPIC_NAME_BYTES;

/** `databaseName` / `ownerName` (defaults: the session's), 1 to 64 bytes; `""` is an error. */
export function checkLocation(call: ActionCall, p: Params): { database: string; owner: string } {
  const settings = call.session!.settings;
  const database = p.databaseName ?? settings.defaultDatabaseName;
  const owner = p.ownerName ?? settings.defaultOwnerName;
  for (const [param, value] of [['databaseName', database], ['ownerName', owner]] as const) {
    if (typeof value !== 'string' || value === '' || Buffer.byteLength(value) > 64) {
      throw new EngineError('INVALID_PARAMETER', { param, reason: '1 to 64 bytes' });
    }
  }
  return { database, owner };
}

/** The topic whose integration table is `table` in `database`. */
export function topicOfTable(call: ActionCall, database: string, table: string): string {
  const db = database.toLowerCase();
  const name = table.toLowerCase();
  try {
    const topic = (call.engine.need('storage').getTable(db, name) as { topic?: unknown }).topic;
    if (typeof topic !== 'string') throw new EngineError('INVALID_PARAMETER', { param: 'tableName', reason: `table "${name}" is not an integration table of a topic` });
    return topic;
  } catch (error) {
    // Only someone who may publish to that table learns why it names no topic (or that it does not exist).
    call.engine.authorize(call.ctx!, 'mq.publish', { kind: 'table', database: db, table: name });
    throw error;
  }
}

function messageLog(call: ActionCall): MessageLogPort {
  if (!call.engine.has('storage')) throw new EngineError('NOT_AVAILABLE', { feature: 'the topic actions', reason: 'no storage plugin is loaded' });
  return call.engine.need('storage').messageLog;
}

function allowed(call: ActionCall, command: string, topic: string): boolean {
  try {
    call.engine.authorize(call.ctx!, command, { kind: 'topic', topic });
    return true;
  } catch (error) {
    if (isEngineError(error) && error.id === 'NOT_AUTHORIZED') return false;
    throw error;
  }
}

function topicEntry(entry: LogTopic): Record<string, unknown> {
  return { topic: entry.topic, databaseName: entry.database, tableName: entry.table, createdAt: entry.createdAt };
}

/** The named topics (each authorized; unknown: 14244), or every topic the caller may use with `command`. */
function selectTopics(call: ActionCall, log: MessageLogPort, names: unknown, command: string): LogTopic[] {
  if (names === undefined) return log.listTopics().filter((entry) => allowed(call, command, entry.topic));
  return (names as string[]).map((topic) => {
    call.engine.authorize(call.ctx!, command, { kind: 'topic', topic });
    const entry = log.getTopic(topic);
    if (!entry) throw new EngineError('TOPIC_NOT_FOUND', { topic });
    return entry;
  });
}

/** Client names subscribed (directly or in a shared group) to filters matching the topic. */
function subscribersOf(call: ActionCall, topic: string): string[] {
  return call.engine.has('messageCore') ? call.engine.need('messageCore').subscribersOf(topic) : [];
}

/**
 * Messages of the last minute, hour and day (engine clock), counted on the log's topic index from
 * the first message at or after each start (found by a binary search: create_ts never goes back).
 */
function rates(call: ActionCall, log: MessageLogPort, topic: string): Record<string, number> {
  const now = call.engine.clock.now();
  const count = (ms: number): number => {
    const from = firstSince(log, topic, msToTimestamp(now - ms));
    return from === undefined ? 0 : log.countTopic(topic, from);
  };
  return { messagesLastMinute: count(60_000), messagesLastHour: count(3_600_000), messagesLastDay: count(86_400_000) };
}

function describe(call: ActionCall, log: MessageLogPort, entry: LogTopic): Record<string, unknown> {
  const first = log.readTopic(entry.topic, { limit: 1 })[0];
  const last = log.readTopic(entry.topic, { limit: 1, reverse: true })[0];
  return {
    ...topicEntry(entry),
    messageCount: log.countTopic(entry.topic),
    firstMessageId: first?.sequence ?? null,
    lastMessageId: last?.sequence ?? null,
    firstMessageTime: first?.createTs ?? null,
    lastMessageTime: last?.createTs ?? null,
    subscribers: subscribersOf(call, entry.topic),
    ...rates(call, log, entry.topic),
    // Retention (configureTopic): the limits, messages trimmed, and the sessions holding it back.
    retention: call.engine.has('topicRetention') ? call.engine.need('topicRetention').status(entry.topic) : null,
    // Transform fields (configureTopic's transformSteps) and the back-fill of earlier messages.
    transform: log.transformStatus(entry.topic) ?? null,
  };
}

const TOPIC_NAME = { type: 'string', minLength: 1, maxLength: MAX_TOPIC_BYTES } as const;

export const topicActions: readonly ActionDefinition[] = [
  {
    action: 'listTopics',
    summary: 'The topics of the message log (those the caller may list), with their integration tables.',
    params: schema({ databaseName: NAME, ownerName: NAME }),
    handler(call) {
      checkLocation(call, call.params);
      const log = messageLog(call);
      return { topics: selectTopics(call, log, undefined, 'topic.list').map(topicEntry) };
    },
  },
  {
    action: 'describeTopics',
    summary: 'Per topic: message count, first and last message id and time, subscribers, integration table.',
    params: schema({ databaseName: NAME, ownerName: NAME, topics: { type: 'array', items: TOPIC_NAME } }),
    handler(call) {
      checkLocation(call, call.params);
      const log = messageLog(call);
      return { topics: selectTopics(call, log, call.params.topics, 'topic.describe').map((entry) => describe(call, log, entry)) };
    },
  },
  {
    action: 'deleteTopic',
    summary: "Delete a topic: its messages, its catalog entry (and so its integration table) and its retained message.",
    params: schema({ databaseName: NAME, ownerName: NAME, topic: TOPIC_NAME }, ['topic']),
    async handler(call) {
      checkLocation(call, call.params);
      messageLog(call);
      // The message core deletes it (plugins/messaging/topic-deletion.ts): retained message, counts.
      if (!call.engine.bus.has(TOPIC_DELETE_COMMAND)) throw new EngineError('NOT_AVAILABLE', { feature: 'deleteTopic', reason: 'the messaging plugin is not loaded' });
      return call.engine.bus.execute(TOPIC_DELETE_COMMAND, { topic: call.params.topic as string }, call.ctx!);
    },
  },
];
