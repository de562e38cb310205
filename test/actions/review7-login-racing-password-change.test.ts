/**
 * review7: a login with the old password checked while the password changes. The change ends the
 * account's action sessions (docs/actions.md), but a login whose hash check began before the change
 * was stored (its account record read then) and ended after it made a session the change never
 * saw: the old password opened a session that outlives the change.
 *
 * The change is sent first and the login right after it; with one hashing worker (the default) the
 * new password's hash runs first and the login's check second. Whatever the order the server
 * takes them in, the old password must leave no live session: a login answered before the change
 * is ended by it, one answered after it is refused.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { admin, login, ok, post, startActionServer } from './action-client';

describe('review7: a login with the old password racing a password change', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startActionServer({ password_hash_workers: 1 });
    token = await login(server);
  });
  after(() => server.close());

  it('leaves no live session opened with the old password (5 rounds)', async () => {
    const opened: string[] = [];
    for (let round = 0; round < 5; round++) {
      const name = `r7race${round}`;
      const old = `${name}-old-password`;
      await ok(server, admin('createAccount', token, { username: name, password: old, roles: ['reader'] }));
      const changed = post(server, admin('alterAccount', token, { username: name, password: `${name}-new-password` }));
      const loggedIn = post(server, { api: 'admin', action: 'createSession', params: { username: name, password: old } });
      const [change, attempt] = await Promise.all([changed, loggedIn]);
      assert.equal(change.json.errorCode, 0, change.text);
      if (attempt.json.errorCode !== 0) {
        assert.equal(attempt.json.errorCode, 12033, attempt.text);
        continue;
      }
      // Answered: the session must have been ended by the change.
      const used = await post(server, admin('listSessions', attempt.json.result.authToken as string));
      if (used.json.errorCode === 0) opened.push(name);
      else assert.equal(used.json.errorCode, 12031, used.text);
    }
    assert.deepEqual(opened, [], 'sessions opened with the old password and still live after the change');
  });
});
