/**
 * A session keeps at most `sql_max_cursors_per_session` SQL cursors open (each holds up to
 * `sql_max_records` rows until it idles out): one more is refused with 4077 before its query
 * runs, other sessions are not affected, and closing a cursor makes room again.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, fails, login, ok } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

describe('sql: a per-session cap on open SQL cursors', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startSqlServer({ sql_max_cursors_per_session: 2 });
    const token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'items', fields: [{ name: 'name', type: 'varchar', length: 10 }] }));
    await ok(server, db('insertRecords', token, { tableName: 'items', sourceData: [{ name: 'a' }, { name: 'b' }] }));
  });
  after(() => server.close());

  const open = (token: string): Record<string, unknown> => query(token, 'SELECT name FROM items ORDER BY id', { returnCursor: true });

  it('refuses a session its cursor beyond the cap with 4077, lets another session open its own, and makes room when one is closed', async function () {
    const token = await login(server);
    const first = await ok(server, open(token));
    await ok(server, open(token));
    const refused = await fails(server, open(token), 4077);
    assert.match(refused.errorMessage, /2 SQL cursors open/);
    // The open cursors still page.
    assert.deepEqual((await ok(server, db('getRecordsFromCursor', token, { cursorId: first.cursorId, fetchRecords: 5 }))).data, [{ name: 'a' }, { name: 'b' }]);
    const other = await login(server);
    await ok(server, open(other));
    await ok(server, db('closeCursor', token, { cursorId: first.cursorId }));
    await ok(server, open(token));
    await fails(server, open(token), 4077);
  });

});
