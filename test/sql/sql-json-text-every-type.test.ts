/**
 * Review check (review6): getRecordsUsingSql rows written as JSON text by the runner (json-text.ts)
 * against the same rows shaped on the main thread (includeFields naming every field), over every
 * column type (bigint at its limits, -0, money, number, dates, char padding, binary, JSON, a variant
 * nested past the JSON depth limit), SQL-made values (an int64 sum, Infinity, NaN, -0, a blob) and
 * every dataFormat/numberFormat/binaryFormat/variantFormat/stringFormat combination.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, login, ok, send } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

describe('sql (review6): rows written as JSON text equal the shaped rows for every column type and response format', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;
  const fields = [
    { name: 'id', type: 'integer' }, { name: 'bi', type: 'bigint' }, { name: 'bt', type: 'bit' }, { name: 'r', type: 'real' },
    { name: 'm', type: 'money' }, { name: 'nu', type: 'number', length: 30, scale: 5 }, { name: 'd', type: 'date' }, { name: 'tm', type: 'time' },
    { name: 'ts', type: 'timestamp' }, { name: 'c', type: 'char', length: 5 }, { name: 'v', type: 'varchar', length: 50 },
    { name: 'b', type: 'varbinary', length: 8 }, { name: 'j', type: 'json' }, { name: 'va', type: 'variant' },
  ];
  before(async () => {
    server = await startSqlServer({});
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'alltypes', fields }));
    await ok(server, db('createIndex', token, { tableName: 'alltypes', indexName: 'by_id', fields: [{ name: 'id' }] }));
    let deep: unknown = 1; for (let i = 0; i < 200; i++) deep = [deep];
    const rows = [
      { id: 1, bi: '9223372036854775807', bt: true, r: 1.5, m: '12.3456', nu: '1234567890123456789012345.12345', d: '2024-01-02', tm: '12:34:56', ts: '2024-01-02T03:04:05.678', c: 'ab', v: 'x"\\\u2028😀', b: 'cafe', j: { a: [1, 2, { b: null }], big: 12345678901234567890 }, va: { deep: 'x' } },
      { id: 2, bi: '-9223372036854775808', bt: false, r: -0, m: null, nu: null, d: null, tm: null, ts: null, c: null, v: '', b: '', j: '"str"', va: 'plain' },
      { id: 3, bi: '9007199254740993', r: 3e38, j: JSON.stringify(deep), va: JSON.stringify(deep) },
    ];
    for (const row of rows) {
      const a = await send(server, db('insertRecords', token, { tableName: 'alltypes', sourceData: [row] }));
      assert.equal(a.errorCode, 0, `insert ${row.id}: ${JSON.stringify(a).slice(0, 300)}`);
    }
  });
  after(() => server.close());
  for (const dataFormat of ['objects', 'arrays']) for (const numberFormat of ['number', 'string']) for (const binaryFormat of ['hex', 'base64', 'byteArray']) for (const variantFormat of ['json', 'binary', 'string', 'variantObject']) for (const stringFormat of ['json', 'hex']) {
    it(`answers ${dataFormat} ${numberFormat} ${binaryFormat} ${variantFormat} ${stringFormat}`, async () => {
      const options = { dataFormat, numberFormat, binaryFormat, variantFormat, stringFormat };
      for (const [sql, sqlParams] of [['SELECT * FROM alltypes WHERE id >= ? AND id < ? ORDER BY id', [0, 10]], ['SELECT * FROM alltypes WHERE id = ?', [3]], ['SELECT bi + 1 AS x, 1e400 AS inf, 0.0/0 AS nan, -0.0 AS mz, x\'00ff\' AS blob, \'a\' || char(55296) AS lone FROM alltypes', []]] as const) {
        const written = await send(server, query(token, sql, { sqlParams }, { responseOptions: options }));
        const names = written.result?.fields?.map((f: any) => f.name) ?? [];
        const shaped = await send(server, query(token, sql, { sqlParams }, { responseOptions: { ...options, includeFields: names.length ? names : ['id'] } }));
        assert.deepEqual(written, shaped, sql);
      }
    });
  }
});
