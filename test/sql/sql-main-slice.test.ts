/**
 * Short SELECTs run on the main thread in a bounded slice (plugins/sql/main-slice.ts): a point
 * lookup is answered there without a worker; a SELECT that reads more than the slice's records
 * is stopped there and answered in full by a worker, and goes straight to a worker next time.
 * Where a read ran is told by the stack of the storage port's openCursor call.
 */
import assert from 'node:assert/strict';
import type { RecordCursor, StoragePort } from '../../kernel/storage/storage-port';
import type { TestServer } from '../helpers/server';
import { db, login, ok, send } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

const ROWS = 2000;

describe('sql: short reads in a main-thread slice', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  /** Per openCursor since the last reset: whether it came from the main-thread slice, and the records it handed out. */
  let scans: Array<{ inSlice: boolean; read: number }> = [];

  before(async () => {
    // A generous slice: whether a statement fits is decided here by the records it reads, never by
    // how fast a loaded machine runs it.
    server = await startSqlServer({ sql_main_slice_ms: 1000 });
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'points', fields: [{ name: 'k', type: 'integer' }, { name: 'label', type: 'varchar', length: 16 }] }));
    await ok(server, db('createIndex', token, { tableName: 'points', indexName: 'by_k', unique: true, fields: [{ name: 'k' }] }));
    await ok(server, db('insertRecords', token, { tableName: 'points', sourceData: Array.from({ length: ROWS }, (_, k) => ({ k, label: `p${k}` })) }));
    const storage: StoragePort = server.engine.need('storage');
    const openCursor = storage.openCursor.bind(storage);
    storage.openCursor = (database, table, options): RecordCursor => {
      const scan = { inSlice: /MainSlice\.tryRun/.test(new Error().stack ?? ''), read: 0 };
      scans.push(scan);
      const cursor = openCursor(database, table, options);
      const fetch = cursor.fetch.bind(cursor);
      cursor.fetch = (count, direction) => {
        const slices = fetch(count, direction);
        return {
          next(maxVisits) {
            const step = slices.next(maxVisits);
            if (step.done) scan.read += step.value.length;
            return step;
          },
        };
      };
      return cursor;
    };
  });
  after(() => server.close());

  async function rows(sql: string, sqlParams: unknown[] = []): Promise<any[]> {
    scans = [];
    return (await ok(server, query(token, sql, { sqlParams }))).data;
  }

  it('answers a point SELECT in the main-thread slice, reading one record', async function () {
    for (const k of [17, 1234, 1999]) {
      assert.deepEqual(await rows('SELECT k, label FROM points WHERE k = ?', [k]), [{ k, label: `p${k}` }]);
      assert.deepEqual(scans, [{ inSlice: true, read: 1 }]);
    }
  });

  it('moves a SELECT that reads more than the slice to a worker, which answers in full; the next run goes straight to a worker', async function () {
    const found = await rows('SELECT k FROM points WHERE k >= ? AND k < ?', [100, 1100]);
    assert.deepEqual(found.map((row) => row.k), Array.from({ length: 1000 }, (_, i) => 100 + i));
    // The slice stopped after 64 records (and the one more that tells the scan goes on).
    assert.deepEqual(scans, [{ inSlice: true, read: 65 }, { inSlice: false, read: 1000 }]);
    const again = await rows('SELECT k FROM points WHERE k >= ? AND k < ?', [500, 1500]);
    assert.equal(again.length, 1000);
    assert.deepEqual(scans, [{ inSlice: false, read: 1000 }]);
  });

  it('moves a SELECT that runs more VM instructions than the slice allows to a worker, and sends it there next time', async function () {
    const sql = 'SELECT k, (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c) AS n FROM points WHERE k = ?';
    assert.deepEqual(await rows(sql, [5]), [{ k: 5, n: 300000 }]);
    assert.deepEqual(scans.at(-1), { inSlice: false, read: 1 });
    assert.deepEqual(await rows(sql, [6]), [{ k: 6, n: 300000 }]);
    assert.deepEqual(scans, [{ inSlice: false, read: 1 }]);
  });

  it('moves a SELECT that makes a value larger than the slice allows (randomblob, zeroblob, printf) to a worker, which answers it', async function () {
    // One VM instruction can build a value of any size: the slice's instruction and record bounds
    // do not see it, its length limit (SLICE_VALUE_BYTES) does.
    const big = 8 << 20;
    for (const expression of ['length(randomblob(?))', 'length(zeroblob(?))', "length(printf('%.*c', ?, 'x'))"]) {
      assert.deepEqual(await rows(`SELECT k, ${expression} AS n FROM points WHERE k = 7`, [big]), [{ k: 7, n: big }], expression);
      assert.deepEqual(scans.at(-1), { inSlice: false, read: 1 }, `${expression} is answered by a worker`);
    }
  });

  it('moves a SELECT whose instr, replace or LIKE costs the square of its operands (40 kB values) to a worker, which answers it', async function () {
    const hay = "printf('%.*c', 40000, 'a')";
    const needle = "printf('%.*c', 20000, 'a') || 'b'";
    for (const [expression, n] of [[`instr(${hay}, ${needle})`, 0], [`length(replace(${hay}, ${needle}, 'x'))`, 40000], [`${hay} LIKE '%' || printf('%.*c', 1000, 'a') || 'b'`, 0]] as const) {
      assert.deepEqual(await rows(`SELECT k, ${expression} AS n FROM points WHERE k = 8`), [{ k: 8, n }], expression);
      assert.deepEqual(scans.at(-1), { inSlice: false, read: 1 }, `${expression} is answered by a worker`);
    }
  });

  it('answers an unknown table and a syntax error with their codes (the worker reports them)', async function () {
    const unknown = await send(server, query(token, 'SELECT * FROM nowhere'));
    assert.equal(unknown.errorCode, 4023);
    const syntax = await send(server, query(token, 'SELECT FROM WHERE'));
    assert.equal(syntax.errorCode, 4074);
  });

  it('runs every SELECT on a worker when sql_main_slice_ms is 0', async function () {
    const other = await startSqlServer({ sql_main_slice_ms: 0 });
    try {
      const otherToken = await login(other);
      await ok(other, db('createTable', otherToken, { tableName: 't', fields: [{ name: 'k', type: 'integer' }] }));
      await ok(other, db('insertRecords', otherToken, { tableName: 't', sourceData: [{ k: 1 }] }));
      const storage: StoragePort = other.engine.need('storage');
      const openCursor = storage.openCursor.bind(storage);
      const stacks: boolean[] = [];
      storage.openCursor = (database, table, options): RecordCursor => {
        stacks.push(/MainSlice\.tryRun/.test(new Error().stack ?? ''));
        return openCursor(database, table, options);
      };
      assert.deepEqual((await ok(other, query(otherToken, 'SELECT k FROM t'))).data, [{ k: 1 }]);
      assert.deepEqual(stacks, [false]);
    } finally {
      await other.close();
    }
  });
});
