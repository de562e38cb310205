/**
 * The message core's durable state beside the log (LogStatePort, kernel/storage/message-log-port.ts)
 * on LMDB: string keys, msgpack values, in one of two named databases:
 * - `log:state` (MessageLogPort.state): what every node of a cluster shares; each write is an
 *   operation entry (`state.put`, `state.remove`: apply-entry.ts) and is replayed with the log;
 * - `log:local` (MessageLogPort.localState): this process's own (checkpoints, caches): written
 *   directly, never an entry, never replayed.
 *
 * A write goes through `env.write`, so it joins the batched commit of the current event-loop turn,
 * the one the turn's appends join too (lmdb-js queues both callbacks into the same batch), and its
 * promise resolves once that commit is durable. lmdb-js runs the callback only when the batch is
 * written, after the turn: until then a write is kept in `pending`, so reads see it at once.
 *
 * The value is encoded when `put` is called, not when the batch runs: a value the caller mutates
 * afterwards is stored (and read) as it was, and a value msgpack cannot encode is refused before
 * anything is queued.
 */
import { createHash } from 'node:crypto';
import { asBinary, type Database } from 'lmdb';
import { EngineError } from '../../kernel/errors';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { LmdbEnvironment } from './environment';

import type { OperationLog } from './apply-entry';

export const LOG_STATE_DB = 'log:state';
export const LOCAL_STATE_DB = 'log:local';
/**
 * Keys up to this many UTF-8 bytes are LMDB keys as they are. A longer one (a retained topic may
 * be 65,535 bytes; LMDB keys hold 1,978) is stored under its first bytes (at most this many)
 * ‖ "#" ‖ its SHA-256, always longer than this, so it never meets a short key; its value is
 * then [key, value].
 */
const SHORT_KEY_BYTES = 1000;

type StateDb = Database<unknown, string>;

/** A write issued but not yet committed: its value as read back, or removed. */
interface PendingWrite {
  removed: boolean;
  value: unknown;
}

/** A value encoded for its key. */
interface Encoded {
  bytes: Buffer;
  readBack: unknown;
}

interface Codec {
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

/** Code point order (= the UTF-8 byte order LMDB sorts string keys in), unlike `<` on UTF-16. */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new EngineError('INVALID_PARAMETER', { param: 'key', reason: 'a state key is a non-empty string' });
  }
}

/** The longest start of `key` of at most `bytes` UTF-8 bytes (never splitting a character). */
function leading(key: string, bytes: number): string {
  if (Buffer.byteLength(key, 'utf8') <= bytes) return key;
  let out = '';
  let used = 0;
  for (const char of key) {
    const size = Buffer.byteLength(char, 'utf8');
    if (used + size > bytes) break;
    out += char;
    used += size;
  }
  return out;
}

const isLong = (key: string): boolean => Buffer.byteLength(key, 'utf8') > SHORT_KEY_BYTES;

/** The LMDB key of a state key. */
function storedKey(key: string): string {
  if (!isLong(key)) return key;
  return `${leading(key, SHORT_KEY_BYTES)}#${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

export class LmdbLogState implements LogStatePort {
  readonly db: StateDb;
  private readonly pending = new Map<string, PendingWrite>();

  /** `operations`: the store's entries, for the shared state; null for the local one. */
  constructor(private readonly env: LmdbEnvironment, dbName: string, private readonly operations: OperationLog | null) {
    this.db = env.root.openDB<unknown, string>(dbName, {}) as StateDb;
  }

  get(key: string): unknown {
    const write = this.pending.get(key);
    if (write) return write.removed ? undefined : write.value;
    if (typeof key !== 'string' || key.length === 0) return undefined;
    const stored = this.db.get(storedKey(key));
    if (stored === undefined || !isLong(key)) return stored;
    const [fullKey, value] = stored as [string, unknown];
    return fullKey === key ? value : undefined;
  }

  entries(prefix: string): Iterable<[string, unknown]> {
    const text = String(prefix ?? '');
    const overlay: string[] = [];
    for (const key of this.pending.keys()) if (key.startsWith(text)) overlay.push(key);
    let sorted = true;
    const committed = [...this.committed(text, () => { sorted = false; })];
    if (overlay.length === 0 && sorted) return committed;
    // Few pending writes (and long keys) at a time: merge them into the committed range, in key order.
    const merged = new Map<string, unknown>(committed);
    for (const key of overlay) {
      const write = this.pending.get(key)!;
      if (write.removed) merged.delete(key);
      else merged.set(key, write.value);
    }
    return [...merged].sort((a, b) => compareKeys(a[0], b[0]));
  }

  /**
   * The committed entries whose key starts with `prefix`, in LMDB order, which is key order
   * unless a long key is met (`onLong` is told).
   */
  private *committed(prefix: string, onLong: () => void): Generator<[string, unknown]> {
    const start = leading(prefix, SHORT_KEY_BYTES - 4);
    for (const { key, value } of this.db.getRange(start === '' ? {} : { start })) {
      if (typeof key !== 'string' || !key.startsWith(start)) return;
      if (!isLong(key)) {
        if (key.startsWith(prefix)) yield [key, value];
        continue;
      }
      const [fullKey, fullValue] = value as [string, unknown];
      if (!fullKey.startsWith(prefix)) continue;
      onLong();
      yield [fullKey, fullValue];
    }
  }

  put(key: string, value: unknown): Promise<void> {
    let encoded: Encoded;
    try {
      checkKey(key);
      if (value === undefined) throw new EngineError('INVALID_PARAMETER', { param: 'value', reason: 'undefined is stored as remove' });
      encoded = this.encode(key, value);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.operations === null) return this.applyPut(key, encoded.readBack, encoded);
    return this.operations.submit({ op: 'state.put', key, value: encoded.readBack }, encoded);
  }

  remove(key: string): Promise<void> {
    try {
      checkKey(key);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.operations === null) return this.applyRemove(key);
    return this.operations.submit({ op: 'state.remove', key });
  }

  /** The bytes a value is stored as, and the value as read back from them (a copy the caller cannot change). */
  private encode(key: string, value: unknown): Encoded {
    const codec = this.db as unknown as { encoder: Codec; decoder: Codec };
    const bytesOf = (v: unknown): Buffer => Buffer.from(codec.encoder.encode(v)); // a copy: the encoder reuses its buffer
    let bytes = bytesOf(value);
    const readBack = codec.decoder.decode(bytes);
    if (isLong(key)) bytes = bytesOf([key, readBack]);
    return { bytes, readBack };
  }

  /** Applies a `state.put` entry (apply-entry.ts); `encoded`: the value as `put` encoded it. */
  applyPut(key: string, value: unknown, encoded?: unknown): Promise<void> {
    checkKey(key);
    const { bytes, readBack } = (encoded as Encoded | undefined) ?? this.encode(key, value);
    return this.issue(key, { removed: false, value: readBack }, () => { this.db.put(storedKey(key), asBinary(bytes)); });
  }

  /** Applies a `state.remove` entry (apply-entry.ts). */
  applyRemove(key: string): Promise<void> {
    checkKey(key);
    return this.issue(key, { removed: true, value: undefined }, () => { this.db.remove(storedKey(key)); });
  }

  /** Queues `action` in the turn's commit, visible to reads until that commit settles. */
  private async issue(key: string, write: PendingWrite, action: () => void): Promise<void> {
    this.env.assertOpen();
    this.pending.set(key, write);
    try {
      await this.env.write(action);
    } finally {
      // A later write of the key commits no earlier: only this write's own entry goes.
      if (this.pending.get(key) === write) this.pending.delete(key);
    }
  }
}
