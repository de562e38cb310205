/**
 * SQL never stalls other clients: queries run in worker threads, so a REST GET is answered while
 * a long query runs; a runaway query stops at sql_timeout_ms with 4076 and its worker serves the
 * next query; more queries than workers queue and all answer.
 */
import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { db, login, ok, send } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

/** A query that never ends by itself (SQLite counts forever). */
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c';

describe('sql: long queries, timeouts and concurrency', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer({ sql_timeout_ms: 3000, sql_workers: 2 });
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'wide', fields: [{ name: 'n', type: 'integer' }] }));
    for (let start = 0; start < 3000; start += 1000) {
      await ok(server, db('insertRecords', token, { tableName: 'wide', sourceData: Array.from({ length: 1000 }, (_, i) => ({ n: start + i })) }));
    }
  });
  after(() => server.close());

  it('answers a REST GET while a long query runs, and stops the query at sql_timeout_ms', async function () {
    let sqlAnswered = false;
    const long = send(server, query(token, ENDLESS)).then((response) => { sqlAnswered = true; return response; });
    const rest = await call('GET', `${server.http}/engine/api/v1/record/main/wide/1`, { auth: ['admin', 'ADMIN'] });
    assert.equal(rest.status, 200);
    assert.equal(sqlAnswered, false, 'the REST GET was answered only after the long query');
    const response = await long;
    assert.equal(response.errorCode, 4076, response.errorMessage);
  });

  it('stops a runaway cross join at sql_timeout_ms, and the worker serves the next query', async function () {
    const response = await send(server, query(token, 'SELECT count(*) AS n FROM wide a, wide b, wide c'));
    assert.equal(response.errorCode, 4076, response.errorMessage);
    const next = await ok(server, query(token, 'SELECT count(*) AS n FROM wide'));
    assert.deepEqual(next.data, [{ n: 3000 }]);
  });

  it('queues more queries than workers and answers each one', async function () {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => ok(server, query(token, 'SELECT n FROM wide WHERE n = ?', { sqlParams: [i * 100] }))));
    results.forEach((result, i) => assert.deepEqual(result.data, [{ n: i * 100 }]));
  });
});
