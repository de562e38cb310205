/**
 * Reads of the message log (kernel/storage/message-log-port.ts; message-log.ts writes it): the
 * topic catalog, one message by sequence, the next messages of all topics, a topic's messages
 * through its index, and what the integration-table views read (topic-table-view.ts). Keeps the last blocks it
 * scanned; the writer tells it to forget them when a commit rewrote or removed blocks.
 */
import type { Database } from 'lmdb';
import type { LoggedMessage, LogTopic, TopicReadOptions } from '../../kernel/storage/message-log-port';
import type { Catalog } from './catalog';
import { ScannedBlock, type StoredValues } from './log-blocks';
import type { TopicMessages } from './topic-table-view';
import type { SequenceRange, TopicIndex } from './topic-index';

/** The `log:blocks` sub-database: key = the first sequence of a block. */
export type BlockDb = Database<Buffer, number>;

const MAX_SEQ = Number.MAX_SAFE_INTEGER;
/** Scanned blocks kept for readers walking the log or a topic. */
const MAX_CACHED_BLOCKS = 16;

export class LogReads implements TopicMessages {
  /** Scanned blocks by key, least recently used first. */
  private readonly blocks = new Map<number, ScannedBlock>();
  private sortedTopics: LogTopic[] = [];
  private sortedTopicsVersion = -1;

  constructor(
    private readonly log: BlockDb,
    private readonly catalog: Catalog,
    private readonly topicIndex: TopicIndex,
  ) {}

  // ---- blocks --------------------------------------------------------------------------------

  private scanned(key: number, bytes: Buffer): ScannedBlock {
    const block = new ScannedBlock(key, bytes);
    if (this.blocks.size >= MAX_CACHED_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
    this.blocks.set(key, block);
    return block;
  }

  /** The block holding `seq` (or the one before the gap it falls in), undefined before the first. */
  blockOf(seq: number): ScannedBlock | undefined {
    for (const block of this.blocks.values()) {
      if (block.key <= seq && seq <= block.lastSeq) return block;
    }
    for (const { key, value } of this.log.getRange({ start: seq, reverse: true, limit: 1 })) {
      return this.blocks.get(key) ?? this.scanned(key, value);
    }
    return undefined;
  }

  /** Blocks in log order, from the one holding `seq` (or the first after it). */
  *blocksFrom(seq: number): Generator<ScannedBlock> {
    let start = seq;
    for (const key of this.log.getKeys({ start: seq, reverse: true, limit: 1 })) start = key;
    for (const { key, value } of this.log.getRange({ start })) {
      yield this.blocks.get(key) ?? this.scanned(key, value);
    }
  }

  /** Forgets a scanned block (a write is about to rewrite or remove it). */
  forgetBlock(key: number): void {
    this.blocks.delete(key);
  }

  /** Forgets every scanned block (a commit rewrote or removed some). */
  forgetBlocks(): void {
    this.blocks.clear();
  }

  // ---- topics --------------------------------------------------------------------------------

  getTopic(topic: string): LogTopic | undefined {
    return this.catalog.topics.get(topic);
  }

  listTopics(): LogTopic[] {
    // Sorted once per change of the catalog (the explorer asks often, at 100,000 topics).
    if (this.sortedTopicsVersion !== this.catalog.topicsVersion) {
      this.sortedTopics = [...this.catalog.topics.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
      this.sortedTopicsVersion = this.catalog.topicsVersion;
    }
    return this.sortedTopics.slice();
  }

  topicCount(): number {
    return this.catalog.topics.size;
  }

  topicsVersion(): number {
    return this.catalog.topicsVersion;
  }

  // ---- messages ------------------------------------------------------------------------------

  private message(seq: number, v: StoredValues): LoggedMessage | undefined {
    const info = this.catalog.topicsById.get(v[0] as number);
    if (!info) return undefined;
    return {
      sequence: seq, topic: info.topic, createTs: v[1] as string, payload: v[2] as LoggedMessage['payload'],
      qos: v[3] as number, retain: v[4] as boolean, contentType: v[5] as string | null,
      correlationData: v[6] as Uint8Array | null, responseTopic: v[7] as string | null,
      expirySeconds: v[8] as number | null, userProperties: v[9] as LoggedMessage['userProperties'],
      payloadFormat: v[10] as number | null, publisher: v[11] as string | null,
    };
  }

  read(sequence: number): LoggedMessage | undefined {
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) return undefined;
    const block = this.blockOf(sequence);
    const i = block === undefined ? -1 : block.indexOf(sequence);
    // undefined too when its topic was deleted (purge pending)
    return i < 0 ? undefined : this.message(sequence, block!.values(i));
  }

  readFrom(after: number, limit: number): LoggedMessage[] {
    const out: LoggedMessage[] = [];
    const max = Math.floor(Number(limit));
    if (!(max > 0)) return out;
    const start = Math.max(0, Math.floor(Number(after) || 0)) + 1;
    for (const block of this.blocksFrom(start)) {
      for (let i = block.firstAtOrAfter(start); i < block.count; i++) {
        if (!this.catalog.topicsById.has(block.topicIds[i])) continue;
        const m = this.message(block.seqs[i], block.values(i));
        if (m) out.push(m);
        if (out.length >= max) return out;
      }
    }
    return out;
  }

  readTopic(topic: string, options: TopicReadOptions): LoggedMessage[] {
    const out: LoggedMessage[] = [];
    const info = this.catalog.topics.get(topic);
    const max = Math.floor(Number(options?.limit));
    if (!info || !(max > 0)) return out;
    const from = Math.ceil(options.from ?? 0);
    const to = Math.floor(options.to ?? MAX_SEQ);
    if (from > to) return out;
    const range: SequenceRange = options.reverse === true ? { start: to, end: from - 1, reverse: true } : { start: from, end: to + 1 };
    let skip = options.skip !== undefined && options.skip > 0 ? Math.floor(options.skip) : 0;
    for (const seq of this.topicIndex.sequences(info.topicId, range)) {
      if (skip > 0) { skip--; continue; }
      const v = this.valuesOf(info.topicId, seq);
      if (v === undefined) continue;
      const m = this.message(seq, v);
      if (m) out.push(m);
      if (out.length >= max) break;
    }
    return out;
  }

  countTopic(topic: string, fromSequence = 0): number {
    const info = this.catalog.topics.get(topic);
    return info ? this.topicIndex.count(info.topicId, fromSequence) : 0;
  }

  // ---- for the integration-table views (TopicMessages) -----------------------------------------

  /** The values of message `seq` if it belongs to the topic. */
  valuesOf(topicId: number, seq: number): StoredValues | undefined {
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
    const block = this.blockOf(seq);
    if (block === undefined) return undefined;
    const i = block.indexOf(seq);
    return i < 0 || block.topicIds[i] !== topicId ? undefined : block.values(i);
  }

  /** Sequences of a topic, from `start` (inclusive) towards `end` (exclusive), per lmdb-js range rules on sequences. */
  sequences(topicId: number, options: SequenceRange): Generator<number> {
    return this.topicIndex.sequences(topicId, options);
  }

  countOfTopic(topicId: number): number {
    return this.topicIndex.count(topicId);
  }
}
