/**
 * Review finding (review6), on one node: alterAccount and deleteAccount of the same account at
 * once. Both reach the store without waiting once they start (require, then the store's write),
 * so the later one's entry is the later one: when the alter comes first, the delete follows and
 * the account is gone; when the delete comes first, the alter is refused (ACCOUNT_NOT_FOUND).
 * Either way no account is left. Before the fix the alter, resuming once its write was durable,
 * put its record back in memory after the delete: an account the store had deleted that still
 * logged in (until a restart). The same for roles: alterRole and deleteRole.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { admin, login, ok, send, startActionServer } from './action-client';

describe('actions: an account or role altered while it is deleted', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startActionServer();
    token = await login(server);
  });
  after(() => server.close());

  it('leaves no account that an alterAccount and a deleteAccount sent together were about, and none of them logs in', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `altered_deleted_${i}`);
    for (const username of names) await ok(server, admin('createAccount', token, { username, password: 'a-password-1' }));
    const answers = await Promise.all(names.flatMap((username) => [
      send(server, admin('alterAccount', token, { username, description: 'altered' })),
      send(server, admin('deleteAccount', token, { username })),
    ]));
    for (let i = 1; i < answers.length; i += 2) assert.equal(answers[i].errorCode, 0, 'every delete succeeded');
    const left = (await ok(server, admin('listAccounts', token))).accounts.map((a: { username: string }) => a.username).filter((name: string) => names.includes(name));
    assert.deepEqual(left, [], 'accounts deleted after (or instead of) their alter');
    const logins = await Promise.all(names.map((username) => send(server, admin('createSession', undefined, { username, password: 'a-password-1' }))));
    assert.deepEqual(logins.filter((answer) => answer.errorCode === 0).length, 0, 'a deleted account logs in');
  });

  it('leaves no role that an alterRole and a deleteRole sent together were about', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `altered_deleted_role_${i}`);
    for (const roleName of names) await ok(server, admin('createRole', token, { roleName, grants: [{ commands: ['record.find'], resources: ['*'] }] }));
    const answers = await Promise.all(names.flatMap((roleName) => [
      send(server, admin('alterRole', token, { roleName, description: 'altered' })),
      send(server, admin('deleteRole', token, { roleName })),
    ]));
    for (let i = 1; i < answers.length; i += 2) assert.equal(answers[i].errorCode, 0, `every delete succeeded: ${JSON.stringify(answers[i])}`);
    const roles = await ok(server, admin('listRoles', token));
    const left = (roles.roles as Array<{ roleName: string }>).map((r) => r.roleName).filter((name) => names.includes(name));
    assert.deepEqual(left, [], 'roles deleted after (or instead of) their alter');
  });
});
