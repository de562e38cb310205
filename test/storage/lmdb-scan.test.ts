/**
 * Reads stream through LMDB cursors: a query with a small limit on a large table touches about
 * `skip + limit` entries, counted by the plugin's `scanStats` instrumentation (no timing).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseFilter } from '../../lib/query/filter-parser';
import type { ReadOptions, StoragePort } from '../../kernel/storage/storage-port';
import type { Row } from '../../kernel/storage/types';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { scanStats } from '../../plugins/storage-lmdb/reads';
import { readAll } from '../../kernel/storage/stored-values';
import { positionalRows } from '../../kernel/storage/positional-rows';

const ROWS = 100_000;

describe('lmdb storage: reads touch only what they return', function () {
  this.timeout(120000);
  let dir: string;
  let store: StoragePort;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-scan-'));
    store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    await store.createTable('main', 'big', [{ name: 'n', type: 'integer' }, { name: 'tag', type: 'varchar', length: 8 }]);
    await store.createIndex('main', 'big', 'by_n', { fields: [{ name: 'n', ascending: true }] });
    for (let start = 0; start < ROWS; start += 1000) {
      const rows: Row[] = [];
      for (let i = start; i < start + 1000; i++) rows.push({ n: (i * 7919) % ROWS, tag: i % 2 === 0 ? 'even' : 'odd' });
      await store.insertValues('main', 'big', positionalRows(store.getTable('main', 'big'), rows));
    }
  });

  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function touched(options: ReadOptions): { count: number; entries: number } {
    const before = scanStats.entriesRead;
    const count = readAll(store.readRecords('main', 'big', options)).length;
    return { count, entries: scanStats.entriesRead - before };
  }

  it('has the rows', () => {
    assert.equal(store.countRecords('main', 'big'), ROWS);
  });

  it('limit 10 through an index reads about 10 entries, in either direction', () => {
    assert.deepEqual(touched({ index: 'by_n', limit: 10 }), { count: 10, entries: 10 });
    assert.deepEqual(touched({ index: 'by_n', limit: 10, reverse: true }), { count: 10, entries: 10 });
    const mid = touched({ index: 'by_n', range: { lower: { values: [50_000], inclusive: true } }, limit: 10 });
    assert.deepEqual(mid, { count: 10, entries: 10 });
  });

  it('skip adds only the skipped entries', () => {
    assert.deepEqual(touched({ index: 'by_n', skip: 25, limit: 10 }), { count: 10, entries: 35 });
  });

  it('limit 10 in record-ID order reads 10 entries', () => {
    assert.deepEqual(touched({ limit: 10 }), { count: 10, entries: 10 });
    assert.deepEqual(touched({ limit: 10, reverse: true, range: { upper: { values: [60_000], inclusive: true } } }), { count: 10, entries: 10 });
  });

  it('a filter reads only until enough rows pass it', () => {
    const r = touched({ index: 'by_n', limit: 10, filter: parseFilter("tag == 'odd'") });
    assert.equal(r.count, 10);
    assert.ok(r.entries <= 40, `read ${r.entries} entries`);
  });

  it('a cursor fetch reads only the page it returns', () => {
    const cursor = store.openCursor('main', 'big', { index: 'by_n' });
    readAll(cursor.fetch(10, 'forward'));
    const before = scanStats.entriesRead;
    assert.equal(readAll(cursor.fetch(10, 'forward')).length, 10);
    assert.equal(readAll(cursor.fetch(5, 'backward')).length, 5);
    assert.ok(scanStats.entriesRead - before <= 16, `read ${scanStats.entriesRead - before} entries`);
    cursor.close();
  });

  it('a sliced read counts keys a null guard leaves out as visits (a slice never walks further than asked)', async () => {
    await store.createTable('main', 'pairs', [{ name: 'g', type: 'varchar', length: 4 }, { name: 'n', type: 'integer' }]);
    await store.createIndex('main', 'pairs', 'by_g_n', { fields: [{ name: 'g', ascending: true }, { name: 'n', ascending: true }] });
    await store.insertValues('main', 'pairs', positionalRows(store.getTable('main', 'pairs'), [...Array.from({ length: 100 }, () => ({ g: 'a', n: null })), { g: 'a', n: 5 }]));
    // keys ('a', null) sort before ('a', 5) and are left out by the null guard of an upper bound on both segments
    const range = { upper: { values: ['a', 10], inclusive: true } };
    assert.deepEqual(readAll(store.readRecords('main', 'pairs', { index: 'by_g_n', range })).map((r) => r.values[1]), [5]);
    const scan = store.readRecords('main', 'pairs', { index: 'by_g_n', range });
    const first = scan.next(3);
    assert.deepEqual(first, { done: false }, 'three visits, all guarded');
    let slices = 1;
    let step = scan.next(3);
    for (slices++; !step.done; slices++) step = scan.next(3);
    assert.equal(step.value.length, 1);
    assert.ok(slices >= 34, `101 entries in slices of 3 take at least 34 slices (took ${slices})`);
  });
});
