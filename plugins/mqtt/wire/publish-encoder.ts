/**
 * PUBLISH packets as bytes, MQTT 3.1.1 (level 4) and 5, written by hand.
 *
 * Why not mqtt-packet's generator: it takes user properties as an object keyed by name, so it
 * cannot write them in their order with repeated names apart, which MQTT 5 requires
 * [MQTT-3.3.2-17, MQTT-3.3.2-18]. And this is the broker's hot path: here the size is computed
 * first and the packet written into one Buffer, and the bytes of a message's own properties are
 * computed once per message (they are the same for every subscriber) and copied after that.
 */
import type { MessageProperties, QoS, UserProperty } from '../../../kernel/messaging/message';

/**
 * The properties a message carries from hop to hop. Its Message Expiry Interval is not read from
 * here: a hop forwards what is left of it [MQTT-3.3.2-6], given as `messageExpiryInterval`.
 */
export type ForwardedProperties = Omit<MessageProperties, 'messageExpiryInterval'>;

export interface PublishFields {
  /** The topic name; '' when a topic alias stands for it [MQTT-3.3.2-12]. */
  topic: string;
  payload: Buffer;
  qos: QoS;
  retain: boolean;
  dup: boolean;
  /** 1..65535, written when qos > 0. */
  packetId: number;
  /**
   * MQTT 5: the message's own properties. Their bytes are kept for the object once encoded:
   * the object must not change after that (messages in the core do not).
   */
  properties?: ForwardedProperties;
  /** MQTT 5: seconds the message still lives (absent: it does not expire). */
  messageExpiryInterval?: number;
  /** MQTT 5: 1..65535. */
  topicAlias?: number;
  /** MQTT 5: the identifiers of the subscriptions that matched, each 1..268,435,455 [MQTT-3.3.4-3]. */
  subscriptionIdentifiers?: readonly number[];
}

/** Property identifiers (MQTT 5 §2.2.2.2). */
const PAYLOAD_FORMAT_INDICATOR = 0x01;
const MESSAGE_EXPIRY_INTERVAL = 0x02;
const CONTENT_TYPE = 0x03;
const RESPONSE_TOPIC = 0x08;
const CORRELATION_DATA = 0x09;
const SUBSCRIPTION_IDENTIFIER = 0x0b;
const TOPIC_ALIAS = 0x23;
const USER_PROPERTY = 0x26;

/** The largest Variable Byte Integer, so the largest remaining length (§1.5.5). */
const VARIABLE_BYTE_INTEGER_MAX = 268_435_455;
/** UTF-8 strings and binary data carry a two-byte length (§1.5.4, §1.5.6). */
const TWO_BYTE_LENGTH_MAX = 65_535;

const NO_BYTES = Buffer.alloc(0);
/** The encoded own properties of a message, per properties object. */
const propertyBytes = new WeakMap<ForwardedProperties, Buffer>();

/** The bytes of one PUBLISH: one Buffer, sized before it is written. */
export function encodePublish(fields: PublishFields, level: number): Buffer {
  const { topic, payload, qos } = fields;
  const v5 = level === 5;
  const topicLength = Buffer.byteLength(topic, 'utf8');
  if (topicLength > TWO_BYTE_LENGTH_MAX) throw new RangeError(`topic of ${topicLength} bytes: at most ${TWO_BYTE_LENGTH_MAX}`);

  let own: Buffer = NO_BYTES;
  let propertiesLength = 0;
  const expiry = fields.messageExpiryInterval;
  const alias = fields.topicAlias;
  const subscriptionIds = fields.subscriptionIdentifiers;
  if (v5) {
    if (fields.properties !== undefined) own = ownPropertyBytes(fields.properties);
    propertiesLength = own.length;
    if (expiry !== undefined) {
      if (!(Number.isInteger(expiry) && expiry >= 0 && expiry <= 0xffff_ffff)) throw new RangeError(`message expiry interval ${expiry} is not a four byte integer`);
      propertiesLength += 5;
    }
    if (alias !== undefined) {
      if (!(Number.isInteger(alias) && alias >= 1 && alias <= 0xffff)) throw new RangeError(`topic alias ${alias} is not between 1 and 65535`);
      propertiesLength += 3;
    }
    if (subscriptionIds !== undefined) {
      for (let i = 0; i < subscriptionIds.length; i++) {
        const id = subscriptionIds[i];
        if (!(Number.isInteger(id) && id >= 1 && id <= VARIABLE_BYTE_INTEGER_MAX)) throw new RangeError(`subscription identifier ${id} is not between 1 and ${VARIABLE_BYTE_INTEGER_MAX}`);
        propertiesLength += 1 + variableByteIntegerSize(id);
      }
    }
  }

  const remainingLength = 2 + topicLength + (qos > 0 ? 2 : 0)
    + (v5 ? variableByteIntegerSize(propertiesLength) + propertiesLength : 0) + payload.length;
  if (remainingLength > VARIABLE_BYTE_INTEGER_MAX) throw new RangeError(`PUBLISH of ${remainingLength} bytes: at most ${VARIABLE_BYTE_INTEGER_MAX}`);
  const bytes = Buffer.allocUnsafe(1 + variableByteIntegerSize(remainingLength) + remainingLength);

  // Fixed header: type 3, DUP, QoS, RETAIN (§3.3.1).
  // DUP is 0 for every QoS 0 message [MQTT-3.3.1-2].
  bytes[0] = 0x30 | (fields.dup && qos > 0 ? 0x08 : 0) | (qos << 1) | (fields.retain ? 0x01 : 0);
  let at = writeVariableByteInteger(bytes, 1, remainingLength);
  bytes[at++] = topicLength >> 8;
  bytes[at++] = topicLength & 0xff;
  at += bytes.write(topic, at, topicLength, 'utf8');
  if (qos > 0) {
    const packetId = fields.packetId;
    if (!(Number.isInteger(packetId) && packetId >= 1 && packetId <= 0xffff)) throw new RangeError(`packet identifier ${packetId} is not between 1 and 65535`);
    bytes[at++] = packetId >> 8;
    bytes[at++] = packetId & 0xff;
  }
  if (v5) {
    at = writeVariableByteInteger(bytes, at, propertiesLength);
    // This hop's properties first, then the message's own (the order of different properties is free).
    if (expiry !== undefined) {
      bytes[at++] = MESSAGE_EXPIRY_INTERVAL;
      bytes.writeUInt32BE(expiry, at);
      at += 4;
    }
    if (alias !== undefined) {
      bytes[at++] = TOPIC_ALIAS;
      bytes[at++] = alias >> 8;
      bytes[at++] = alias & 0xff;
    }
    if (subscriptionIds !== undefined) {
      // Several matching subscriptions: one property each [MQTT-3.3.4-3].
      for (let i = 0; i < subscriptionIds.length; i++) {
        bytes[at++] = SUBSCRIPTION_IDENTIFIER;
        at = writeVariableByteInteger(bytes, at, subscriptionIds[i]);
      }
    }
    at += own.copy(bytes, at);
  }
  payload.copy(bytes, at);
  return bytes;
}

