/**
 * A message as the message core carries it (protocol neutral; the MQTT 5 properties are the richest
 * shape any protocol gives a message), and its two conversions to and from the message log.
 */
import { isUtf8 } from 'node:buffer';
import type { LoggedMessage, LogAppend } from '../../kernel/storage/message-log-port';
import type { VariantValue } from '../../kernel/storage/types';
import { msToTimestamp, timestampToMs } from '../../lib/values/timestamps';

export type QoS = 0 | 1 | 2;

/** One MQTT 5 User Property: a name (`key`) and a value. */
export interface UserProperty {
  key: string;
  value: string;
}

/**
 * User properties in the order they were published, repeated names included: they are forwarded
 * so [MQTT-3.3.2-17, MQTT-3.3.2-18]. The log stores the same shape.
 */
export type UserProperties = UserProperty[];

export interface MessageProperties {
  payloadFormatIndicator?: boolean;
  /** Seconds the message lives after it was published (MQTT 5 Message Expiry Interval). */
  messageExpiryInterval?: number;
  contentType?: string;
  responseTopic?: string;
  correlationData?: Buffer;
  userProperties?: UserProperties;
}

export interface CoreMessage {
  topic: string;
  /** The exact bytes published: subscribers receive these. */
  payload: Buffer;
  qos: QoS;
  retain: boolean;
  properties?: MessageProperties;
  /** Client name of the publisher (null: published by the server itself). */
  publisher: string | null;
  /** Engine clock, ms, when the core took the message. */
  createdAt: number;
  /** Its message id in the log, set once stored (0: not stored, e.g. `$SYS`). */
  sequence: number;
  /** Encodings cached by the protocol plugins, so a message is encoded once per form. */
  wire?: Array<Buffer | undefined>;
}

/** Seconds left before the message expires (undefined: it never does; ≤ 0: it has). */
export function remainingLifetime(message: CoreMessage, now: number): number | undefined {
  const interval = message.properties?.messageExpiryInterval;
  if (interval === undefined) return undefined;
  return interval - Math.floor((now - message.createdAt) / 1000);
}

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

/** A message read back from the log. */
export function fromLogged(logged: LoggedMessage): CoreMessage {
  const properties: MessageProperties = {};
  let any = false;
  if (logged.payloadFormat !== null && logged.payloadFormat !== undefined) { properties.payloadFormatIndicator = logged.payloadFormat === 1; any = true; }
  if (logged.expirySeconds !== null && logged.expirySeconds !== undefined) { properties.messageExpiryInterval = logged.expirySeconds; any = true; }
  if (logged.contentType) { properties.contentType = logged.contentType; any = true; }
  if (logged.responseTopic) { properties.responseTopic = logged.responseTopic; any = true; }
  if (logged.correlationData) { properties.correlationData = Buffer.from(logged.correlationData); any = true; }
  if (logged.userProperties && logged.userProperties.length > 0) { properties.userProperties = logged.userProperties; any = true; }
  return {
    topic: logged.topic,
    payload: variantBytes(logged.payload),
    qos: (logged.qos ?? 0) as QoS,
    retain: logged.retain === true,
    properties: any ? properties : undefined,
    publisher: logged.publisher ?? null,
    createdAt: timestampToMs(logged.createTs),
    sequence: logged.sequence,
  };
}
