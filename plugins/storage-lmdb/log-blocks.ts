/**
 * The byte format of the message log's blocks: the messages of one append (one event-loop turn of
 * publishes) are written as ONE LMDB value, keyed by the first message's sequence, so a turn costs
 * one put instead of one per message, and the common message (no MQTT 5 properties) is copied
 * field by field instead of going through msgpack.
 *
 * Block   = u8 version (1) ‖ u32 entry count ‖ entries
 * Entry   = u32 length of the rest ‖ u32 sequence − block key ‖ u32 topic id ‖ u8 flags ‖ u8 qos
 *           ‖ u8 payload type ‖ [u8 length ‖ create_ts ASCII] ‖ [u32 length ‖ publisher UTF-8]
 *           ‖ u32 payload length ‖ payload ‖ [u32 length ‖ msgpack of the MQTT 5 fields]
 * The create_ts and publisher are written only where they differ from the previous entry's (a
 * turn's messages share one timestamp, and often one publisher); a flag says which is present.
 *
 * Decoded messages are the log's positional values (StoredValues), the shape the integration
 * table view reads.
 */
import { Packr } from 'msgpackr';
import { lowerBound } from '../../lib/sorted';
import type { MessageInput } from '../../kernel/storage/storage-port';
import type { VariantValue } from '../../kernel/storage/types';

/** [topicId, createTs, payload, qos, retain, contentType, correlationData, responseTopic, expirySeconds, userProperties, payloadFormat, publisher] */
export type StoredValues = unknown[];

const VERSION = 1;
const HEADER = 5;
/** Entry bytes before the optional fields: length, sequence offset, topic id, flags, qos, payload type. */
const FIXED = 4 + 4 + 4 + 1 + 1 + 1;

const RETAIN = 1;
const OWN_TIMESTAMP = 2;
const HAS_PUBLISHER = 4;
const OWN_PUBLISHER = 8;
const HAS_EXTRAS = 16;

const JSON_PAYLOAD = 0;
const STRING_PAYLOAD = 1;
const BINARY_PAYLOAD = 2;
const FALSE_PAYLOAD = 3;
const TRUE_PAYLOAD = 4;

/** Most entries a block holds, and the bytes past which a block is closed (one larger message still gets one). */
export const BLOCK_MAX_ENTRIES = 1000;
export const BLOCK_TARGET_BYTES = 256 * 1024;

const extrasPackr = new Packr({ useRecords: false, moreTypes: false });

/** A message to write: its sequence, topic id and fields. */
export interface BlockEntry {
  seq: number;
  topicId: number;
  message: MessageInput;
}

function hasExtras(m: MessageInput): boolean {
  return (m.contentType ?? null) !== null || (m.correlationData ?? null) !== null || (m.responseTopic ?? null) !== null
    || (m.expirySeconds ?? null) !== null || (m.userProperties ?? null) !== null || (m.payloadFormat ?? null) !== null;
}

function payloadType(payload: VariantValue): number {
  switch (payload.type) {
    case 'json': return JSON_PAYLOAD;
    case 'string': return STRING_PAYLOAD;
    case 'binary': return BINARY_PAYLOAD;
    case 'boolean': return payload.value ? TRUE_PAYLOAD : FALSE_PAYLOAD;
  }
}

/**
 * Encodes `entries[from, to)` as one block keyed by `key` (≤ the first sequence). Throws (before anything
 * is written anywhere) on a value it cannot encode.
 */
