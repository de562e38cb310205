/**
 * publishMessagesToMq: turns the spec's message objects into the `mq.publish` command's messages
 * (payload bytes as base64 plus MQTT properties) and runs that command, the one publish path
 * shared with MQTT: every message of the call is stored in one commit, in order, or none is.
 *
 * Every message is checked here first, so one bad message fails the call before anything is
 * published (the command adds topic checks and authorization, also before storing anything).
 */
import { EngineError } from '../../../kernel/errors';
import type { ActionCall, ActionDefinition } from '../action-table';
import { enumValue, RESPONSE_OPTION_ENUMS } from '../response-options';
import type { ColumnDefinition, VariantValue } from '../../../kernel/storage/types';
import { bytesFromWire, decodeValue, ISO_FORMAT, type BinaryFormat } from '../../../lib/values/wire-format';
import type { PublishParamsMessage, PublishResult } from '../../../kernel/messaging/commands';
import { topicNameProblem } from '../../../kernel/topic-name';
import { NAME, schema, type Params } from './db/db-call';
import { checkLocation, MAX_TOPIC_BYTES, topicOfTable } from './mq-topics';

/** Spec limits (Limits table). */
export const MAX_CLIENT_NAME_BYTES = 65_550;
const MAX_CORRELATION_DATA_BYTES = 65_500;
export const MAX_USER_PROPERTY_KEY_BYTES = 128;
/** The MQTT 5 Message Expiry Interval is a four byte integer [MQTT-3.3.2.3.3]. */
const MAX_EXPIRY_SECONDS = 4_294_967_295;

const PAYLOAD_TYPES = ['json', 'utf8', 'binary', 'variantObject'] as const;
type PayloadType = typeof PAYLOAD_TYPES[number];

/** A variant column for decodeValue: variant objects are validated by the data plugin's rules. */
const PAYLOAD_COLUMN = { name: 'payload', type: 'variant', nullable: false } as unknown as ColumnDefinition;

function invalid(param: string, reason: string): EngineError {
  return new EngineError('INVALID_PARAMETER', { param, reason });
}

/** The payload's bytes and whether they are UTF-8 text by declaration (payload format indicator). */
function payloadBytes(payload: unknown, type: PayloadType, binaryFormat: BinaryFormat, validate: boolean, param: string): { bytes: Buffer; utf8: boolean } {
  switch (type) {
    case 'json': {
      if (payload === undefined) throw new EngineError('MISSING_PARAMETER', { param });
      // A string is JSON text; any other JSON value is written as its JSON text.
      if (typeof payload !== 'string') return { bytes: Buffer.from(JSON.stringify(payload), 'utf8'), utf8: true };
      if (validate) {
        try {
          JSON.parse(payload);
        } catch {
          throw invalid(param, 'mqttPayloadType "json" and the payload is not JSON text (validateMqttPayload)');
        }
      }
      return { bytes: Buffer.from(payload, 'utf8'), utf8: true };
    }
    case 'utf8':
      if (typeof payload !== 'string') throw invalid(param, 'mqttPayloadType "utf8" takes a string');
      return { bytes: Buffer.from(payload, 'utf8'), utf8: true };
    case 'binary':
      return { bytes: bytesFromWire(payload, binaryFormat, param), utf8: false };
    case 'variantObject': {
      if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw invalid(param, 'mqttPayloadType "variantObject" takes a variant object');
      let value: VariantValue | null;
      try {
        value = decodeValue(PAYLOAD_COLUMN, payload, { ...ISO_FORMAT, binaryFormat, variantFormat: 'variantObject' }) as VariantValue | null;
      } catch (error) {
        if (error instanceof EngineError) throw invalid(param, String(error.details.reason ?? error.message));
        throw error;
      }
      if (value === null) throw invalid(param, 'a variant object with a null value has no payload bytes');
      switch (value.type) {
        case 'binary': return { bytes: Buffer.from(value.value), utf8: false };
        case 'string': return { bytes: Buffer.from(value.value, 'utf8'), utf8: true };
        case 'json': return { bytes: Buffer.from(value.value, 'utf8'), utf8: true };
        default: return { bytes: Buffer.from(JSON.stringify(value.value), 'utf8'), utf8: true };
      }
    }
  }
}

