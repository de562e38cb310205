/**
 * PUBLISH and acknowledgement bytes towards clients. A message is encoded ONCE per form
 * (protocol level × QoS × RETAIN) and the same bytes go to every subscriber of that form; QoS 1/2
 * deliveries copy them and patch the packet identifier and DUP in. Only deliveries that carry
 * something of their own (subscription identifiers, a topic alias, a message expiry that counts
 * down) are encoded for one client.
 */
import { remainingLifetime, type CoreMessage, type QoS } from '../../kernel/messaging/message';
import { RETURN_CODE_311 } from './reason-codes';
import { encodePublish as encodePublishPacket } from './wire/publish-encoder';

/** Forms a message may be encoded in (formSlot's range). */
const FORMS = 12;

/** The cache slot of a form: level 4/5 × QoS 0..2 × RETAIN. */
function formSlot(level: number, qos: QoS, retain: boolean): number {
  return (level === 5 ? 6 : 0) + qos * 2 + (retain ? 1 : 0);
}

export interface OutboundOptions {
  level: number;
  qos: QoS;
  retain: boolean;
  dup: boolean;
  packetId: number;
  subscriptionIds?: number[];
  /** Topic alias to send instead of (aliasOnly) or with the topic name. */
  alias?: number;
  aliasOnly?: boolean;
  now: number;
}

/** The bytes of a PUBLISH of `message` for one delivery. */
export function encodePublish(message: CoreMessage, o: OutboundOptions): Buffer {
  const shared = sharedPublishForm(message, o);
  if (shared === undefined) {
    const lifetime = remainingLifetime(message, o.now);
    return encodePublishPacket({
      topic: o.aliasOnly ? '' : message.topic, payload: message.payload, qos: o.qos, retain: o.retain, dup: o.dup,
      packetId: o.packetId || 1, properties: message.properties,
      // The remaining lifetime is forwarded, not the original interval [MQTT-3.3.2-6] (never below 0).
      messageExpiryInterval: lifetime === undefined ? undefined : Math.max(0, lifetime),
      topicAlias: o.alias, subscriptionIdentifiers: o.subscriptionIds,
    }, 5);
  }
  if (o.qos === 0) return shared;
  const copy = Buffer.allocUnsafe(shared.length);
  shared.copy(copy);
  setDeliveryFields(copy, 0, o);
  return copy;
}

/**
 * The message's bytes in this delivery's form, shared by every delivery in it (encoded once and
 * kept on the message): packet identifier 1 and DUP clear, to be set in a copy for QoS 1/2
 * (`setDeliveryFields`). Undefined when the delivery needs bytes of its own (MQTT 5 with an
 * expiry, a topic alias or subscription identifiers).
 */
export function sharedPublishForm(message: CoreMessage, o: OutboundOptions): Buffer | undefined {
  const own = o.alias !== undefined || (o.subscriptionIds !== undefined && o.subscriptionIds.length > 0) || remainingLifetime(message, o.now) !== undefined;
  if (own && o.level === 5) return undefined;
  const slot = formSlot(o.level, o.qos, o.retain);
  let bytes = cachedForm(message, slot);
  if (bytes === undefined) {
    bytes = encodePublishPacket({
      topic: message.topic, payload: message.payload, qos: o.qos, retain: o.retain, dup: false, packetId: 1, properties: message.properties,
    }, o.level);
    keepForm(message, slot, bytes);
  }
  return bytes;
}

/** A QoS 1/2 delivery's DUP flag and packet identifier, set in a copy of its shared form that starts at `at`. */
export function setDeliveryFields(bytes: Buffer, at: number, o: OutboundOptions): void {
  if (o.dup) bytes[at] |= 0x08;
  const id = packetIdOffset(bytes, at);
  bytes[id] = o.packetId >> 8;
  bytes[id + 1] = o.packetId & 0xff;
}

/** The cached bytes of a form of the message, if encoded before. */
function cachedForm(message: CoreMessage, slot: number): Buffer | undefined {
  const wire = message.wire;
  if (wire === undefined) return undefined;
  if (Array.isArray(wire)) return wire[slot];
  return message.wireForm === slot ? wire : undefined;
}

/** Caches a form: most messages go out in one form, kept without an array. */
function keepForm(message: CoreMessage, slot: number, bytes: Buffer): void {
  const wire = message.wire;
  if (wire === undefined) {
    message.wire = bytes;
    message.wireForm = slot;
  } else if (Array.isArray(wire)) {
    wire[slot] = bytes;
  } else {
    const forms = new Array<Buffer | undefined>(FORMS);
    forms[message.wireForm!] = wire;
    forms[slot] = bytes;
    message.wire = forms;
  }
}

/** The cached forms of a message (tests). */
export function cachedForms(message: CoreMessage): Buffer[] {
  const wire = message.wire;
  if (wire === undefined) return [];
  if (!Array.isArray(wire)) return [wire];
  return wire.filter((bytes): bytes is Buffer => bytes !== undefined);
}

/** Where the packet identifier of a PUBLISH starting at `start` sits: after the fixed header and the topic name. */
function packetIdOffset(bytes: Buffer, start: number): number {
  let at = start + 1;
  while (bytes[at] & 0x80) at++;
  at++;
  const topicLength = bytes.readUInt16BE(at);
  return at + 2 + topicLength;
}

/**
 * PUBACK, PUBREC, PUBREL, PUBCOMP: 4 bytes when the reason is success (MQTT 5 allows leaving it
 * out [MQTT-3.4.2-1]); otherwise with the reason code (MQTT 5 only).
 */
export function encodeAck(type: 'puback' | 'pubrec' | 'pubrel' | 'pubcomp', packetId: number, level: number, reasonCode = 0): Buffer {
  const first = type === 'puback' ? 0x40 : type === 'pubrec' ? 0x50 : type === 'pubrel' ? 0x62 : 0x70;
  if (reasonCode === 0 || level !== 5) return Buffer.from([first, 2, packetId >> 8, packetId & 0xff]);
  return Buffer.from([first, 3, packetId >> 8, packetId & 0xff, reasonCode]);
}

/** The two accepting 3.1.1 CONNACKs, shared (a socket never changes the bytes it is given). */
const CONNACK_311_ACCEPTED = [Buffer.from([0x20, 2, 0, 0]), Buffer.from([0x20, 2, 1, 0])];

/** A 3.1.1 CONNACK (the one packet every client gets; no encoder objects per CONNECT). */
export function connack311(sessionPresent: boolean, returnCode: number): Buffer {
  if (returnCode === RETURN_CODE_311.ACCEPTED) return CONNACK_311_ACCEPTED[sessionPresent ? 1 : 0];
  // Session Present is 0 in a refusal [MQTT-3.2.2-4].
  return Buffer.from([0x20, 2, 0, returnCode]);
}
