/**
 * Review finding (review4): a cached query statement whose step failed keeps the previous call's
 * bound values. sql-runner.ts runSql's `finally` calls stmt.reset() then stmt.clearBindings(), but
 * the sqlite-wasm oo1 reset() throws the failed step's code again (sqlite3_reset answers it), so
 * clearBindings() is never reached: the next call of the same SQL that binds fewer values runs
 * with the stale ones instead of NULL. The connection (and its statement cache) is per database and
 * owner, not per caller: another account's call gets the first caller's values.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { admin, login, ok, send } from '../actions/action-client';
import { query, startSqlServer } from '../sql/sql-client';

describe('review4: cached SQL statements after a failed step', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;
  before(async () => {
    // One worker: both callers' jobs run on the same SQLite connection, as they may with several.
    server = await startSqlServer({ sql_workers: 1 });
    token = await login(server);
  });
  after(() => server.close());

  it('a query whose step failed leaves no bound value behind for the next call of the same SQL (an unbound ? is NULL)', async function () {
    const sql = 'SELECT ? AS a, abs(CAST(? AS INTEGER)) AS b';
    // abs() of the smallest 64-bit integer is an error raised while stepping ("integer overflow").
    const failed = await send(server, query(token, sql, { sqlParams: ['x', '-9223372036854775808'] }));
    assert.notEqual(failed.errorCode, 0, `the first call fails while stepping (${JSON.stringify(failed)})`);
    const next = await send(server, query(token, sql, { sqlParams: ['y'] }));
    assert.equal(next.errorCode, 0, `the second ? is unbound, so NULL, and abs(NULL) is NULL; answered: ${JSON.stringify(next)}`);
    assert.deepEqual(next.result.data, [{ a: 'y', b: null }]);
  });

  it('control: the same two calls with a query that never failed bind NULL for the missing value', async function () {
    const sql = 'SELECT ? AS a, abs(CAST(? AS INTEGER)) AS b, 1 AS c';
    await ok(server, query(token, sql, { sqlParams: ['x', '-5'] }));
    const next = await ok(server, query(token, sql, { sqlParams: ['y'] }));
    assert.deepEqual(next.data, [{ a: 'y', b: null, c: 1 }]);
  });

  it("one account's bound value never reaches another account's result through a statement whose step failed", async function () {
    await ok(server, admin('createAccount', token, { username: 'peer', password: 'pw-peer', roles: ['reader'] }));
    const peer = await login(server, 'peer', 'pw-peer');
    // Fails while stepping only when the second value is 'boom' (abs of the smallest 64-bit integer).
    const sql = "SELECT ? AS a, CASE WHEN ? = 'boom' THEN abs(-9223372036854775807 - 1) END AS c, ? AS b";
    const failed = await send(server, query(token, sql, { sqlParams: ['x', 'boom', 'admin-only-value'] }));
    assert.notEqual(failed.errorCode, 0, `the admin's call fails while stepping (${JSON.stringify(failed)})`);
    const seen = await ok(server, query(peer, sql, { sqlParams: ['y', 'fine'] }));
    assert.deepEqual(seen.data, [{ a: 'y', c: null, b: null }], 'the third ? is unbound for the peer: NULL, not the admin\'s value');
  });
});
