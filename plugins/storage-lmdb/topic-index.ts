/**
 * The message log's per-topic index: which sequences each topic holds.
 *
 * Stored as chunks in `log:chunks`: key = topic id (4 bytes BE) ‖ first sequence (8 bytes BE),
 * value = the chunk's sequences as u32 LE offsets from the first (at most CHUNK_MAX, so a chunk
 * stays inside an LMDB page). The index is derived from the log, so it is written behind it:
 * sequences whose messages are durable wait in memory (`pending`) and are written in bulk
 * (every FLUSH_MS, or at FLUSH_COUNT waiting, or at close), together with the watermark
 * `['log-indexed']` saying every message up to it is indexed. A crash loses only pending
 * entries, and the next open indexes the log past the watermark again. Writing behind is what
 * keeps a commit of 500 messages over 10,000 topics from dirtying 500 index pages: a flush
 * writes one chunk per topic for up to five seconds of traffic.
 *
 * Readers see chunks and pending merged. While a flush's commit is under way the same sequence
 * may be in both: pending sequences are the topic's newest, so a reader takes chunk entries
 * below the first pending one and the pending ones after.
 */
import type { Database } from 'lmdb';
import type { LmdbEnvironment } from './environment';
import { lowerBound } from '../../lib/sorted';

export type ChunkDb = Database<Buffer, Buffer>;

export const CHUNK_DB = 'log:chunks';
const CHUNK_MAX = 480;
const TWO_32 = 4294967296;
const MAX_SEQ = Number.MAX_SAFE_INTEGER;
/** How long a durable message may wait unindexed, and how many may. */
const FLUSH_MS = 5000;
const FLUSH_COUNT = 1_000_000;
const WATERMARK_KEY = ['log-indexed'];

/** The `log:chunks` key of (topic id, sequence). */
export function chunkKey(topicId: number, seq: number): Buffer {
  const key = Buffer.allocUnsafe(12);
  key.writeUInt32BE(topicId >>> 0, 0);
  const s = seq < 0 ? 0 : seq > MAX_SEQ ? MAX_SEQ : Math.floor(seq);
  const hi = Math.floor(s / TWO_32);
  key.writeUInt32BE(hi >>> 0, 4);
  key.writeUInt32BE((s - hi * TWO_32) >>> 0, 8);
  return key;
}

function seqOfKey(key: Buffer): number {
  return key.readUInt32BE(4) * TWO_32 + key.readUInt32BE(8);
}

function chunkSeqs(first: number, value: Buffer): number[] {
  const n = value.length >>> 2;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = first + value.readUInt32LE(i * 4);
  return out;
}

function chunkValue(seqs: number[], from: number, to: number): Buffer {
  const value = Buffer.allocUnsafe((to - from) * 4);
  const first = seqs[from];
  for (let i = from; i < to; i++) value.writeUInt32LE(seqs[i] - first, (i - from) * 4);
  return value;
}

export interface SequenceRange {
  /** Forward: the lowest sequence (inclusive); reverse: the highest (inclusive). */
  start?: number;
  /** Forward: the bound above (exclusive); reverse: the bound below (exclusive). */
  end?: number;
  reverse?: boolean;
  exclusiveStart?: boolean;
}