export function encodeBlock(entries: BlockEntry[], from: number, to: number, key = entries[from].seq): Buffer {
  const n = to - from;
  // First pass: sizes (text lengths are kept for the second pass).
  const textBytes = new Array<number>(n);
  const extras: Array<Buffer | null> = new Array(n);
  let size = HEADER;
  let lastTs: string | null = null;
  let lastPublisher: string | null | undefined;
  for (let i = 0; i < n; i++) {
    const { message: m } = entries[from + i];
    size += FIXED + 4;
    if (m.createTs !== lastTs) { size += 1 + m.createTs.length; lastTs = m.createTs; }
    const publisher = m.publisher ?? null;
    if (publisher !== null && publisher !== lastPublisher) size += 4 + Buffer.byteLength(publisher, 'utf8');
    lastPublisher = publisher;
    const p = m.payload;
    const bytes = p.type === 'binary' ? p.value.byteLength : p.type === 'boolean' ? 0 : Buffer.byteLength(p.value, 'utf8');
    textBytes[i] = bytes;
    size += bytes;
    if (hasExtras(m)) {
      const packed = extrasPackr.pack([
        m.contentType ?? null, m.correlationData ?? null, m.responseTopic ?? null, m.expirySeconds ?? null,
        m.userProperties ?? null, m.payloadFormat ?? null,
      ]);
      extras[i] = packed;
      size += 4 + packed.length;
    } else {
      extras[i] = null;
    }
  }
  const block = Buffer.allocUnsafe(size);
  block[0] = VERSION;
  block.writeUInt32LE(n, 1);
  let at = HEADER;
  lastTs = null;
  lastPublisher = undefined;
  for (let i = 0; i < n; i++) {
    const { seq, topicId, message: m } = entries[from + i];
    const start = at;
    at += 4;
    block.writeUInt32LE(seq - key, at);
    block.writeUInt32LE(topicId, at + 4);
    let flags = m.retain === true ? RETAIN : 0;
    const flagsAt = at + 8;
    block[at + 9] = m.qos ?? 0;
    block[at + 10] = payloadType(m.payload);
    at += 11;
    if (m.createTs !== lastTs) {
      flags |= OWN_TIMESTAMP;
      block[at] = m.createTs.length;
      at += 1 + block.write(m.createTs, at + 1, 'latin1');
      lastTs = m.createTs;
    }
    const publisher = m.publisher ?? null;
    if (publisher !== null) {
      flags |= HAS_PUBLISHER;
      if (publisher !== lastPublisher) {
        flags |= OWN_PUBLISHER;
        const written = block.write(publisher, at + 4, 'utf8');
        block.writeUInt32LE(written, at);
        at += 4 + written;
      }
    }
    lastPublisher = publisher;
    const p = m.payload;
    block.writeUInt32LE(textBytes[i], at);
    at += 4;
    if (p.type === 'binary') {
      block.set(p.value, at);
      at += p.value.byteLength;
    } else if (p.type !== 'boolean') {
      at += block.write(p.value, at, 'utf8');
    }
    const packed = extras[i];
    if (packed !== null) {
      flags |= HAS_EXTRAS;
      block.writeUInt32LE(packed.length, at);
      packed.copy(block, at + 4);
      at += 4 + packed.length;
    }
    block[flagsAt] = flags;
    block.writeUInt32LE(at - start - 4, start);
  }
  return block;
}

/**
 * Where each entry of a block is, found by one walk over it; entries decode on demand.
 * `seqs` are ascending (a block holds a run of the log, with holes where messages were trimmed).
 */
export class ScannedBlock {
  readonly count: number;
  readonly seqs: number[];
  readonly topicIds: Uint32Array;
  private readonly offsets: Int32Array;
  /** Offset of the create_ts bytes in force for each entry (its own or an earlier entry's). */
  private readonly tsAt: Int32Array;
  /** Offset of the publisher in force for each entry (its length field), −1: none. */
  private readonly publisherAt: Int32Array;

