/**
 * The commonest packet, read without a parser: a whole PUBLISH (3.1.1, or MQTT 5 without
 * properties) at an offset of a chunk. A busy publisher sends thousands per chunk; mqtt-packet
 * reads each through its buffer list (three slices, a debug call per state, a packet object) and
 * that was about a sixth of the broker's main thread in a fan-in. Anything else (another packet
 * type, QoS 3, MQTT 5 properties, a packet cut by the chunk's end, a remaining length not in its
 * shortest form, whatever is malformed) returns undefined and goes to mqtt-packet as before, so
 * its checks and errors stay the only ones. What this returns equals what mqtt-packet returns
 * for the same bytes (test/mqtt/16-simple-publish.test.ts).
 */
import type { IPublishPacket } from 'mqtt-packet';
import { LENGTH_CUT, LENGTH_UNREAD, packetSize, remainingLength } from './remaining-length';

/** A PUBLISH as mqtt-packet's parser makes it (the same fields). */
class SimplePublish {
  readonly cmd = 'publish' as const;
  constructor(
    readonly retain: boolean,
    readonly qos: 0 | 1 | 2,
    readonly dup: boolean,
    readonly length: number,
    readonly topic: string,
    readonly payload: Buffer,
  ) {}
  // Set only for QoS 1 and 2, as mqtt-packet does.
  declare messageId?: number;
}

/** A PUBLISH cut by a chunk's end is kept for the next chunk up to this size; longer ones go to mqtt-packet. */
const CUT_PUBLISH_LIMIT = 16 * 1024;

/**
 * True when `rest` (what a chunk ends with) is the start of a PUBLISH of at most
 * CUT_PUBLISH_LIMIT and `limit` bytes: kept until the next chunk completes it.
 */
export function isCutPublish(rest: Buffer, limit: number): boolean {
  // Not a PUBLISH, or QoS 3 (malformed: mqtt-packet refuses it at its first byte).
  if (rest.length === 0 || rest[0] >> 4 !== 3 || ((rest[0] >> 1) & 3) === 3) return false;
  const length = remainingLength(rest, 0);
  // The remaining length itself is cut: a short start of a packet.
  if (length === LENGTH_CUT) return true;
  if (length === LENGTH_UNREAD) return false;
  const size = packetSize(length);
  return size > rest.length && size <= CUT_PUBLISH_LIMIT && size <= limit;
}

/**
 * The PUBLISH starting at `offset` of `chunk` when it is whole and of the simple form (its size:
 * `packetSize(packet.length)`); otherwise undefined.
 */
export function readSimplePublish(chunk: Buffer, offset: number, protocolVersion: number): IPublishPacket | undefined {
  const total = chunk.length;
  const first = chunk[offset];
  // PUBLISH (type 3), QoS 0 to 2: flags are DUP, QoS, RETAIN.
  if (first >> 4 !== 3) return undefined;
  const qos = (first >> 1) & 3;
  if (qos === 3) return undefined;
  const length = remainingLength(chunk, offset);
  if (length < 0) return undefined;
  const at = offset + packetSize(length) - length;
  const end = at + length;
  if (end > total) return undefined;
  // Topic name, packet identifier (QoS 1 and 2), property length (MQTT 5).
  if (at + 2 > end) return undefined;
  const topicEnd = at + 2 + ((chunk[at] << 8) | chunk[at + 1]);
  let fields = topicEnd;
  if (qos > 0) fields += 2;
  if (protocolVersion === 5) {
    if (fields >= end || chunk[fields] !== 0) return undefined;
    fields += 1;
  }
  if (fields > end) return undefined;
  const packet = new SimplePublish(
    (first & 1) !== 0,
    qos as 0 | 1 | 2,
    (first & 8) !== 0,
    length,
    // As mqtt-packet reads it (invalid UTF-8 becomes U+FFFD).
    chunk.toString('utf8', at + 2, topicEnd),
    chunk.subarray(fields, end),
  );
  if (qos > 0) packet.messageId = (chunk[topicEnd] << 8) | chunk[topicEnd + 1];
  return packet as IPublishPacket;
}
