/**
 * Review finding (review4): a text value bound through sqlParams that holds an unpaired surrogate
 * is stored silently changed (U+FFFD) by runSqlStatements, while insertRecords refuses the same
 * value with 4031 INVALID_COLUMN_VALUE. Nothing a client sends may be stored other than it was
 * sent: the SQL path should refuse it the same way (plugins/sql/sql-runner.ts bindParams).
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, fails, login, ok, send } from '../actions/action-client';
import { query, startSqlServer, statements } from './sql-client';

describe('sql: sql params holding an unpaired surrogate', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startSqlServer({ sql_max_statements: 50 });
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'lone', fields: [{ name: 't', type: 'lvarchar' }] }));
  });
  after(() => server.close());

  it('insertRecords refuses the text with 4031 (the reference behaviour)', async function () {
    await fails(server, db('insertRecords', token, { tableName: 'lone', sourceData: [{ t: 'x\uD800y' }] }), 4031);
  });

  it('runSqlStatements refuses an INSERT whose sqlParams text has an unpaired surrogate and stores nothing (not U+FFFD in its place)', async function () {
    const answer = await send(server, statements(token, ['INSERT INTO lone (t) VALUES (?)'], { sqlParams: ['x\uD800y'] }));
    const codes = [answer.errorCode, ...((answer.result?.data ?? []) as Array<{ errorCode: number }>).map((s) => s.errorCode)];
    assert.ok(codes.some((code) => code !== 0), `the statement was refused (answer: ${JSON.stringify(answer)})`);
    const stored = await ok(server, query(token, 'SELECT t FROM lone'));
    assert.deepEqual(stored.data, []);
  });
});