  constructor(readonly key: number, readonly bytes: Buffer) {
    if (bytes[0] !== VERSION) throw new Error(`message log block ${key}: unknown format ${bytes[0]}`);
    const n = bytes.readUInt32LE(1);
    this.count = n;
    this.seqs = new Array<number>(n);
    this.topicIds = new Uint32Array(n);
    this.offsets = new Int32Array(n);
    this.tsAt = new Int32Array(n);
    this.publisherAt = new Int32Array(n);
    let at = HEADER;
    let ts = -1;
    let publisher = -1;
    for (let i = 0; i < n; i++) {
      this.offsets[i] = at;
      this.seqs[i] = key + bytes.readUInt32LE(at + 4);
      this.topicIds[i] = bytes.readUInt32LE(at + 8);
      const flags = bytes[at + 12];
      let field = at + 15;
      if ((flags & OWN_TIMESTAMP) !== 0) { ts = field; field += 1 + bytes[field]; }
      if ((flags & HAS_PUBLISHER) === 0) publisher = -1;
      else if ((flags & OWN_PUBLISHER) !== 0) publisher = field;
      this.tsAt[i] = ts;
      this.publisherAt[i] = publisher;
      at += 4 + bytes.readUInt32LE(at);
    }
  }

  get lastSeq(): number {
    return this.seqs[this.count - 1];
  }

  /** The index of `seq` in this block, −1 when absent. */
  indexOf(seq: number): number {
    const i = lowerBound(this.seqs, seq);
    return i < this.count && this.seqs[i] === seq ? i : -1;
  }

  /** The index of the first entry whose sequence is ≥ `seq` (count when none). */
  firstAtOrAfter(seq: number): number {
    return lowerBound(this.seqs, seq);
  }

  createTsOf(i: number): string {
    const at = this.tsAt[i];
    return this.bytes.toString('latin1', at + 1, at + 1 + this.bytes[at]);
  }

  /** Entry `i` as the log's positional values. */
  values(i: number): StoredValues {
    const b = this.bytes;
    const at = this.offsets[i];
    const flags = b[at + 12];
    const qos = b[at + 13];
    const type = b[at + 14];
    let field = at + 15;
    if ((flags & OWN_TIMESTAMP) !== 0) field += 1 + b[field];
    if ((flags & OWN_PUBLISHER) !== 0) field += 4 + b.readUInt32LE(field);
    const pub = this.publisherAt[i];
    const publisher = pub < 0 ? null : b.toString('utf8', pub + 4, pub + 4 + b.readUInt32LE(pub));
    const length = b.readUInt32LE(field);
    field += 4;
    let payload: VariantValue;
    switch (type) {
      case JSON_PAYLOAD: payload = { type: 'json', value: b.toString('utf8', field, field + length) }; break;
      case STRING_PAYLOAD: payload = { type: 'string', value: b.toString('utf8', field, field + length) }; break;
      case BINARY_PAYLOAD: payload = { type: 'binary', value: Buffer.from(b.subarray(field, field + length)) }; break;
      default: payload = { type: 'boolean', value: type === TRUE_PAYLOAD };
    }
    field += length;
    let extras: unknown[] = NO_EXTRAS;
    if ((flags & HAS_EXTRAS) !== 0) {
      const size = b.readUInt32LE(field);
      extras = extrasPackr.unpack(b.subarray(field + 4, field + 4 + size)) as unknown[];
    }
    return [
      this.topicIds[i], this.createTsOf(i), payload, qos, (flags & RETAIN) !== 0,
      extras[0], extras[1], extras[2], extras[3], extras[4], extras[5], publisher,
    ];
  }
}

const NO_EXTRAS: unknown[] = [null, null, null, null, null, null];

/** The message input of stored values (to write an entry again, when a block is rewritten). */
export function inputOf(v: StoredValues): MessageInput {
  return {
    createTs: v[1] as string, payload: v[2] as VariantValue, qos: v[3] as number, retain: v[4] as boolean,
    contentType: v[5] as string | null, correlationData: v[6] as Uint8Array | null, responseTopic: v[7] as string | null,
    expirySeconds: v[8] as number | null, userProperties: v[9] as MessageInput['userProperties'],
    payloadFormat: v[10] as number | null, publisher: v[11] as string | null,
  };
}
