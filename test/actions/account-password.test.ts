/**
 * Password changes through alterAccount (POST /api): one's own needs the current password, an
 * administrator resetting another account's does not; the account's sessions end.
 */
import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { admin, fails, login, ok, startActionServer } from './action-client';

describe('alterAccount password changes', function () {
  let server: TestServer;
  let root: string;

  before(async () => {
    server = await startActionServer({ plugins: ['storage-lmdb', 'data', 'http', 'rest', 'actions'] });
    root = await login(server);
  });
  after(() => server.close());

  it('one\'s own password changes only with the current password', async () => {
    await ok(server, admin('createAccount', root, { username: 'dora', password: 'dora-old' }));
    const dora = await login(server, 'dora', 'dora-old');
    const missing = await fails(server, admin('alterAccount', dora, { username: 'dora', password: 'dora-new' }), 12025);
    assert.match(missing.errorMessage, /currentPassword/);
    await fails(server, admin('alterAccount', dora, { username: 'dora', currentPassword: 'wrong', password: 'dora-new' }), 12033);
    // Refused changes changed nothing, and did not end the session.
    await login(server, 'dora', 'dora-old');
    await ok(server, admin('pingSession', dora));

    await ok(server, admin('alterAccount', dora, { username: 'DORA', currentPassword: 'dora-old', password: 'dora-new' }));
    await fails(server, admin('createSession', undefined, { username: 'dora', password: 'dora-old' }), 12033);
    await login(server, 'dora', 'dora-new');
    // A description alone needs no password.
    assert.equal((await ok(server, admin('alterAccount', dora, { username: 'dora', description: 'hi' }))).description, 'hi');
  });

  it('the administrator\'s own password needs the current one too', async () => {
    const token = await login(server);
    await fails(server, admin('alterAccount', token, { username: 'admin', password: 'Admin-Next-1' }), 12025);
    await fails(server, admin('alterAccount', token, { username: 'admin', currentPassword: 'nope', password: 'Admin-Next-1' }), 12033);
    await ok(server, admin('alterAccount', token, { username: 'admin', currentPassword: 'ADMIN', password: 'Admin-Next-1' }));
    await ok(server, admin('alterAccount', token, { username: 'admin', currentPassword: 'Admin-Next-1', password: 'ADMIN' }));
    // The other administrator session ended with the change.
    await fails(server, admin('pingSession', root), 12031);
    root = await login(server);
  });

  it('an administrator resets another account\'s password without knowing it; all its sessions end', async () => {
    await ok(server, admin('createAccount', root, { username: 'emil', password: 'emil-old' }));
    const first = await login(server, 'emil', 'emil-old');
    const second = await login(server, 'emil', 'emil-old');
    assert.equal((await call('GET', `${server.http}/engine/api/v1/table/main`, { auth: ['emil', 'emil-old'] })).status, 403);

    await ok(server, admin('alterAccount', root, { username: 'emil', password: 'emil-reset' }));
    await fails(server, admin('pingSession', first), 12031);
    await fails(server, admin('pingSession', second), 12031);
    await ok(server, admin('pingSession', root));
    // REST forgets the old credential at once (it answers 403, not 401, to a known one).
    assert.equal((await call('GET', `${server.http}/engine/api/v1/table/main`, { auth: ['emil', 'emil-old'] })).status, 401);
    await fails(server, admin('createSession', undefined, { username: 'emil', password: 'emil-old' }), 12033);
    await login(server, 'emil', 'emil-reset');
  });

  it('changing one\'s own password ends the account\'s other sessions and keeps the caller\'s', async () => {
    await ok(server, admin('createAccount', root, { username: 'fritz', password: 'fritz-old' }));
    const caller = await login(server, 'fritz', 'fritz-old');
    const other = await login(server, 'fritz', 'fritz-old');
    await ok(server, admin('alterAccount', caller, { username: 'fritz', currentPassword: 'fritz-old', password: 'fritz-new' }));
    await ok(server, admin('pingSession', caller));
    await fails(server, admin('pingSession', other), 12031);
  });

  it('another account\'s password needs a grant, current password or not', async () => {
    await ok(server, admin('createAccount', root, { username: 'gina', password: 'gina-pw' }));
    const gina = await login(server, 'gina', 'gina-pw');
    await fails(server, admin('alterAccount', gina, { username: 'admin', currentPassword: 'ADMIN', password: 'hijack' }), 12030);
    await login(server);
  });
});
