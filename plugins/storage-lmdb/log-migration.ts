/**
 * Data folders written before the log was kept in blocks held one LMDB entry per message in
 * `log` (key = sequence, value = msgpack of the positional values, the layout StoredValues still
 * has) and an entry per message in `log:topic`. On open they are rewritten as blocks under the
 * same sequences, a batch per commit, and the old databases are dropped last: a crash midway
 * leaves them, and the next open writes the same blocks again.
 */
import type { LmdbEnvironment } from './environment';
import { encodeBlock, inputOf, BLOCK_MAX_ENTRIES, type BlockEntry, type StoredValues } from './log-blocks';

const LEGACY_LOG_DB = 'log';
const LEGACY_INDEX_DB = 'log:topic';
/** Messages rewritten per commit. */
const BATCH = 10_000;
const TWO_32 = 4294967296;

/** Whether the environment holds a named database of that name (they are keys of the main database). */
function hasDatabase(env: LmdbEnvironment, name: string): boolean {
  for (const key of env.root.getKeys({ start: name, limit: 1 })) return key === name;
  return false;
}

/**
 * Rewrites a legacy log into blocks (`put(key, block)` inside a synchronous transaction); returns
 * how many messages it moved. The caller rebuilds the topic index from the blocks afterwards.
 */
export function migrateLegacyLog(env: LmdbEnvironment, put: (key: number, block: Buffer) => void): number {
  if (!hasDatabase(env, LEGACY_LOG_DB)) return 0;
  const legacy = env.root.openDB<StoredValues, number>(LEGACY_LOG_DB, {});
  let moved = 0;
  let after = 0;
  for (;;) {
    const entries: BlockEntry[] = [];
    for (const { key, value } of legacy.getRange({ start: after + 1, limit: BATCH })) {
      entries.push({ seq: key as number, topicId: (value as StoredValues)[0] as number, message: inputOf(value as StoredValues) });
    }
    if (entries.length === 0) break;
    env.root.transactionSync(() => {
      for (let from = 0; from < entries.length;) {
        let to = from + 1;
        // A block's offsets are u32 from its key.
        while (to < entries.length && to - from < BLOCK_MAX_ENTRIES && entries[to].seq - entries[from].seq < TWO_32) to++;
        put(entries[from].seq, encodeBlock(entries, from, to));
        from = to;
      }
    });
    moved += entries.length;
    after = entries[entries.length - 1].seq;
  }
  legacy.dropSync();
  if (hasDatabase(env, LEGACY_INDEX_DB)) env.root.openDB(LEGACY_INDEX_DB, { keyEncoding: 'binary', encoding: 'binary' }).dropSync();
  return moved;
}
