/**
 * The message core's durable state beside the log (LogStatePort, kernel/storage/message-log-port.ts)
 * on LMDB: the named database `log:state`, string keys, msgpack values.
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
import { asBinary, type Database } from 'lmdb';
import { EngineError } from '../../kernel/errors';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { LmdbEnvironment } from './environment';

export const LOG_STATE_DB = 'log:state';
/** LMDB's key limit (lmdb-js `maxKeySize`, 1,978 bytes). */
const MAX_KEY_BYTES = 1978;

type StateDb = Database<unknown, string>;

/** A write issued but not yet committed: its value as read back, or removed. */
interface PendingWrite {
  removed: boolean;
  value: unknown;
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
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) {
    throw new EngineError('INVALID_PARAMETER', { param: 'key', reason: `a state key is a string of 1 to ${MAX_KEY_BYTES} bytes` });
  }
}

export class LmdbLogState implements LogStatePort {
  readonly db: StateDb;
  private readonly pending = new Map<string, PendingWrite>();

  constructor(private readonly env: LmdbEnvironment) {
    this.db = env.root.openDB<unknown, string>(LOG_STATE_DB, {}) as StateDb;
  }

  get(key: string): unknown {
    const write = this.pending.get(key);
    if (write) return write.removed ? undefined : write.value;
    return typeof key === 'string' && key.length > 0 ? this.db.get(key) : undefined;
  }

  entries(prefix: string): Iterable<[string, unknown]> {
    const text = String(prefix ?? '');
    const overlay: string[] = [];
    for (const key of this.pending.keys()) if (key.startsWith(text)) overlay.push(key);
    if (overlay.length === 0) return this.committed(text);
    // Few pending writes at a time: merge them into the committed range, in key order.
    const merged = new Map<string, unknown>(this.committed(text));
    for (const key of overlay) {
      const write = this.pending.get(key)!;
      if (write.removed) merged.delete(key);
      else merged.set(key, write.value);
    }
    return [...merged].sort((a, b) => compareKeys(a[0], b[0]));
  }

  /** The committed entries whose key starts with `prefix`, in key order. */
  private *committed(prefix: string): Generator<[string, unknown]> {
    for (const { key, value } of this.db.getRange(prefix === '' ? {} : { start: prefix })) {
      if (typeof key !== 'string' || !key.startsWith(prefix)) return;
      yield [key, value];
    }
  }

  put(key: string, value: unknown): Promise<void> {
    let bytes: Buffer;
    let readBack: unknown;
    try {
      checkKey(key);
      if (value === undefined) throw new EngineError('INVALID_PARAMETER', { param: 'value', reason: 'undefined is stored as remove' });
      const codec = this.db as unknown as { encoder: Codec; decoder: Codec };
      bytes = Buffer.from(codec.encoder.encode(value)); // a copy: the encoder reuses its buffer
      readBack = codec.decoder.decode(bytes);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.issue(key, { removed: false, value: readBack }, () => { this.db.put(key, asBinary(bytes)); });
  }

  remove(key: string): Promise<void> {
    try {
      checkKey(key);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.issue(key, { removed: true, value: undefined }, () => { this.db.remove(key); });
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
