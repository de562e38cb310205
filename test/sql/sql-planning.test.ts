/**
 * SQLite's planner uses the engine's indexes: `=`, `<`, `<=`, `>`, `>=` on an index's leading
 * segments become a key range and ORDER BY on them index order, so a point or range query reads
 * only the records it returns (counted at the storage port), and answers as a full scan would.
 * Run on the workers (sql_main_slice_ms 0): a statement's first run in a main-thread slice would
 * read up to 65 records more before it moves to a worker (sql-main-slice.test.ts).
 */
import assert from 'node:assert/strict';
import type { RecordCursor, StoragePort } from '../../kernel/storage/storage-port';
import type { TestServer } from '../helpers/server';
import { db, login, ok } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

const ROWS = 5000;

describe('sql: index ranges and order', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  /** Records the storage port handed out through cursors since the last reset. */
  let read = 0;

  before(async () => {
    server = await startSqlServer({ sql_main_slice_ms: 0 });
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'metrics', fields: [{ name: 'k', type: 'integer' }, { name: 'zone', type: 'varchar', length: 8 }, { name: 'v', type: 'float' }] }));
    await ok(server, db('createIndex', token, { tableName: 'metrics', indexName: 'by_k', unique: true, fields: [{ name: 'k' }] }));
    await ok(server, db('createIndex', token, { tableName: 'metrics', indexName: 'by_zone_k', fields: [{ name: 'zone' }, { name: 'k' }] }));
    for (let start = 0; start < ROWS; start += 1000) {
      await ok(server, db('insertRecords', token, { tableName: 'metrics', sourceData: Array.from({ length: 1000 }, (_, i) => ({ k: start + i, zone: `z${(start + i) % 5}`, v: (start + i) / 10 })) }));
    }
    const storage: StoragePort = server.engine.need('storage');
    const openCursor = storage.openCursor.bind(storage);
    storage.openCursor = (database, table, options): RecordCursor => {
      const cursor = openCursor(database, table, options);
      const fetch = cursor.fetch.bind(cursor);
      cursor.fetch = (count, direction) => {
        const slices = fetch(count, direction);
        return {
          next(maxVisits) {
            const step = slices.next(maxVisits);
            if (step.done) read += step.value.length;
            return step;
          },
        };
      };
      return cursor;
    };
  });
  after(() => server.close());

  async function rows(sql: string, sqlParams: unknown[] = []): Promise<any[]> {
    read = 0;
    return (await ok(server, query(token, sql, { sqlParams }))).data;
  }

  it('reads one record for a point SELECT on a unique index', async function () {
    assert.deepEqual(await rows('SELECT k, zone FROM metrics WHERE k = ?', [4321]), [{ k: 4321, zone: 'z1' }]);
    assert.equal(read, 1);
  });

  it('reads only the range for <, <=, >, >= and BETWEEN', async function () {
    assert.equal((await rows('SELECT k FROM metrics WHERE k >= 1000 AND k < 2000')).length, 1000);
    assert.equal(read, 1000);
    assert.deepEqual(await rows('SELECT k FROM metrics WHERE k > 4997'), [{ k: 4998 }, { k: 4999 }]);
    assert.equal(read, 2);
    assert.deepEqual(await rows('SELECT k FROM metrics WHERE k <= 1'), [{ k: 0 }, { k: 1 }]);
    assert.equal(read, 2);
    assert.equal((await rows('SELECT k FROM metrics WHERE k BETWEEN 10 AND 19')).length, 10);
    assert.equal(read, 10);
  });

  it('uses equalities on leading segments and a range on the next', async function () {
    const found = await rows("SELECT k FROM metrics WHERE zone = 'z3' AND k > 4900 ORDER BY k");
    assert.deepEqual(found.map((row) => row.k), [4903, 4908, 4913, 4918, 4923, 4928, 4933, 4938, 4943, 4948, 4953, 4958, 4963, 4968, 4973, 4978, 4983, 4988, 4993, 4998]);
    assert.equal(read, 20);
  });

  it('answers ORDER BY … DESC with TOP from the index end', async function () {
    assert.deepEqual(await rows('SELECT TOP 3 k FROM metrics ORDER BY k DESC'), [{ k: 4999 }, { k: 4998 }, { k: 4997 }]);
    assert.ok(read < 100, `read ${read} records for TOP 3`);
  });

  it('answers as a full scan does when a bound cannot be pushed down', async function () {
    assert.deepEqual(await rows("SELECT k FROM metrics WHERE k = '12'"), [{ k: 12 }]);
    assert.deepEqual(await rows('SELECT k FROM metrics WHERE k < 2.5'), [{ k: 0 }, { k: 1 }, { k: 2 }]);
    assert.deepEqual(await rows('SELECT k FROM metrics WHERE k = NULL'), []);
  });
});
