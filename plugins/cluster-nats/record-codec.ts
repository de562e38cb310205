/**
 * A stream record: the operation entries of one node's turn of writes, msgpack-encoded as an
 * array. msgpack keeps what entries carry (bytes, big integers, `undefined` for a value not
 * supplied); test/storage/replay.test.ts applies entries encoded this way and gets the same store.
 *
 * A `messages.append` entry, most of a busy stream, travels in columns (`AppendColumns`): each
 * message is a run of plain values in one array, its topic, timestamp and publisher an index into
 * the record's lists of distinct ones. Messages as msgpackr records cost every node more: the
 * decoder reads each record's structure definitions anew and builds a reader for each (5-8% of a
 * node's main thread under QoS 1 load, measured with perf), and they took 162 bytes for a
 * 100-byte payload where columns take 108.
 *
 * Other entries are written as msgpackr records (each names its keys once, inline, so every
 * record decodes alone: no structures shared between records or nodes). Records written by
 * earlier versions (messages as records, or plain maps) decode as before.
 */
import { Packr } from 'msgpackr';
import type { MessagesAppendEntry, OperationEntry } from '../../kernel/storage/operation-entries';
import type { LogAppend } from '../../kernel/storage/message-log-port';
import type { MessageInput } from '../../kernel/storage/storage-port';

const packr = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true });

/** The wire form of a `messages.append` entry; never applied as such (decodeRecord turns it back). */
interface AppendColumns {
  op: 'messages.append.columns';
  topics: string[];
  stamps: string[];
  publishers: string[];
  /**
   * Per message: topic index, stamp index, publisher index (-1: none), flags, payload value, then,
   * when FLAG_EXTRAS is set, an array of the optional fields. A message of another shape (FLAG_RAW)
   * is its whole LogAppend instead.
   */
  rows: unknown[];
}

const COLUMNS_OP = 'messages.append.columns';
const PAYLOAD_TYPES = ['json', 'string', 'binary', 'boolean'] as const;
/** flags: bits 0-1 QoS, then: */
const FLAG_RETAIN = 4;
const FLAG_EXTRAS = 8;
const FLAG_RAW = 16;
/** flags >> PAYLOAD_SHIFT: the payload's type (PAYLOAD_TYPES). */
const PAYLOAD_SHIFT = 5;

export function encodeRecord(entries: readonly OperationEntry[]): Uint8Array {
  let wire: unknown[] | undefined;
  for (let i = 0; i < entries.length; i++) {
    if (entries[i].op !== 'messages.append') continue;
    wire ??= entries.slice();
    wire[i] = toColumns(entries[i] as MessagesAppendEntry);
  }
  return packr.pack(wire ?? entries);
}

export function decodeRecord(bytes: Uint8Array): OperationEntry[] {
  const entries = packr.unpack(bytes) as unknown;
  if (!Array.isArray(entries)) throw new Error('a stream record holds an array of operation entries');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as { op?: unknown } | null;
    if (entry !== null && typeof entry === 'object' && entry.op === COLUMNS_OP) entries[i] = fromColumns(entry as AppendColumns);
  }
  return entries as OperationEntry[];
}

function indexIn(list: string[], index: Map<string, number>, value: string): number {
  let at = index.get(value);
  if (at === undefined) {
    at = list.length;
    list.push(value);
    index.set(value, at);
  }
  return at;
}

function payloadTypeOf(payload: unknown): number {
  if (payload === null || typeof payload !== 'object') return -1;
  return (PAYLOAD_TYPES as readonly unknown[]).indexOf((payload as { type?: unknown }).type);
}

function toColumns(entry: MessagesAppendEntry): AppendColumns {
  const topics: string[] = [];
  const stamps: string[] = [];
  const publishers: string[] = [];
  const topicIndex = new Map<string, number>();
  const stampIndex = new Map<string, number>();
  const publisherIndex = new Map<string, number>();
  const rows: unknown[] = [];
  const messages = entry.messages;
  for (let i = 0; i < messages.length; i++) {
    const append = messages[i];
    const m = append.message;
    const type = payloadTypeOf(m.payload);
    const qos = m.qos;
    if (type < 0 || typeof append.topic !== 'string' || typeof m.createTs !== 'string' || (qos !== 0 && qos !== 1 && qos !== 2)
      || typeof m.retain !== 'boolean' || (m.publisher !== null && typeof m.publisher !== 'string')) {
      rows.push(0, 0, 0, FLAG_RAW, append);
      continue;
    }
    const extras = m.contentType !== null || m.correlationData !== null || m.responseTopic !== null
      || m.expirySeconds !== null || m.userProperties !== null || m.payloadFormat !== null;
    rows.push(
      indexIn(topics, topicIndex, append.topic),
      indexIn(stamps, stampIndex, m.createTs),
      m.publisher === null ? -1 : indexIn(publishers, publisherIndex, m.publisher),
      qos | (m.retain ? FLAG_RETAIN : 0) | (extras ? FLAG_EXTRAS : 0) | (type << PAYLOAD_SHIFT),
      m.payload.value,
    );
    if (extras) rows.push([m.contentType, m.correlationData, m.responseTopic, m.expirySeconds, m.userProperties, m.payloadFormat]);
  }
  return { op: COLUMNS_OP, topics, stamps, publishers, rows };
}

function fromColumns(columns: AppendColumns): MessagesAppendEntry {
  const { topics, stamps, publishers, rows } = columns;
  const messages: LogAppend[] = [];
  for (let i = 0; i < rows.length;) {
    const topic = rows[i++] as number;
    const stamp = rows[i++] as number;
    const publisher = rows[i++] as number;
    const flags = rows[i++] as number;
    const value = rows[i++];
    if ((flags & FLAG_RAW) !== 0) {
      messages.push(value as LogAppend);
      continue;
    }
    const extras = (flags & FLAG_EXTRAS) !== 0 ? rows[i++] as unknown[] : null;
    // The fields in MessageInput's order, as the publishing paths build them (one object shape).
    const message: MessageInput = {
      createTs: stamps[stamp],
      payload: { type: PAYLOAD_TYPES[flags >> PAYLOAD_SHIFT], value } as MessageInput['payload'],
      qos: flags & 3,
      retain: (flags & FLAG_RETAIN) !== 0,
      contentType: extras === null ? null : extras[0] as string | null,
      correlationData: extras === null ? null : extras[1] as Uint8Array | null,
      responseTopic: extras === null ? null : extras[2] as string | null,
      expirySeconds: extras === null ? null : extras[3] as number | null,
      userProperties: extras === null ? null : extras[4] as MessageInput['userProperties'],
      payloadFormat: extras === null ? null : extras[5] as number | null,
      publisher: publisher < 0 ? null : publishers[publisher],
    };
    messages.push({ topic: topics[topic], message });
  }
  return { op: 'messages.append', messages };
}
