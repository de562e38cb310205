/**
 * Integration tables: the table of a topic's messages (docs/storage.md, "Integration
 * tables"), a view over the message log (message-log.ts): naming and columns.
 */
import { createHash } from 'node:crypto';
import { EngineError } from '../../kernel/errors';
import { topicNameProblem } from '../../kernel/topic-name';
import type { ColumnInput } from '../../kernel/storage/types';

export const TOPIC_TABLE_PREFIX = 'mqtt_msg_';
export const MAX_TABLE_NAME_BYTES = 64;
export const CREATE_TS_INDEX = 'create_ts_idx';

/** The built-in columns after the automatic `id`, in stored order. */
export const TOPIC_COLUMNS: ColumnInput[] = [
  { name: 'create_ts', type: 'timestamp' },
  { name: 'source_payload', type: 'variant' },
  { name: 'error', type: 'bit', defaultValue: false },
  { name: 'log', type: 'json' },
  { name: 'mqtt_qos', type: 'integer' },
  { name: 'mqtt_retain', type: 'bit' },
  { name: 'mqtt_content_type', type: 'varchar' },
  { name: 'mqtt_correlation_data', type: 'varbinary' },
  { name: 'mqtt_response_topic', type: 'varchar' },
  { name: 'mqtt_expiry_seconds', type: 'integer' },
  { name: 'mqtt_user_properties', type: 'json' },
  { name: 'mqtt_payload_format', type: 'integer' },
  { name: 'mqtt_publisher', type: 'varchar' },
];

/** Throws INVALID_TOPIC unless `topic` is a topic name by the one rule (kernel/topic-name.ts). */
export function checkTopic(topic: unknown): string {
  if (typeof topic !== 'string') throw new EngineError('INVALID_TOPIC', { topic: String(topic), reason: 'a topic is a non-empty string' });
  const problem = topicNameProblem(topic);
  // A topic too long to store is named by its start only (errors are logged and answered).
  if (problem !== null) throw new EngineError('INVALID_TOPIC', { topic: topic.length > 64 ? `${topic.slice(0, 64)}…` : topic, reason: problem });
  return topic;
}

/**
 * `mqtt_msg_` + the topic lower-cased with every character outside [a-z0-9_] turned into `_`;
 * when that is longer than 64 bytes or taken, cut to 55 bytes and suffixed with `_` and 8 hex
 * digits of a SHA-256 of the topic.
 */
export function topicTableName(topic: string, taken: (name: string) => boolean): string {
  const base = TOPIC_TABLE_PREFIX + topic.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (base.length <= MAX_TABLE_NAME_BYTES && !taken(base)) return base;
  for (let n = 0; ; n++) {
    const hash = createHash('sha256').update(n === 0 ? topic : `${topic}\u0000${n}`).digest('hex').slice(0, 8);
    const name = `${base.slice(0, MAX_TABLE_NAME_BYTES - 9)}_${hash}`;
    if (!taken(name)) return name;
  }
}
