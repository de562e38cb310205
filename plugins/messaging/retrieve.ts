/**
 * `mq.retrieve`: a stateless read of one topic's messages from the message log
 * (getMessagesFromMqTopic; docs/commands.md). Nothing is removed and no position moves.
 *
 * - The topic is named by `topic` or by its integration table (`database` + `table`), exactly one.
 * - `startFrom`: `head` (oldest first), `tail` (the newest `maxMessages`, returned oldest first),
 *   a message id (messages with an id at or above it) or `{ since }` (a canonical timestamp:
 *   messages created at or after it; found by a binary search, since create_ts order is
 *   sequence order along the log).
 * - `endBefore`: an upper bound, exclusive: a message id or `{ since }` (created before it);
 *   `skip` (with tail) leaves out the newest messages first, for newest-first pages.
 * - `expired`: `include` | `exclude` | `only`. A message has expired when its create_ts +
 *   mqtt_expiry_seconds is at or before the engine clock's now. Filtered messages do not count
 *   against `maxMessages`; the read goes on in chunks until the page is full or the topic ends.
 * - Messages are returned in the spec's shape (docs/storage.md, "Integration tables").
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import type { LoggedMessage, MessageLogPort, TransformValues } from '../../kernel/storage/message-log-port';
import { bytesToWire, JSON_TEXT_ENCODING, type BinaryFormat } from '../../lib/values/wire-format';
import { timestampToMs } from '../../lib/values/timestamps';
import { jsonTextDepthExceeds } from '../../lib/values/json-depth';
import { MAX_TOPIC_NAME_BYTES, topicNameTooLong } from '../../kernel/topic-name';
import type { ShapedMessage } from '../../lib/explorer/api-types';
import { firstSince } from '../../kernel/messaging/log-search';

export const MAX_MESSAGES_PER_CALL = 100_000;
export const DEFAULT_MAX_MESSAGES = 20;
/** Messages read from the log per step (bounds memory besides the page itself). */
const CHUNK = 1_000;

export type StartFrom = 'head' | 'tail' | number | { since: string };

export interface RetrieveParams {
  topic?: string;
  database?: string;
  table?: string;
  startFrom?: StartFrom;
  /** Only messages before this bound: a message id (exclusive) or `{ since }` (created before it). */
  endBefore?: number | { since: string };
  /** With startFrom tail: leave out the newest `skip` messages first (newest-first paging). */
  skip?: number;
  maxMessages?: number;
  binaryFormat?: BinaryFormat;
  expired?: 'include' | 'exclude' | 'only';
  includeMessageMetadata?: boolean;
  includeMqttProperties?: boolean;
  includeTransformFields?: boolean;
  includeOtherFields?: boolean;
}

/** What a returned message includes beside its payload. */
export type ShapeOptions = Pick<RetrieveParams, 'includeMessageMetadata' | 'includeMqttProperties' | 'includeTransformFields' | 'includeOtherFields'>;

export interface RetrieveResult {
  topic: string;
  messages: ShapedMessage[];
}

const NAME = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const retrieveParamsSchema = {
  type: 'object',
  properties: {
    topic: { type: 'string', minLength: 1 },
    database: NAME,
    table: NAME,
    startFrom: {
      anyOf: [
        { enum: ['head', 'tail'] },
        { type: 'integer', minimum: 0 },
        { type: 'object', properties: { since: { type: 'string' } }, required: ['since'], additionalProperties: false },
      ],
    },
    endBefore: {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'object', properties: { since: { type: 'string' } }, required: ['since'], additionalProperties: false },
      ],
    },
    skip: { type: 'integer', minimum: 0 },
    maxMessages: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES_PER_CALL },
    binaryFormat: { enum: ['hex', 'base64', 'byteArray'] },
    expired: { enum: ['include', 'exclude', 'only'] },
    includeMessageMetadata: { type: 'boolean' },
    includeMqttProperties: { type: 'boolean' },
    includeTransformFields: { type: 'boolean' },
    includeOtherFields: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