export class TopicIndex {
  readonly db: ChunkDb;
  /** Durable sequences not yet in a chunk, per topic id, ascending. */
  private readonly pending = new Map<number, number[]>();
  private pendingCount = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly env: LmdbEnvironment,
    /** The log's last durable sequence: at a flush, every message up to it is in a chunk or pending. */
    private readonly durableSeq: () => number,
  ) {
    this.db = env.root.openDB<Buffer, Buffer>(CHUNK_DB, { keyEncoding: 'binary', encoding: 'binary' }) as ChunkDb;
  }

  /** Every message up to this sequence is in a chunk. */
  watermark(): number {
    return (this.env.catalog.get(WATERMARK_KEY) as number | undefined) ?? 0;
  }

  /** Adds a durable sequence of a topic. */
  add(topicId: number, seq: number): void {
    let list = this.pending.get(topicId);
    if (list === undefined) this.pending.set(topicId, list = []);
    // Appends become durable in sequence order but for one numbered inside a transaction callback.
    if (list.length === 0 || list[list.length - 1] < seq) list.push(seq);
    else list.splice(lowerBound(list, seq), 0, seq);
    if (++this.pendingCount >= FLUSH_COUNT) this.flushSoon(0);
    else if (this.timer === null) this.flushSoon(FLUSH_MS);
  }

  private flushSoon(ms: number): void {
    if (this.closed) return;
    if (this.timer !== null) {
      if (ms > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      // A failed commit keeps the sequences pending: the next flush tries again.
      this.flush().catch(() => this.flushSoon(FLUSH_MS));
    }, ms);
    this.timer.unref();
  }

  /**
   * Writes the pending sequences into chunks (one commit), with the watermark: every message up
   * to the log's durable sequence is then indexed. Flushes run one after another.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushNow());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async flushNow(): Promise<void> {
    if (this.env.isClosed) return;
    // Inside a write transaction: what is pending is read in the commit's own order, after any
    // trim or purge queued before it (taken earlier, a trimmed sequence could be written back).
    const taken = new Map<number, number[]>();
    await this.env.write(() => {
      taken.clear();
      for (const [topicId, seqs] of this.pending) {
        if (seqs.length === 0) continue;
        this.putChunks(topicId, seqs);
        taken.set(topicId, seqs.slice());
      }
      // Every durable message up to here is in a chunk now or was before (never past one in flight).
      const mark = this.durableSeq();
      if (mark > this.watermark()) this.env.catalog.put(WATERMARK_KEY, mark);
    });
    for (const [topicId, written] of taken) {
      const seqs = this.pending.get(topicId);
      if (seqs === undefined) continue;
      // Exactly the sequences written leave (both lists ascending).
      const kept: number[] = [];
      let w = 0;
      // Indexed: in this async function the for-of iterator's results were ~40 bytes a message.
      for (let i = 0; i < seqs.length; i++) {
        const seq = seqs[i];
        while (w < written.length && written[w] < seq) w++;
        if (w < written.length && written[w] === seq) continue;
        kept.push(seq);
      }
      this.pendingCount -= seqs.length - kept.length;
      if (kept.length === 0) this.pending.delete(topicId);
      else this.pending.set(topicId, kept);
    }
  }

  /**
   * Inside a write: the topic's pending sequences as new chunks. The topic's last chunk is not
   * read back to be filled up: a flush costs one put per topic and no read; a busy topic still
   * gets full chunks (a quiet one gets small ones).
   */
  private putChunks(topicId: number, seqs: number[]): void {
    for (let from = 0; from < seqs.length;) {
      let to = from + 1;
      while (to < seqs.length && to - from < CHUNK_MAX && seqs[to] - seqs[from] < TWO_32) to++;
      this.db.put(chunkKey(topicId, seqs[from]), chunkValue(seqs, from, to));
      from = to;
    }
  }

  /** Stops the timer and writes what is pending (before the environment closes). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) { clearTimeout(this.timer); this.timer = null; }
    await this.flush();
  }

  /** Sequences of a topic in order, from chunks and pending merged. */
  *sequences(topicId: number, range: SequenceRange = {}): Generator<number> {
    const reverse = range.reverse === true;
    const exclusive = range.exclusiveStart === true;
    let low = 0;
    let high = MAX_SEQ;
    if (reverse) {
      if (range.start !== undefined) high = exclusive ? range.start - 1 : range.start;
      if (range.end !== undefined) low = range.end + 1;
    } else {
      if (range.start !== undefined) low = exclusive ? range.start + 1 : range.start;
      if (range.end !== undefined) high = range.end - 1;
    }
    if (low > high) return;
    const pending = this.pending.get(topicId);
    const pendingFirst = pending !== undefined && pending.length > 0 ? pending[0] : MAX_SEQ + 1;
    if (!reverse) {
      for (const seq of this.chunked(topicId, low, Math.min(high, pendingFirst - 1), false)) yield seq;
      if (pending !== undefined) {
        for (let i = lowerBound(pending, low); i < pending.length && pending[i] <= high; i++) yield pending[i];
      }
      return;
    }
    if (pending !== undefined) {
      for (let i = lowerBound(pending, high + 1) - 1; i >= 0 && pending[i] >= low; i--) yield pending[i];
    }
    yield* this.chunked(topicId, low, Math.min(high, pendingFirst - 1), true);
  }

  /** Chunk entries of a topic within [low, high]. */
  private *chunked(topicId: number, low: number, high: number, reverse: boolean): Generator<number> {
    if (low > high) return;
    // The chunk holding `low` starts at or before it: begin from the last chunk key ≤ (topic, low).
    let startSeq = low;
    for (const key of this.db.getKeys({ start: chunkKey(topicId, low), end: chunkKey(topicId, 0), reverse: true, limit: 1 })) {
      startSeq = seqOfKey(key as Buffer);
    }
    if (!reverse) {
      for (const { key, value } of this.db.getRange({ start: chunkKey(topicId, startSeq), end: chunkKey(topicId, high + 1) })) {
        const seqs = chunkSeqs(seqOfKey(key as Buffer), value as Buffer);
        for (let i = lowerBound(seqs, low); i < seqs.length; i++) {
          if (seqs[i] > high) return;
          yield seqs[i];
        }
      }
      return;
    }
    for (const { key, value } of this.db.getRange({ start: chunkKey(topicId, high), end: chunkKey(topicId, startSeq), reverse: true })) {
      yield* this.descending(chunkSeqs(seqOfKey(key as Buffer), value as Buffer), low, high);
    }
    // `end` is exclusive in a reverse range: the chunk starting at startSeq itself.
    const first = this.db.get(chunkKey(topicId, startSeq));
    if (first !== undefined && startSeq <= high) yield* this.descending(chunkSeqs(startSeq, first), low, high);
  }

  private *descending(seqs: number[], low: number, high: number): Generator<number> {
    for (let i = lowerBound(seqs, high + 1) - 1; i >= 0; i--) {
      if (seqs[i] < low) return;
      yield seqs[i];
    }
  }

  /** How many messages the topic holds from `fromSeq` on. */
  count(topicId: number, fromSeq = 0): number {
    const pending = this.pending.get(topicId);
    const pendingFirst = pending !== undefined && pending.length > 0 ? pending[0] : MAX_SEQ + 1;
    let n = 0;
    for (const { key, value } of this.db.getRange({ start: chunkKey(topicId, 0), end: chunkKey(topicId + 1, 0) })) {
      const first = seqOfKey(key as Buffer);
      const v = value as Buffer;
      const size = v.length >>> 2;
      const last = first + v.readUInt32LE((size - 1) * 4);
      if (last < fromSeq) continue;
      if (first >= fromSeq && last < pendingFirst) { n += size; continue; }
      for (let i = 0; i < size; i++) {
        const s = first + v.readUInt32LE(i * 4);
        if (s >= fromSeq && s < pendingFirst) n++;
      }
    }
    if (pending !== undefined) n += pending.length - lowerBound(pending, fromSeq);
    return n;
  }

  /**
   * Inside a write: removes a topic's sequences up to `upTo` (all when MAX_SEQ), except `keep`,
   * at most `limit` of them; returns those removed, ascending.
   */
  removeInTxn(topicId: number, upTo: number, limit: number, keep?: number): number[] {
    const removed: number[] = [];
    const pending = this.pending.get(topicId);
    for (const { key, value } of this.db.getRange({ start: chunkKey(topicId, 0), end: chunkKey(topicId + 1, 0) })) {
      if (removed.length >= limit) break;
      const first = seqOfKey(key as Buffer);
      if (first > upTo) break;
      const seqs = chunkSeqs(first, value as Buffer);
      const kept: number[] = [];
      for (const s of seqs) {
        if (s <= upTo && s !== keep && removed.length < limit) removed.push(s);
        else kept.push(s);
      }
      if (kept.length === seqs.length) continue;
      this.db.remove(Buffer.from(key as Buffer));
      if (kept.length > 0) this.db.put(chunkKey(topicId, kept[0]), chunkValue(kept, 0, kept.length));
    }
    if (pending !== undefined && removed.length < limit) {
      const kept: number[] = [];
      for (const s of pending) {
        if (s <= upTo && s !== keep && removed.length < limit) {
          // A pending sequence also in a chunk (a flush under way) was just counted there.
          if (removed.length === 0 || removed[removed.length - 1] < s) removed.push(s);
        } else {
          kept.push(s);
        }
      }
      this.pendingCount -= pending.length - kept.length;
      if (kept.length === 0) this.pending.delete(topicId);
      else this.pending.set(topicId, kept);
    }
    return removed;
  }

  /** Forgets a deleted topic's pending sequences (its chunks go with its purge). */
  forget(topicId: number): void {
    const pending = this.pending.get(topicId);
    if (pending === undefined) return;
    this.pendingCount -= pending.length;
    this.pending.delete(topicId);
  }
}
