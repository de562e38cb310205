/**
 * Review of the SQL value path (plugins/sql/fast-values.ts): values that are unusual at the
 * WebAssembly boundary go into SQLite and back unchanged, on the main thread and on a worker.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, login, ok } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

describe('sql: values at the WebAssembly boundary', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer({});
    token = await login(server);
  });
  after(() => server.close());

  it('text with NUL characters reads back as stored (point and worker range)', async function () {
    const texts = ['a\u0000b', '\u0000', '', 'end\u0000', '\u0000\u0000x'];
    await ok(server, db('createTable', token, { tableName: 'oddtexts', fields: [{ name: 'n', type: 'integer' }, { name: 't', type: 'lvarchar' }] }));
    await ok(server, db('createIndex', token, { tableName: 'oddtexts', indexName: 'by_n', fields: [{ name: 'n' }] }));
    const sourceData = Array.from({ length: 100 * texts.length }, (_, i) => ({ n: i, t: texts[i % texts.length] }));
    await ok(server, db('insertRecords', token, { tableName: 'oddtexts', sourceData }));
    const expected = sourceData.slice(0, texts.length);
    for (let i = 0; i < texts.length; i++) {
      const point = await ok(server, query(token, 'SELECT n, t FROM oddtexts WHERE n = ?', { sqlParams: [i] }));
      assert.deepEqual(point.data, [expected[i]], `point ${i}`);
    }
    const range = await ok(server, query(token, 'SELECT n, t FROM oddtexts WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [0, sourceData.length], maxRecords: sourceData.length }));
    assert.deepEqual(range.data.slice(0, texts.length), expected);
  });

  it('integers around 2^53 and 2^63 and empty or NUL-holding binaries read back exact', async function () {
    await ok(server, db('createTable', token, { tableName: 'bigs', fields: [{ name: 'n', type: 'integer' }, { name: 'b', type: 'bigint' }, { name: 'v', type: 'varbinary', length: 8 }] }));
    await ok(server, db('createIndex', token, { tableName: 'bigs', indexName: 'by_n', fields: [{ name: 'n' }] }));
    const values = ['9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740993', '9223372036854775807', '-9223372036854775808'];
    const bins = ['', '00', '0000ff', 'ff00'];
    const sourceData = Array.from({ length: 600 }, (_, i) => ({ n: i, b: values[i % values.length], v: bins[i % bins.length] }));
    await ok(server, db('insertRecords', token, { tableName: 'bigs', sourceData }));
    const expected = sourceData.slice(0, 12).map((r) => ({ n: String(r.n), b: r.b, v: r.v }));
    const lower = (rows: any[]) => rows.map((r) => ({ ...r, v: String(r.v).toLowerCase() }));
    const point = await ok(server, query(token, 'SELECT n, b, v FROM bigs WHERE n < 12 ORDER BY n', {}, { responseOptions: { numberFormat: 'string' } }));
    assert.deepEqual(lower(point.data), expected);
    const range = await ok(server, query(token, 'SELECT n, b, v FROM bigs WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [0, 600], maxRecords: 600 }, { responseOptions: { numberFormat: 'string' } }));
    assert.deepEqual(lower(range.data.slice(0, 12)), expected);
  });
});
