/**
 * getRecordsUsingSql rows written as JSON text where they are made (the runner) and put into the
 * response as they are (plugins/actions/json-text.ts, envelope.ts responseText): the answer is
 * the one the shaped records give (the path taken when includeFields asks for shaping), with its
 * counts, and beside a requestId echoed digit for digit.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, login, ok, post } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

describe('sql: rows answered as JSON text', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer({});
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'jrows', fields: [{ name: 'n', type: 'integer' }, { name: 't', type: 'varchar', length: 20 }, { name: 'b', type: 'varbinary', length: 4 }, { name: 'f', type: 'float' }] }));
    await ok(server, db('createIndex', token, { tableName: 'jrows', indexName: 'by_n', fields: [{ name: 'n' }] }));
    const sourceData = Array.from({ length: 300 }, (_, n) => ({ n, t: n % 3 === 0 ? null : `tëxt "${n}" 😀\\`, b: n % 2 === 0 ? 'cafe' : null, f: n / 3 }));
    await ok(server, db('insertRecords', token, { tableName: 'jrows', sourceData }));
  });
  after(() => server.close());

  for (const dataFormat of ['objects', 'arrays']) {
    for (const [label, sql, sqlParams] of [
      ['a worker\'s 300-row range', 'SELECT a.n, a.t, a.b, a.f, b.n FROM jrows a JOIN jrows b ON b.n = a.n WHERE a.n >= ? AND a.n < ? ORDER BY a.n', [0, 300]],
      ['a main-thread point read', 'SELECT a.n, a.t, a.b, a.f, b.n FROM jrows a JOIN jrows b ON b.n = a.n WHERE a.n = ?', [7]],
    ] as const) {
      it(`answers ${label} in ${dataFormat} as the shaped records do, repeated names and counts included`, async function () {
        const fields = ['n', 't', 'b', 'f', 'n_2'];
        const options = { dataFormat, numberFormat: 'string', binaryFormat: 'base64' };
        const written = await ok(server, query(token, sql, { sqlParams, maxRecords: 1000 }, { responseOptions: options }));
        // includeFields (all of them) takes the path that shapes records on the main thread.
        const shaped = await ok(server, query(token, sql, { sqlParams, maxRecords: 1000 }, { responseOptions: { ...options, includeFields: fields } }));
        assert.deepEqual(written, shaped);
        assert.deepEqual(written.fields.map((field: any) => field.name), fields);
        assert.equal(written.returnedRecordCount, sqlParams.length === 2 ? 300 : 1);
        assert.equal(written.data.length, written.returnedRecordCount);
      });
    }
  }

  it('echoes a requestId digit for digit beside rows written as JSON text, and counts what it read', async function () {
    // The body as text: a number JSON.stringify would round.
    const envelope = JSON.stringify(query(token, 'SELECT n FROM jrows WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [10, 110], forceRecordCount: true, maxRecords: 40 }, { responseOptions: { dataFormat: 'arrays' } }));
    const response = await post(server, `${envelope.slice(0, -1)},"requestId":12345678901234567890}`);
    assert.equal(response.status, 200);
    assert.match(response.text, /"requestId":12345678901234567890[,}]/);
    const { result, errorCode } = response.json;
    assert.equal(errorCode, 0);
    assert.deepEqual(result.data, Array.from({ length: 40 }, (_, i) => [10 + i]));
    assert.deepEqual([result.returnedRecordCount, result.moreRecords, result.totalRecordCount], [40, true, 100]);
  });
});
