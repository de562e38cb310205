/**
 * The raw LMDB reference: batched puts, 1,000 rows per write transaction, each transaction awaited
 * until durable on disk before the next one starts, for a fixed duration. Rows/s.
 *
 * Run as a child process by the benchmarks (so it has a process of its own, like the servers):
 *
 *   node dist/bench/raw-lmdb.js <rest|actions> <seconds> <dataDir> [rowsPerTransaction]
 *
 * prints one JSON line `{rows, seconds, rowsPerSecond, transactions}`.
 *
 * The environment is opened with the engine's options (plugins/storage-lmdb/environment.ts:
 * `overlappingSync: true`, each transaction awaited until its commit is synced: `durably`),
 * and the rows are what the engine stores for the same table:
 * - rest: a record (key = number id, value = msgpack array [name, qty, price, note]) and one
 *   entry of the `qty` index (13-byte key, empty value) per row;
 * - actions: a record (key = the row's own id, value = [name, qty, price, ts, note]) per row.
 */
import { open, type RootDatabase } from 'lmdb';
import { actionsValues, integerIndexKey, restRow, restValues } from './rows';

export type RawKind = 'rest' | 'actions';

export interface RawResult {
  kind: RawKind;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  transactions: number;
  rowsPerTransaction: number;
}

const EMPTY = Buffer.alloc(0);

/** An LMDB environment opened as the engine opens its own (plugins/storage-lmdb/environment.ts): the references' one setting. */
export function openAsEngine(dataDir: string): RootDatabase {
  return open({ path: dataDir, maxDbs: 8192, overlappingSync: true, noMemInit: false, noSubdir: false });
}

/**
 * A write queued just now, resolved once its commit is synced, as the engine answers
 * (LmdbEnvironment.durable): with overlappingSync lmdb-js resolves a write once committed, and
 * `flushed`, asked in the same synchronous run, is the sync of that commit (or a later one).
 */
export function durably<T>(root: RootDatabase, committed: Promise<T>): Promise<T> {
  const synced = root.flushed.then(() => undefined);
  return Promise.all([committed, synced]).then(([value]) => value);
}

export async function rawBatchedPuts(kind: RawKind, seconds: number, dataDir: string, perTransaction = 1000): Promise<RawResult> {
  const root = openAsEngine(dataDir);
  const records = root.openDB<unknown[], number>('r:1', {});
  const index = root.openDB<Buffer, Buffer>('i:1', { keyEncoding: 'binary', encoding: 'binary' });
  // Continue after the rows of an earlier round in the same folder (new keys, like the engine's table).
  let next = 1;
  for (const key of records.getKeys({ reverse: true, limit: 1 })) next = key + 1;
  const batch = (): void => {
    for (let i = 0; i < perTransaction; i++) {
      const id = next++;
      if (kind === 'rest') {
        const row = restRow(id);
        records.put(id, restValues(row));
        index.put(integerIndexKey(row.qty, id), EMPTY);
      } else {
        records.put(id, actionsValues(id));
      }
    }
  };
  // Warm-up: a few transactions not counted.
  for (let i = 0; i < 5; i++) await durably(root, root.transaction(batch));
  const counted = next;
  let transactions = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < end) {
    await durably(root, root.transaction(batch));
    transactions++;
    now = process.hrtime.bigint();
  }
  const elapsed = Number(now - start) / 1e9;
  const rows = next - counted;
  await root.close();
  return { kind, rows, seconds: elapsed, rowsPerSecond: rows / elapsed, transactions, rowsPerTransaction: perTransaction };
}

if (require.main === module) {
  const [kind, seconds, dataDir, perTransaction] = process.argv.slice(2);
  if ((kind !== 'rest' && kind !== 'actions') || !dataDir) {
    process.stderr.write('usage: raw-lmdb.js <rest|actions> <seconds> <dataDir> [rowsPerTransaction]\n');
    process.exit(2);
  }
  rawBatchedPuts(kind, Number(seconds) || 5, dataDir, Number(perTransaction) || 1000).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