/** The topic the params name (a table is resolved through the catalog). */
function topicOf(engine: Engine, p: RetrieveParams, ctx?: CommandContext): string {
  const byTopic = p.topic !== undefined;
  const byTable = p.table !== undefined;
  if (byTopic === byTable) {
    throw new EngineError('INVALID_PARAMETER', { param: 'topic', reason: 'give exactly one of topic and tableName' });
  }
  if (byTopic) {
    if (topicNameTooLong(p.topic!)) throw new EngineError('INVALID_PARAMETER', { param: 'topic', reason: `at most ${MAX_TOPIC_NAME_BYTES.toLocaleString('en-US')} bytes` });
    if (/[#+]/.test(p.topic!)) throw new EngineError('INVALID_TOPIC', { topic: p.topic!, reason: 'wildcards are not allowed' });
    return p.topic!;
  }
  const database = (p.database ?? engine.settings.default_database_name).toLowerCase();
  const table = p.table!.toLowerCase();
  try {
    const definition = engine.need('storage').getTable(database, table);
    const topic = (definition as { topic?: string }).topic;
    if (typeof topic !== 'string') {
      throw new EngineError('INVALID_PARAMETER', { param: 'tableName', reason: `table "${table}" is not an integration table of a topic` });
    }
    return topic;
  } catch (error) {
    // Only someone who may read that table learns why it names no topic (or that it does not exist).
    if (ctx) engine.authorize(ctx, 'mq.retrieve', { kind: 'table', database, table });
    throw error;
  }
}

export function hasExpired(message: LoggedMessage, nowMs: number): boolean {
  return message.expirySeconds !== null && message.expirySeconds !== undefined
    && timestampToMs(message.createTs) + message.expirySeconds * 1000 <= nowMs;
}

/**
 * `transform`: the message's transform fields (MessageLogPort.transformValues), when its topic has
 * any: their values (includeTransformFields) and why any is null (the metadata's error and log).
 */
export function shapeMessage(
  message: LoggedMessage, p: ShapeOptions, binaryFormat: BinaryFormat, expired: boolean, transform?: TransformValues,
): ShapedMessage {
  // Filled in the order the fields are answered (metadata first); the payload is always set.
  const out = {} as ShapedMessage;
  if (p.includeMessageMetadata) {
    out.id = message.sequence;
    out.timestamp = message.createTs;
    out.error = transform?.error ?? false;
    out.log = transform?.log ?? null;
  }
  const payload = message.payload;
  switch (payload.type) {
    case 'json':
      // JSON nested too deeply to be written back as a value is returned as its text, marked.
      if (jsonTextDepthExceeds(payload.value)) { out.payload = payload.value; out.payloadEncoding = JSON_TEXT_ENCODING; }
      else out.payload = JSON.parse(payload.value);
      break;
    case 'string': out.payload = payload.value; break;
    case 'boolean': out.payload = payload.value; break;
    case 'binary': out.payload = bytesToWire(payload.value, binaryFormat); out.binaryFormat = binaryFormat; break;
  }
  if (p.includeMqttProperties) {
    out.qos = message.qos;
    out.retain = message.retain;
    out.contentType = message.contentType ?? '';
    out.correlationData = message.correlationData ? bytesToWire(message.correlationData, binaryFormat) : '';
    out.responseTopic = message.responseTopic ?? '';
    out.expirySeconds = message.expirySeconds ?? null;
    out.userProperties = message.userProperties ?? null;
    out.payloadFormatIndicator = message.payloadFormat ?? 0;
    out.publisher = message.publisher ?? '';
  }
  if (p.includeTransformFields && transform !== undefined) out.transformFields = bytesAsWire(transform.fields, binaryFormat);
  if (p.includeOtherFields) out.topic = message.topic;
  if (expired) out.messageHasExpired = true;
  return out;
}

/** Transform values as answered: JSON values as they are (binary transform fields do not exist). */
function bytesAsWire(fields: Record<string, unknown>, binaryFormat: BinaryFormat): Record<string, unknown> {
  for (const name of Object.keys(fields)) {
    const v = fields[name];
    if (v instanceof Uint8Array) fields[name] = bytesToWire(v, binaryFormat);
  }
  return fields;
}

/**
 * The function that finds a message's transform fields for a read of `topic`: none (no lookups
 * per message) unless the read wants them and the topic has transform fields.
 */
export function transformReader(log: MessageLogPort, topic: string, p: ShapeOptions): (sequence: number) => TransformValues | undefined {
  const none = (): undefined => undefined;
  if (!p.includeTransformFields && !p.includeMessageMetadata) return none;
  if ((log.transformStatus(topic)?.fields.length ?? 0) === 0) return none;
  return (sequence) => log.transformValues(topic, sequence);
}

export function retrieve(engine: Engine, p: RetrieveParams, topic: string): RetrieveResult {
  const log = engine.need('storage').messageLog;
  if (!log.getTopic(topic)) throw new EngineError('TOPIC_NOT_FOUND', { topic });
  const max = p.maxMessages ?? DEFAULT_MAX_MESSAGES;
  const filter = p.expired ?? 'include';
  const binaryFormat = p.binaryFormat ?? 'hex';
  const now = engine.clock.now();
  const keep = (message: LoggedMessage): boolean | null => {
    const expired = hasExpired(message, now);
    if (filter === 'exclude' && expired) return null;
    if (filter === 'only' && !expired) return null;
    return expired;
  };
  const messages: ShapedMessage[] = [];
  const transformOf = transformReader(log, topic, p);
  const startFrom = p.startFrom ?? 'tail';
  // The highest sequence read (endBefore), undefined: the topic's last.
  let last: number | undefined;
  if (typeof p.endBefore === 'number') last = p.endBefore - 1;
  else if (p.endBefore !== undefined) {
    const first = firstSince(log, topic, p.endBefore.since);
    if (first !== undefined) last = first - 1;
  }
  if (last !== undefined && last < 1) return { topic, messages };

  if (startFrom === 'tail') {
    // newest first, then put back in log order
    let to = last;
    let skip = p.skip ?? 0;
    if (skip > 0 && filter === 'include') {
      // Every message counts: step over the newest `skip` on the topic index alone.
      const first = log.readTopic(topic, { to, reverse: true, limit: 1, skip })[0];
      if (!first) return { topic, messages };
      to = first.sequence;
      skip = 0;
    }
    const picked: Array<[LoggedMessage, boolean]> = [];
    while (picked.length < max) {
      const wanted = max - picked.length + skip;
      const chunk = log.readTopic(topic, { to, reverse: true, limit: Math.min(CHUNK, filter === 'include' ? wanted : CHUNK) });
      for (const message of chunk) {
        const expired = keep(message);
        if (expired === null) continue;
        if (skip > 0) skip--;
        else picked.push([message, expired]);
        if (picked.length === max) break;
      }
      if (chunk.length === 0) break;
      to = chunk[chunk.length - 1].sequence - 1;
      if (to < 1) break;
    }
    for (let i = picked.length - 1; i >= 0; i--) messages.push(shapeMessage(picked[i][0], p, binaryFormat, picked[i][1], transformOf(picked[i][0].sequence)));
    return { topic, messages };
  }

  let from: number | undefined;
  if (startFrom === 'head') from = undefined;
  else if (typeof startFrom === 'number') from = startFrom;
  else {
    from = firstSince(log, topic, startFrom.since);
    if (from === undefined) return { topic, messages };
  }
  while (messages.length < max) {
    if (last !== undefined && from !== undefined && from > last) break;
    const chunk = log.readTopic(topic, { from, to: last, limit: Math.min(CHUNK, filter === 'include' ? max - messages.length : CHUNK) });
    for (const message of chunk) {
      const expired = keep(message);
      if (expired !== null) messages.push(shapeMessage(message, p, binaryFormat, expired, transformOf(message.sequence)));
      if (messages.length === max) break;
    }
    if (chunk.length === 0) break;
    from = chunk[chunk.length - 1].sequence + 1;
  }
  return { topic, messages };
}

export function registerRetrieveCommand(engine: Engine): void {
  engine.bus.register<RetrieveParams, RetrieveResult>({
    name: 'mq.retrieve',
    reads: true,
    summary: "Read one topic's messages from the message log (stateless: removes nothing, moves nothing).",
    params: retrieveParamsSchema as unknown as { type: 'object' },
    resource: (p, ctx) => ({ kind: 'topic', topic: topicOf(engine, p, ctx) }),
    handler: (p) => retrieve(engine, p, topicOf(engine, p)),
  });
}
