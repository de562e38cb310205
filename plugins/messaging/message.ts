/**
 * A message's two conversions to and from the message log (the message itself, CoreMessage, is
 * declared in kernel/messaging/message.ts, where protocols find it).
 */
import { isUtf8 } from 'node:buffer';
import type { LoggedMessage, LogAppend } from '../../kernel/storage/message-log-port';
import type { VariantValue } from '../../kernel/storage/types';
import type { CoreMessage, MessageProperties, QoS } from '../../kernel/messaging/message';
import { msToTimestamp, timestampToMs } from '../../lib/values/timestamps';

export type { CoreMessage, MessageProperties, QoS, UserProperties, UserProperty } from '../../kernel/messaging/message';
export { remainingLifetime } from '../../kernel/messaging/message';

/** JSON text starts with one of these bytes (after optional whitespace). */
function mayBeJson(byte: number): boolean {
  return byte === 0x7b || byte === 0x5b || byte === 0x22 || (byte >= 0x30 && byte <= 0x39) || byte === 0x2d
    || byte === 0x74 || byte === 0x66 || byte === 0x6e || byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

/**
 * The payload as the integration table's `source_payload` variant (docs/storage.md, "Integration tables"): `json` when the
 * bytes are valid JSON, else `string` when the payload format indicator says UTF-8, else
 * `binary`. JSON and strings keep the text as published, so the bytes come back exactly.
 */
export function payloadVariant(payload: Buffer, utf8Indicated: boolean): VariantValue {
  if (payload.length > 0 && mayBeJson(payload[0]) && isUtf8(payload)) {
    const text = payload.toString('utf8');
    try {
      JSON.parse(text);
      return { type: 'json', value: text };
    } catch {
      if (utf8Indicated) return { type: 'string', value: text };
      return { type: 'binary', value: payload };
    }
  }
  if (utf8Indicated && isUtf8(payload)) return { type: 'string', value: payload.toString('utf8') };
  return { type: 'binary', value: payload };
}

function variantBytes(variant: VariantValue): Buffer {
  switch (variant.type) {
    case 'json':
    case 'string': return Buffer.from(variant.value, 'utf8');
    case 'binary': return Buffer.isBuffer(variant.value) ? variant.value : Buffer.from(variant.value.buffer, variant.value.byteOffset, variant.value.byteLength);
    case 'boolean': return Buffer.from(String(variant.value), 'utf8');
  }
}

/** The log entry of a message; `createTs` is shared by the messages of one commit. */
export function toLogAppend(message: CoreMessage, createTs: string): LogAppend {
  const p = message.properties;
  return {
    topic: message.topic,
    message: {
      createTs,
      payload: payloadVariant(message.payload, p?.payloadFormatIndicator === true),
      qos: message.qos,
      retain: message.retain,
      contentType: p?.contentType ?? null,
      correlationData: p?.correlationData ?? null,
      responseTopic: p?.responseTopic ?? null,
      expirySeconds: p?.messageExpiryInterval ?? null,
      userProperties: p?.userProperties && p.userProperties.length > 0 ? p.userProperties : null,
      payloadFormat: p?.payloadFormatIndicator === undefined ? null : p.payloadFormatIndicator ? 1 : 0,
      publisher: message.publisher,
    },
  };
}

export function logTimestamp(ms: number): string {
  return msToTimestamp(ms);
}

/**
 * The engine clock ms of the last `createTs` converted: the messages of a commit share their
 * timestamp, and every node routes every message of the cluster through fromLogged.
 */
let lastCreateTs = '';
let lastCreatedAt = 0;

function createdAtOf(createTs: string): number {
  if (createTs !== lastCreateTs) {
    lastCreatedAt = timestampToMs(createTs);
    lastCreateTs = createTs;
  }
  return lastCreatedAt;
}

/** The MQTT properties a logged message carries; undefined (no object made) for most, which carry none. */
function propertiesOf(logged: LoggedMessage): MessageProperties | undefined {
  let properties: MessageProperties | undefined;
  if (logged.payloadFormat !== null && logged.payloadFormat !== undefined) (properties ??= {}).payloadFormatIndicator = logged.payloadFormat === 1;
  if (logged.expirySeconds !== null && logged.expirySeconds !== undefined) (properties ??= {}).messageExpiryInterval = logged.expirySeconds;
  if (logged.contentType) (properties ??= {}).contentType = logged.contentType;
  if (logged.responseTopic) (properties ??= {}).responseTopic = logged.responseTopic;
  if (logged.correlationData) (properties ??= {}).correlationData = Buffer.from(logged.correlationData);
  if (logged.userProperties && logged.userProperties.length > 0) (properties ??= {}).userProperties = logged.userProperties;
  return properties;
}

/** A message read back from the log. */
export function fromLogged(logged: LoggedMessage): CoreMessage {
  return {
    topic: logged.topic,
    payload: variantBytes(logged.payload),
    qos: (logged.qos ?? 0) as QoS,
    retain: logged.retain === true,
    properties: propertiesOf(logged),
    publisher: logged.publisher ?? null,
    createdAt: createdAtOf(logged.createTs),
    sequence: logged.sequence,
    // Complete at creation: the protocols' encoding cache adds no property.
    wire: undefined,
    wireForm: 0,
  };
}