/** The encoded own properties of a message, computed once per properties object. */
function ownPropertyBytes(properties: ForwardedProperties): Buffer {
  let bytes = propertyBytes.get(properties);
  if (bytes === undefined) {
    bytes = encodeOwnProperties(properties);
    propertyBytes.set(properties, bytes);
  }
  return bytes;
}

/** Payload format indicator, content type, response topic, correlation data, user properties in order. */
function encodeOwnProperties(p: ForwardedProperties): Buffer {
  const contentType = p.contentType === undefined ? -1 : stringLength(p.contentType, 'content type');
  const responseTopic = p.responseTopic === undefined ? -1 : stringLength(p.responseTopic, 'response topic');
  const correlationData = p.correlationData;
  if (correlationData !== undefined && correlationData.length > TWO_BYTE_LENGTH_MAX) throw new RangeError(`correlation data of ${correlationData.length} bytes: at most ${TWO_BYTE_LENGTH_MAX}`);
  const userProperties = p.userProperties;

  let length = 0;
  if (p.payloadFormatIndicator !== undefined) length += 2;
  if (contentType >= 0) length += 3 + contentType;
  if (responseTopic >= 0) length += 3 + responseTopic;
  if (correlationData !== undefined) length += 3 + correlationData.length;
  if (userProperties !== undefined) {
    for (let i = 0; i < userProperties.length; i++) {
      const { key, value } = userProperties[i];
      length += 5 + stringLength(key, 'user property name') + stringLength(value, 'user property value');
    }
  }
  if (length === 0) return NO_BYTES;

  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  if (p.payloadFormatIndicator !== undefined) {
    bytes[at++] = PAYLOAD_FORMAT_INDICATOR;
    bytes[at++] = p.payloadFormatIndicator ? 1 : 0;
  }
  if (contentType >= 0) at = writeString(bytes, at, CONTENT_TYPE, p.contentType!, contentType);
  if (responseTopic >= 0) at = writeString(bytes, at, RESPONSE_TOPIC, p.responseTopic!, responseTopic);
  if (correlationData !== undefined) {
    bytes[at++] = CORRELATION_DATA;
    bytes[at++] = correlationData.length >> 8;
    bytes[at++] = correlationData.length & 0xff;
    at += correlationData.copy(bytes, at);
  }
  if (userProperties !== undefined) {
    // In their order, repeated names included [MQTT-3.3.2-17, MQTT-3.3.2-18].
    for (let i = 0; i < userProperties.length; i++) at = writeUserProperty(bytes, at, userProperties[i]);
  }
  return bytes;
}

function writeUserProperty(bytes: Buffer, at: number, { key, value }: UserProperty): number {
  at = writeString(bytes, at, USER_PROPERTY, key, Buffer.byteLength(key, 'utf8'));
  const valueLength = Buffer.byteLength(value, 'utf8');
  bytes[at++] = valueLength >> 8;
  bytes[at++] = valueLength & 0xff;
  return at + bytes.write(value, at, valueLength, 'utf8');
}

/** A property of type UTF-8 string: identifier, two-byte length, the bytes. */
function writeString(bytes: Buffer, at: number, identifier: number, text: string, length: number): number {
  bytes[at++] = identifier;
  bytes[at++] = length >> 8;
  bytes[at++] = length & 0xff;
  return at + bytes.write(text, at, length, 'utf8');
}

function stringLength(text: string, what: string): number {
  const length = Buffer.byteLength(text, 'utf8');
  if (length > TWO_BYTE_LENGTH_MAX) throw new RangeError(`${what} of ${length} bytes: at most ${TWO_BYTE_LENGTH_MAX}`);
  return length;
}

function variableByteIntegerSize(value: number): number {
  return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
}

/** Writes a Variable Byte Integer (§1.5.5) at `at`; returns the offset after it. */
function writeVariableByteInteger(bytes: Buffer, at: number, value: number): number {
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value > 0) byte |= 0x80;
    bytes[at++] = byte;
  } while (value > 0);
  return at;
}