/** Correlation data: bytes written in the message's binaryFormat (a string or a byte array); any other JSON value is its JSON text. */
function correlationBytes(value: unknown, binaryFormat: BinaryFormat, param: string): Buffer | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const bytes = typeof value === 'string' || Array.isArray(value)
    ? bytesFromWire(value, binaryFormat, param)
    : Buffer.from(JSON.stringify(value), 'utf8');
  if (bytes.length > MAX_CORRELATION_DATA_BYTES) throw invalid(param, `at most ${MAX_CORRELATION_DATA_BYTES} bytes, not ${bytes.length}`);
  return bytes;
}

function userProperties(value: unknown, param: string): Array<{ key: string; value: string }> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalid(param, 'expected an array of { key, value }');
  return value.map((entry, i) => {
    const at = `${param}[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw invalid(at, 'expected { key, value }');
    const { key, value: text } = entry as Record<string, unknown>;
    if (typeof key !== 'string' || key === '') throw invalid(`${at}.key`, 'a string of 1 to 128 bytes');
    if (Buffer.byteLength(key) > MAX_USER_PROPERTY_KEY_BYTES) throw invalid(`${at}.key`, `at most ${MAX_USER_PROPERTY_KEY_BYTES} bytes`);
    if (typeof text !== 'string') throw invalid(`${at}.value`, 'a string');
    return { key, value: text };
  });
}

function checkTopic(topic: string, param: string): void {
  if (Buffer.byteLength(topic) > MAX_TOPIC_BYTES) throw invalid(param, `at most ${MAX_TOPIC_BYTES.toLocaleString('en-US')} bytes`);
  const problem = topicNameProblem(topic);
  if (problem) throw new EngineError('INVALID_TOPIC', { topic, reason: problem, param });
}

function commandMessage(m: Params, i: number, topic: string, defaults: { binaryFormat: BinaryFormat; validate: boolean }): PublishParamsMessage {
  const at = `messages[${i}]`;
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw invalid(at, 'expected a message object');
  if (!('payload' in m)) throw new EngineError('MISSING_PARAMETER', { param: `${at}.payload` });
  const binaryFormat = m.binaryFormat !== undefined ? enumValue(m.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, `${at}.binaryFormat`) : defaults.binaryFormat;
  const type = m.mqttPayloadType !== undefined ? enumValue(m.mqttPayloadType, PAYLOAD_TYPES, `${at}.mqttPayloadType`) : 'json';
  const { bytes, utf8 } = payloadBytes(m.payload, type, binaryFormat, defaults.validate, `${at}.payload`);
  const out: PublishParamsMessage = { topic, payload: bytes.toString('base64'), payloadEncoding: 'base64' };

  if (m.qos !== undefined && m.qos !== 0 && m.qos !== 1 && m.qos !== 2) throw invalid(`${at}.qos`, '0, 1 or 2');
  if (m.qos !== undefined) out.qos = m.qos;
  if (m.retain !== undefined && typeof m.retain !== 'boolean') throw invalid(`${at}.retain`, 'a boolean');
  if (m.retain === true) out.retain = true;
  if (m.contentType !== undefined && m.contentType !== null) {
    if (typeof m.contentType !== 'string') throw invalid(`${at}.contentType`, 'a string');
    if (m.contentType !== '') out.contentType = m.contentType;
  }
  if (m.responseTopic !== undefined && m.responseTopic !== null && m.responseTopic !== '') {
    if (typeof m.responseTopic !== 'string') throw invalid(`${at}.responseTopic`, 'a string');
    // A Response Topic is a topic name: no wildcards [MQTT-3.3.2-14].
    checkTopic(m.responseTopic, `${at}.responseTopic`);
    out.responseTopic = m.responseTopic;
  }
  const correlation = correlationBytes(m.correlationData, binaryFormat, `${at}.correlationData`);
  if (correlation) out.correlationData = correlation.toString('base64');
  if (m.expirySeconds !== undefined && m.expirySeconds !== null) {
    if (!Number.isInteger(m.expirySeconds) || m.expirySeconds < 0 || m.expirySeconds > MAX_EXPIRY_SECONDS) {
      throw invalid(`${at}.expirySeconds`, `an integer from 0 to ${MAX_EXPIRY_SECONDS}`);
    }
    out.messageExpiryInterval = m.expirySeconds;
  }
  const properties = userProperties(m.userProperties, `${at}.userProperties`);
  if (properties && properties.length > 0) out.userProperties = properties;
  // The spec's rule: JSON and UTF-8 payloads carry Payload Format Indicator 1; an explicit
  // `payloadFormatIndicator` wins (true on bytes that are not UTF-8 is refused by mq.publish).
  if (m.payloadFormatIndicator !== undefined) {
    if (typeof m.payloadFormatIndicator !== 'boolean' && m.payloadFormatIndicator !== 0 && m.payloadFormatIndicator !== 1) {
      throw invalid(`${at}.payloadFormatIndicator`, 'a boolean (or 0 / 1)');
    }
    out.payloadFormatIndicator = m.payloadFormatIndicator === true || m.payloadFormatIndicator === 1;
  } else if (utf8) {
    out.payloadFormatIndicator = true;
  }
  return out;
}

/** The call's topic: `topic`, or the topic of the integration table `tableName`; undefined when every message names its own. */
function callTopic(call: ActionCall, p: Params, database: string): string | undefined {
  const hasTopic = p.topic !== undefined && p.topic !== '';
  const hasTable = p.tableName !== undefined;
  if (hasTopic && hasTable) throw invalid('tableName', 'give exactly one of topic and tableName');
  if (hasTopic) {
    checkTopic(p.topic, 'topic');
    return p.topic;
  }
  if (hasTable) return topicOfTable(call, database, p.tableName);
  return undefined;
}

export const publishMessagesToMq: ActionDefinition = {
  action: 'publishMessagesToMq',
  summary: 'Publish messages to a topic (one commit, in order, or none); MQTT and MQ subscribers receive them.',
  params: schema({
    clientName: { type: 'string' },
    topic: { type: 'string' },
    databaseName: NAME,
    ownerName: NAME,
    tableName: NAME,
    // Default: the session's defaultValidateMqttPayload (from the setting default_validate_mqtt_payload).
    validateMqttPayload: { type: 'boolean' },
    binaryFormat: { type: 'string' },
    messages: { type: 'array', minItems: 1, maxItems: 10_000 },
  }, ['messages']),
  async handler(call) {
    const p = call.params as Params;
    const { database } = checkLocation(call, p);
    if (p.clientName !== undefined && Buffer.byteLength(p.clientName) > MAX_CLIENT_NAME_BYTES) {
      throw invalid('clientName', `at most ${MAX_CLIENT_NAME_BYTES.toLocaleString('en-US')} bytes`);
    }
    const topic = callTopic(call, p, database);
    const binaryFormat: BinaryFormat = p.binaryFormat !== undefined
      ? enumValue(p.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, 'binaryFormat')
      : call.session!.settings.defaultBinaryFormat;
    const validate = (p.validateMqttPayload as boolean | undefined) ?? call.session!.settings.defaultValidateMqttPayload;
    const defaults = { binaryFormat, validate };
    const messages = (p.messages as Params[]).map((m, i) => {
      // A message may name its own topic (several topics in one commit); else the call's.
      let messageTopic = topic;
      if (m !== null && typeof m === 'object' && m.topic !== undefined) {
        if (typeof m.topic !== 'string' || m.topic === '') throw invalid(`messages[${i}].topic`, 'a topic name of 1 to 65,500 bytes');
        checkTopic(m.topic, `messages[${i}].topic`);
        messageTopic = m.topic;
      }
      if (messageTopic === undefined) throw new EngineError('MISSING_PARAMETER', { param: 'topic' });
      return commandMessage(m, i, messageTopic, defaults);
    });
    if (!call.engine.bus.has('mq.publish')) {
      throw new EngineError('NOT_AVAILABLE', { feature: 'publishMessagesToMq', reason: 'no loaded plugin registers the command mq.publish (load the messaging plugin)' });
    }
    const result = await call.engine.bus.execute<PublishResult>('mq.publish', {
      messages,
      ...(p.clientName ? { clientName: p.clientName } : {}),
    }, call.ctx!);
    return { messageIds: result.ids };
  },
};
