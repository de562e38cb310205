/** The admin api: sessions, accounts, roles (plugins/actions/apis/admin.ts, admin-commands.ts). */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { admin, fails, login, ok, send, startActionServer } from './action-client';

describe('actions: admin api', function () {
  this.timeout(20_000);
  let server: TestServer;
  let root: string;

  before(async function () {
    server = await startActionServer();
    root = await login(server);
  });
  after(async function () {
    await server?.close();
  });

  describe('createSession', function () {
    it('returns authToken at the top level and in result, with the session settings', async function () {
      const response = await send(server, admin('createSession', undefined, { username: 'admin', password: 'ADMIN' }));
      assert.equal(response.errorCode, 0);
      assert.equal(typeof response.authToken, 'string');
      assert.ok(response.authToken.length >= 22, 'at least 128 random bits');
      const r = response.result;
      assert.equal(r.authToken, response.authToken);
      assert.equal(r.username, 'admin');
      assert.equal(r.defaultApi, 'db');
      assert.equal(r.defaultDatabaseName, 'main');
      assert.equal(r.defaultOwnerName, 'admin');
      assert.equal(r.defaultBinaryFormat, 'hex');
      assert.equal(r.defaultVariantFormat, 'json');
      assert.equal(r.defaultNumberFormat, 'number');
      assert.deepEqual(r.defaultResponseOptions, {});
      assert.equal(r.idleConnectionTimeoutSeconds, 3600);
      assert.equal(r.description, '');
      assert.ok(!Number.isNaN(Date.parse(r.sessionStartTimestamp)));
      assert.ok(!Number.isNaN(Date.parse(r.sessionLastAccessedTimestamp)));
    });

    it('takes every optional setting', async function () {
      const params = {
        username: 'ADMIN', password: 'ADMIN', description: 'tests', defaultApi: 'admin', defaultDatabaseName: 'other',
        defaultOwnerName: 'bob', defaultBinaryFormat: 'BASE64', defaultVariantFormat: 'variantobject', defaultNumberFormat: 'String',
        defaultResponseOptions: { dataFormat: 'objects' }, idleConnectionTimeoutSeconds: 60,
      };
      const r = await ok(server, admin('createSession', undefined, params));
      assert.equal(r.username, 'admin', 'account names are case-insensitive');
      assert.equal(r.description, 'tests');
      assert.equal(r.defaultApi, 'admin');
      assert.equal(r.defaultDatabaseName, 'other');
      assert.equal(r.defaultOwnerName, 'bob');
      assert.equal(r.defaultBinaryFormat, 'base64');
      assert.equal(r.defaultVariantFormat, 'variantObject');
      assert.equal(r.defaultNumberFormat, 'string');
      assert.deepEqual(r.defaultResponseOptions, { dataFormat: 'objects' });
      assert.equal(r.idleConnectionTimeoutSeconds, 60);
    });

    it('answers bad credentials with 12033', async function () {
      await fails(server, admin('createSession', undefined, { username: 'admin', password: 'wrong' }), 12033);
      await fails(server, admin('createSession', undefined, { username: 'nobody', password: 'ADMIN' }), 12033);
      await fails(server, admin('createSession', undefined, { username: 'admin', password: '' }), 12033);
    });

    it('answers missing params with 12025 and wrong types with 12012', async function () {
      await fails(server, admin('createSession', undefined, { password: 'ADMIN' }), 12025);
      await fails(server, admin('createSession', undefined, { username: 'admin' }), 12025);
      await fails(server, admin('createSession', undefined), 12025);
      await fails(server, admin('createSession', undefined, { username: 'admin', password: 123 }), 12012);
      await fails(server, admin('createSession', undefined, { username: ['admin'], password: 'ADMIN' }), 12012);
      await fails(server, admin('createSession', undefined, { username: '', password: 'ADMIN' }), 12012);
    });

    it('answers invalid settings with 12012', async function () {
      const base = { username: 'admin', password: 'ADMIN' };
      const bad: Array<Record<string, unknown>> = [
        { defaultApi: 'nope' }, { defaultApi: 3 }, { defaultDatabaseName: '' }, { defaultOwnerName: '' },
        { defaultDatabaseName: 'x'.repeat(65) }, { defaultBinaryFormat: 'octal' }, { defaultVariantFormat: 'xml' },
        { defaultNumberFormat: 'float' }, { idleConnectionTimeoutSeconds: 0 }, { idleConnectionTimeoutSeconds: 1.5 },
        { idleConnectionTimeoutSeconds: '60' }, { idleConnectionTimeoutSeconds: 10 ** 9 }, { description: 5 },
        { description: 'd'.repeat(5000) }, { defaultResponseOptions: 'objects' },
        { defaultResponseOptions: { includeFields: ['a'], excludeFields: ['b'] } },
        { defaultResponseOptions: { dataFormat: 'tables' } },
      ];
      for (const settings of bad) await fails(server, admin('createSession', undefined, { ...base, ...settings }), 12012);
    });
  });

  describe('session actions', function () {
    it('alterSession changes the current session\'s settings', async function () {
      const token = await login(server);
      const r = await ok(server, admin('alterSession', token, { description: 'altered', defaultApi: 'admin', idleConnectionTimeoutSeconds: 120, defaultResponseOptions: { numberFormat: 'string' } }));
      assert.equal(r.description, 'altered');
      assert.equal(r.defaultApi, 'admin');
      assert.equal(r.idleConnectionTimeoutSeconds, 120);
      const described = await ok(server, admin('describeSessions', token));
      const mine = described.sessions.find((s: any) => s.sessionId === r.sessionId);
      assert.equal(mine.description, 'altered');
      assert.equal(mine.currentSession, true);
      await ok(server, { action: 'listAccounts', authToken: token });
      await fails(server, admin('alterSession', token, { defaultApi: 'xyz' }), 12012);
      await fails(server, admin('alterSession', token, { idleConnectionTimeoutSeconds: -1 }), 12012);
    });

    it('pingSession works with and without a token; a bad token is 12031', async function () {
      const token = await login(server);
      await ok(server, admin('pingSession', token));
      await ok(server, admin('pingSession', undefined));
      await fails(server, admin('pingSession', 'bogus'), 12031);
    });

    it('deleteSession ends the session', async function () {
      const token = await login(server);
      await ok(server, admin('deleteSession', token));
      await fails(server, admin('pingSession', token), 12031);
      await fails(server, admin('deleteSession', token), 12031);
    });

    it('describeSessions and listSessions show an account its own sessions; admins see all', async function () {
      await ok(server, admin('createAccount', root, { username: 'viewer', password: 'pw-viewer' }));
      const viewer = await login(server, 'viewer', 'pw-viewer');
      const viewer2 = await login(server, 'viewer', 'pw-viewer');
      const idOf = async (token: string): Promise<string> => (await ok(server, admin('describeSessions', token, { authTokens: [token] }))).sessions[0].sessionId;
      const [viewerId, viewer2Id, rootId] = [await idOf(viewer), await idOf(viewer2), await idOf(root)];
      const own = await ok(server, admin('describeSessions', viewer));
      assert.deepEqual(own.sessions.map((s: any) => s.sessionId).sort(), [viewerId, viewer2Id].sort());
      assert.ok(own.sessions.every((s: any) => s.username === 'viewer'));
      const listed = await ok(server, admin('listSessions', viewer));
      assert.ok(listed.sessions.every((s: any) => s.username === 'viewer'));
      const all = await ok(server, admin('listSessions', root));
      const accounts = new Set(all.sessions.map((s: any) => s.username));
      assert.ok(accounts.has('viewer') && accounts.has('admin'));
      // another account's session
      await fails(server, admin('describeSessions', viewer, { sessionIds: [rootId] }), 12032);
      await fails(server, admin('describeSessions', viewer, { authTokens: [root] }), 12032);
      await fails(server, admin('deleteSession', viewer, { sessionId: rootId }), 12032);
      await fails(server, admin('alterSession', viewer, { sessionId: rootId, description: 'x' }), 12032);
      const byAdmin = await ok(server, admin('describeSessions', root, { sessionIds: [viewerId] }));
      assert.equal(byAdmin.sessions[0].username, 'viewer');
      await fails(server, admin('describeSessions', root, { authTokens: 'abc' }), 12012);
      await fails(server, admin('describeSessions', root, { sessionIds: ['no-such-session'] }), 12012);
      await fails(server, admin('describeSessions', root, { authTokens: ['no-such-token'] }), 12012);
      // an admin may end another account's session
      await ok(server, admin('deleteSession', root, { sessionId: viewer2Id }));
      await fails(server, admin('pingSession', viewer2), 12031);
    });
  });

  describe('accounts', function () {
    it('createAccount, listAccounts, deleteAccount', async function () {
      const created = await ok(server, admin('createAccount', root, { username: 'Alice', password: 'pw-alice', description: 'first', roles: ['reader'] }));
      assert.equal(created.username, 'alice');
      assert.deepEqual(created.roles, ['reader']);
      assert.equal(created.description, 'first');
      assert.equal(created.passwordHash, undefined);
      const listed = await ok(server, admin('listAccounts', root));
      const alice = listed.accounts.find((a: any) => a.username === 'alice');
      assert.ok(alice);
      assert.equal(alice.passwordHash, undefined);
      const session = await login(server, 'alice', 'pw-alice');
      await ok(server, admin('deleteAccount', root, { username: 'ALICE' }));
      await fails(server, admin('pingSession', session), 12031);
      await fails(server, admin('createSession', undefined, { username: 'alice', password: 'pw-alice' }), 12033);
    });

    it('rejects duplicates, bad names, unknown roles, missing params', async function () {
      await ok(server, admin('createAccount', root, { username: 'dup', password: 'pw' }));
      await fails(server, admin('createAccount', root, { username: 'DUP', password: 'pw' }), 12041);
      await fails(server, admin('createAccount', root, { username: 'bad name!', password: 'pw' }), 12012);
      await fails(server, admin('createAccount', root, { username: 'x'.repeat(65), password: 'pw' }), 12012);
      await fails(server, admin('createAccount', root, { username: 'nopw' }), 12025);
      await fails(server, admin('createAccount', root, { password: 'pw' }), 12025);
      await fails(server, admin('createAccount', root, { username: 'emptypw', password: '' }), 12012);
      await fails(server, admin('createAccount', root, { username: 'longpw', password: 'p'.repeat(2000) }), 12012);
      await fails(server, admin('createAccount', root, { username: 'r', password: 'pw', roles: ['no-such-role'] }), 12042);
      await fails(server, admin('createAccount', root, { username: 'r', password: 'pw', roles: 'admin' }), 12012);
      await fails(server, admin('deleteAccount', root, { username: 'nobody' }), 12040);
      await fails(server, admin('deleteAccount', root, { username: 'admin' }), 12012);
      await fails(server, admin('deleteAccount', root, {}), 12025);
    });

    it('alterAccount: a password change ends the account\'s other sessions', async function () {
      await ok(server, admin('createAccount', root, { username: 'carol', password: 'old-pw' }));
      const first = await login(server, 'carol', 'old-pw');
      const second = await login(server, 'carol', 'old-pw');
      // carol changes her own password (no grant needed for one's own account)
      const altered = await ok(server, admin('alterAccount', first, { username: 'carol', currentPassword: 'old-pw', password: 'new-pw', description: 'changed' }));
      assert.equal(altered.description, 'changed');
      await ok(server, admin('pingSession', first));
      await fails(server, admin('pingSession', second), 12031);
      await fails(server, admin('createSession', undefined, { username: 'carol', password: 'old-pw' }), 12033);
      await login(server, 'carol', 'new-pw');
      // but not someone else's
      await fails(server, admin('alterAccount', first, { username: 'admin', password: 'hijack' }), 12030);
      await fails(server, admin('alterAccount', root, { username: 'nobody', description: 'x' }), 12040);
      await fails(server, admin('alterAccount', root, { username: 'carol', password: 42 }), 12012);
    });

    it('non-admins get 12030 for account and role administration', async function () {
      await ok(server, admin('createAccount', root, { username: 'plain', password: 'pw-plain' }));
      const plain = await login(server, 'plain', 'pw-plain');
      await fails(server, admin('createAccount', plain, { username: 'x1', password: 'pw' }), 12030);
      await fails(server, admin('deleteAccount', plain, { username: 'admin' }), 12030);
      await fails(server, admin('listAccounts', plain), 12030);
      await fails(server, admin('createRole', plain, { roleName: 'r1', grants: [] }), 12030);
      await fails(server, admin('listRoles', plain), 12030);
      await fails(server, admin('assignRolesToAccounts', plain, { usernames: ['plain'], roleNames: ['admin'] }), 12030);
      // own sessions still work
      await ok(server, admin('pingSession', plain));
      await ok(server, admin('describeSessions', plain));
    });
  });

  describe('roles', function () {
    it('refuses a resource pattern that names no kind of resource (a deny written so would match nothing)', async function () {
      const root = await login(server);
      const refused = await fails(server, admin('createRole', root, { roleName: 'typo', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['record.*'], resources: ['main.secret'] }] }), 12012);
      assert.match(refused.errorMessage, /denies\[0\]\.resources\[0\].*main\.secret/);
      await ok(server, admin('createRole', root, { roleName: 'typo', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['record.*'], resources: ['table:main/secret'] }] }));
      await fails(server, admin('alterRole', root, { roleName: 'typo', grants: [{ commands: ['*'], resources: ['tables:main/x'] }] }), 12012);
    });

    it('createRole, listRoles, alterRole, assign, revoke, deleteRole', async function () {
      await ok(server, admin('createAccount', root, { username: 'dave', password: 'pw-dave' }));
      const dave = await login(server, 'dave', 'pw-dave');
      await fails(server, admin('listAccounts', dave), 12030);

      const role = await ok(server, admin('createRole', root, { roleName: 'Auditor', description: 'reads accounts', grants: [{ commands: ['account.list'], resources: ['*'] }] }));
      assert.equal(role.roleName, 'auditor');
      const roles = await ok(server, admin('listRoles', root));
      assert.ok(roles.roles.some((r: any) => r.roleName === 'auditor' && r.origin === 'stored'));
      assert.ok(roles.roles.some((r: any) => r.roleName === 'admin' && r.origin === 'builtin'));

      const assigned = await ok(server, admin('assignRolesToAccounts', root, { usernames: ['dave'], roleNames: ['auditor'] }));
      assert.deepEqual(assigned.accounts[0].roles, ['auditor']);
      await ok(server, admin('listAccounts', dave)); // roles apply to live sessions at once
      await fails(server, admin('listRoles', dave), 12030);

      await ok(server, admin('alterRole', root, { roleName: 'auditor', grants: [{ commands: ['account.list', 'role.list'], resources: ['*'] }] }));
      await ok(server, admin('listRoles', dave));

      await ok(server, admin('alterRole', root, { roleName: 'auditor', denies: [{ commands: ['role.list'], resources: ['*'] }] }));
      await fails(server, admin('listRoles', dave), 12030);

      await ok(server, admin('revokeRolesFromAccounts', root, { accounts: ['dave'], roleNames: ['auditor'] }));
      await fails(server, admin('listAccounts', dave), 12030);

      await ok(server, admin('assignRolesToAccounts', root, { usernames: ['dave'], roleNames: ['auditor'] }));
      await ok(server, admin('deleteRole', root, { roleName: 'auditor' }));
      await fails(server, admin('listAccounts', dave), 12030);
      const accounts = await ok(server, admin('listAccounts', root));
      assert.deepEqual(accounts.accounts.find((a: any) => a.username === 'dave').roles, []);
    });

    it('rejects bad role input', async function () {
      await fails(server, admin('createRole', root, { roleName: 'nogrants' }), 12025);
      await fails(server, admin('createRole', root, { grants: [] }), 12025);
      await fails(server, admin('createRole', root, { roleName: 'badgrant', grants: [{ commands: 'x', resources: ['*'] }] }), 12012);
      await fails(server, admin('createRole', root, { roleName: 'badgrant', grants: [{ commands: ['x'] }] }), 12025);
      await fails(server, admin('createRole', root, { roleName: 'bad name', grants: [] }), 12012);
      await fails(server, admin('createRole', root, { roleName: 'admin', grants: [] }), 12043);
      await fails(server, admin('alterRole', root, { roleName: 'admin', description: 'mine' }), 12044);
      await fails(server, admin('deleteRole', root, { roleName: 'reader' }), 12044);
      await fails(server, admin('deleteRole', root, { roleName: 'nope' }), 12042);
      await fails(server, admin('alterRole', root, { roleName: 'nope', description: 'x' }), 12042);
      await fails(server, admin('assignRolesToAccounts', root, { usernames: ['admin'], roleNames: ['nope'] }), 12042);
      await fails(server, admin('assignRolesToAccounts', root, { usernames: ['nobody'], roleNames: ['reader'] }), 12040);
      await fails(server, admin('assignRolesToAccounts', root, { roleNames: ['reader'] }), 12025);
      await fails(server, admin('assignRolesToAccounts', root, { usernames: ['admin'] }), 12025);
      await fails(server, admin('revokeRolesFromAccounts', root, { usernames: 'admin', roleNames: ['reader'] }), 12012);
    });
  });
});
