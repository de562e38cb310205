/**
 * A cached query statement whose step failed (found by review4): sql-runner.ts reset it before
 * clearing its bindings, and the sqlite-wasm reset() throws the failed step's code again, so the
 * values stayed bound; the next call of the same SQL with fewer values ran with them, another
 * account's call included (the statement cache is per database and owner, not per caller). Now
 * the bindings are cleared first, and a call with fewer values than parameters is refused (12012).
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { admin, login, ok, send } from '../actions/action-client';
import { query, startSqlServer } from './sql-client';

describe('sql: cached statements after a failed step', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;
  before(async () => {
    // One worker: both callers' jobs run on the same SQLite connection, as they may with several.
    server = await startSqlServer({ sql_workers: 1 });
    token = await login(server);
  });
  after(() => server.close());

  it('after a cached query failed while stepping, the same SQL with fewer values is refused naming the missing one, never run with the earlier values', async function () {
    const sql = 'SELECT ? AS a, abs(CAST(? AS INTEGER)) AS b';
    // abs() of the smallest 64-bit integer is an error raised while stepping ("integer overflow").
    const failed = await send(server, query(token, sql, { sqlParams: ['x', '-9223372036854775808'] }));
    assert.notEqual(failed.errorCode, 0, `the first call fails while stepping (${JSON.stringify(failed)})`);
    const next = await send(server, query(token, sql, { sqlParams: ['y'] }));
    assert.equal(next.errorCode, 12012, JSON.stringify(next));
    assert.match(next.errorMessage, /parameter 2 has none/);
    const again = await ok(server, query(token, sql, { sqlParams: ['z', '-5'] }));
    assert.deepEqual(again.data, [{ a: 'z', b: 5 }], 'its own values');
  });

  it("one account's bound value never reaches another account's result through a statement whose step failed", async function () {
    await ok(server, admin('createAccount', token, { username: 'peer', password: 'pw-peer', roles: ['reader'] }));
    const peer = await login(server, 'peer', 'pw-peer');
    // Fails while stepping only when the second value is 'boom' (abs of the smallest 64-bit integer).
    const sql = "SELECT ? AS a, CASE WHEN ? = 'boom' THEN abs(-9223372036854775807 - 1) END AS c, ? AS b";
    const failed = await send(server, query(token, sql, { sqlParams: ['x', 'boom', 'admin-only-value'] }));
    assert.notEqual(failed.errorCode, 0, `the admin's call fails while stepping (${JSON.stringify(failed)})`);
    const short = await send(server, query(peer, sql, { sqlParams: ['y', 'fine'] }));
    assert.equal(short.errorCode, 12012, `the peer's call lacks its third value: refused, not run with the admin's (${JSON.stringify(short)})`);
    assert.doesNotMatch(JSON.stringify(short), /admin-only-value/);
    const seen = await ok(server, query(peer, sql, { sqlParams: ['y', 'fine', 'peer-value'] }));
    assert.deepEqual(seen.data, [{ a: 'y', c: null, b: 'peer-value' }]);
  });
});
