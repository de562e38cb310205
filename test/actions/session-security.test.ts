/**
 * Sessions, cursors and transactions through POST /api on a real data folder: no session token is
 * ever shown to anyone but its holder, and every later step of a long-lived object is authorized
 * with the caller's current roles.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { admin, db, fails, login, ok, startActionServer } from './action-client';

const NOT_AUTHORIZED = 12030;

describe('actions: session tokens stay secret; long-lived objects are authorized at every step', function () {
  this.timeout(30_000);
  let server: TestServer;
  let root: string;

  before(async function () {
    server = await startActionServer();
    root = await login(server);
    await ok(server, db('createTable', root, { tableName: 'items', fields: [{ name: 'n', type: 'integer' }] }));
    await ok(server, db('insertRecords', root, { tableName: 'items', sourceData: [{ n: 1 }, { n: 2 }, { n: 3 }] }));
    await ok(server, db('createTable', root, { tableName: 'secret', fields: [{ name: 'code', type: 'varchar', length: 10 }] }));
  });
  after(async function () {
    await server?.close();
  });

  /** An account with these roles and a session of it. */
  async function accountWith(username: string, roles: string[]): Promise<string> {
    await ok(server, admin('createAccount', root, { username, password: `${username}-password`, roles }));
    return login(server, username, `${username}-password`);
  }

  describe('listSessions and describeSessions', function () {
    it('show a session id, never a token, not even the caller\'s own', async function () {
      const sue = await accountWith('sue', []);
      const created = await ok(server, admin('createSession', undefined, { username: 'sue', password: 'sue-password' }));
      assert.equal(typeof created.sessionId, 'string');
      assert.notEqual(created.sessionId, created.authToken);
      const tokens = [root, sue, created.authToken];
      const noToken = (what: string, response: unknown): void => {
        const text = JSON.stringify(response);
        for (const token of tokens) assert.ok(!text.includes(token), `${what} shows a token: ${text}`);
      };

      const listed = await ok(server, admin('listSessions', root));
      noToken('listSessions (admin)', listed);
      const sueSessions = listed.sessions.filter((s: any) => s.username === 'sue');
      assert.equal(sueSessions.length, 2);
      assert.ok(sueSessions.every((s: any) => typeof s.sessionId === 'string' && s.authToken === undefined));
      assert.ok(sueSessions.some((s: any) => s.sessionId === created.sessionId));
      noToken('listSessions (own)', await ok(server, admin('listSessions', sue)));
      noToken('describeSessions (own)', await ok(server, admin('describeSessions', root)));
      noToken('describeSessions (by token)', await ok(server, admin('describeSessions', sue, { authTokens: [sue] })));

      // an admin names another account's session by its id
      const described = await ok(server, admin('describeSessions', root, { sessionIds: [created.sessionId] }));
      noToken('describeSessions (by id)', described);
      assert.equal(described.sessions[0].username, 'sue');
      assert.equal(described.sessions[0].currentSession, false);
      const altered = await ok(server, admin('alterSession', root, { sessionId: created.sessionId, description: 'seen by admin' }));
      noToken('alterSession', altered);
      assert.equal(altered.description, 'seen by admin');
      await ok(server, admin('deleteSession', root, { sessionId: created.sessionId }));
      await fails(server, admin('pingSession', created.authToken), 12031);
      await ok(server, admin('pingSession', sue));
      await fails(server, admin('deleteSession', root, { sessionId: created.sessionId }), 12012);
    });

    it('a session id grants nothing: it is not a token', async function () {
      const { sessions } = await ok(server, admin('describeSessions', root, {}));
      const mine = sessions.find((s: any) => s.currentSession);
      await fails(server, db('listTables', mine.sessionId), 12031);
    });
  });

  describe('cursors', function () {
    it('a revoked role stops an open cursor at its next fetch; granting it again lets the cursor go on', async function () {
      const cora = await accountWith('cora', ['reader']);
      const { cursorId } = await ok(server, db('getRecordsByTable', cora, { tableName: 'items', returnCursor: true }));
      assert.equal((await ok(server, db('getRecordsFromCursor', cora, { cursorId, fetchRecords: 1 }))).returnedRecordCount, 1);

      await ok(server, admin('revokeRolesFromAccounts', root, { usernames: ['cora'], roleNames: ['reader'] }));
      await fails(server, db('getRecordsFromCursor', cora, { cursorId, fetchRecords: 1 }), NOT_AUTHORIZED);

      await ok(server, admin('assignRolesToAccounts', root, { usernames: ['cora'], roleNames: ['reader'] }));
      assert.equal((await ok(server, db('getRecordsFromCursor', cora, { cursorId, fetchRecords: 5 }))).returnedRecordCount, 2);
      await ok(server, db('closeCursor', cora, { cursorId }));
    });

    it('the owner closes its cursor without any grant (closing only releases it)', async function () {
      const cleo = await accountWith('cleo', ['reader']);
      const { cursorId } = await ok(server, db('getRecordsByTable', cleo, { tableName: 'items', returnCursor: true }));
      await ok(server, admin('revokeRolesFromAccounts', root, { usernames: ['cleo'], roleNames: ['reader'] }));
      await ok(server, db('closeCursor', cleo, { cursorId }));
      await fails(server, db('closeCursor', cleo, { cursorId }), 4080);
    });

    it('a cursor reads records: a record.* deny on the table stops opening one and every later fetch', async function () {
      await ok(server, admin('createRole', root, { roleName: 'cursor_only', grants: [{ commands: ['*'], resources: ['*'] }] }));
      const cody = await accountWith('cody', ['cursor_only']);
      const { cursorId } = await ok(server, db('getRecordsByTable', cody, { tableName: 'items', returnCursor: true }));
      await ok(server, db('getRecordsFromCursor', cody, { cursorId, fetchRecords: 1 }));
      await ok(server, admin('alterRole', root, { roleName: 'cursor_only', denies: [{ commands: ['record.*'], resources: ['table:main/items'] }] }));
      await fails(server, db('getRecordsByTable', cody, { tableName: 'items' }), NOT_AUTHORIZED);
      const opened = await fails(server, db('getRecordsByTable', cody, { tableName: 'items', returnCursor: true }), NOT_AUTHORIZED);
      assert.match(opened.errorMessage, /record\.find/);
      const fetched = await fails(server, db('getRecordsFromCursor', cody, { cursorId, fetchRecords: 1 }), NOT_AUTHORIZED);
      assert.match(fetched.errorMessage, /record\.find/);
      await ok(server, db('closeCursor', cody, { cursorId }));
    });

    it('a deny added to a held role applies to the next fetch', async function () {
      await ok(server, admin('createRole', root, { roleName: 'browse', grants: [{ commands: ['cursor.*', 'record.find', 'table.*'], resources: ['*'] }] }));
      const bert = await accountWith('bert', ['browse']);
      const { cursorId } = await ok(server, db('getRecordsByTable', bert, { tableName: 'items', returnCursor: true }));
      await ok(server, db('getRecordsFromCursor', bert, { cursorId, fetchRecords: 1 }));
      await ok(server, admin('alterRole', root, { roleName: 'browse', denies: [{ commands: ['cursor.fetch'], resources: ['table:main/items'] }] }));
      const refused = await fails(server, db('getRecordsFromCursor', bert, { cursorId, fetchRecords: 1 }), NOT_AUTHORIZED);
      assert.match(refused.errorMessage, /cursor\.fetch/);
    });

    it('another session\'s cursor is still "not found" before any role check', async function () {
      const other = await login(server);
      const { cursorId } = await ok(server, db('getRecordsByTable', root, { tableName: 'items', returnCursor: true }));
      const nobody = await accountWith('nobody', []);
      await fails(server, db('getRecordsFromCursor', nobody, { cursorId, fetchRecords: 1 }), 4080);
      await fails(server, db('getRecordsFromCursor', other, { cursorId, fetchRecords: 1 }), 4080);
      await ok(server, db('closeCursor', root, { cursorId }));
    });
  });

  describe('transactions', function () {
    const count = async (): Promise<number> => (await ok(server, db('getRecordsByTable', root, { tableName: 'items', maxRecords: 1000 }))).totalRecordCount;

    it('every write in a transaction and its commit are authorized with the current roles', async function () {
      await ok(server, admin('createRole', root, { roleName: 'itemwriter', grants: [{ commands: ['record.*'], resources: ['table:main/items'] }] }));
      const walt = await accountWith('walt', ['itemwriter']);
      const before = await count();

      // with the role: writes and commit go through
      const first = await ok(server, db('createTransaction', walt));
      await ok(server, db('insertRecords', walt, { tableName: 'items', sourceData: [{ n: 10 }], transactionId: first.transactionId }));
      await ok(server, db('commitTransaction', walt, { transactionId: first.transactionId }));
      assert.equal(await count(), before + 1);

      // the role is revoked between a write and the commit
      const second = await ok(server, db('createTransaction', walt));
      await ok(server, db('insertRecords', walt, { tableName: 'items', sourceData: [{ n: 11 }], transactionId: second.transactionId }));
      await ok(server, admin('revokeRolesFromAccounts', root, { usernames: ['walt'], roleNames: ['itemwriter'] }));
      await fails(server, db('insertRecords', walt, { tableName: 'items', sourceData: [{ n: 12 }], transactionId: second.transactionId }), NOT_AUTHORIZED);
      const refused = await fails(server, db('commitTransaction', walt, { transactionId: second.transactionId }), NOT_AUTHORIZED);
      assert.match(refused.errorMessage, /record\.insert/);
      assert.equal(await count(), before + 1, 'nothing of the refused transaction is stored');
      // a refused commit ends the transaction, like any failed commit
      await fails(server, db('rollbackTransaction', walt, { transactionId: second.transactionId }), 4081);
      await ok(server, admin('assignRolesToAccounts', root, { usernames: ['walt'], roleNames: ['itemwriter'] }));
      await fails(server, db('commitTransaction', walt, { transactionId: second.transactionId }), 4081);
      assert.equal(await count(), before + 1);
    });

    it('a rollback needs no grant: it applies nothing', async function () {
      await ok(server, admin('createRole', root, { roleName: 'deleter', grants: [{ commands: ['record.delete'], resources: ['table:main/items'] }] }));
      const dora = await accountWith('dora', ['deleter']);
      const { transactionId } = await ok(server, db('createTransaction', dora));
      await ok(server, db('deleteRecords', dora, { tableName: 'items', ids: [1], transactionId }));
      await ok(server, admin('revokeRolesFromAccounts', root, { usernames: ['dora'], roleNames: ['deleter'] }));
      await ok(server, db('rollbackTransaction', dora, { transactionId }));
      assert.equal((await ok(server, db('getRecordsByIds', root, { tableName: 'items', ids: [1] }))).returnedRecordCount, 1);
    });
  });

  describe('describeTables', function () {
    it('without tableNames describes every table the caller may describe, leaving out denied ones', async function () {
      await ok(server, admin('createRole', root, {
        roleName: 'nosecret',
        grants: [{ commands: ['*.list', '*.describe'], resources: ['*'] }],
        denies: [{ commands: ['table.describe'], resources: ['table:main/secret'] }],
      }));
      const dan = await accountWith('dan', ['nosecret']);
      for (const params of [{}, { tableNames: [] }]) {
        const described = await ok(server, db('describeTables', dan, params));
        const names = described.data.map((t: any) => t.tableName);
        assert.ok(names.includes('items'), JSON.stringify(names));
        assert.ok(!names.includes('secret'), `a denied table is described: ${JSON.stringify(names)}`);
      }
      await fails(server, db('describeTables', dan, { tableNames: ['secret'] }), NOT_AUTHORIZED);
      const all = await ok(server, db('describeTables', root, {}));
      assert.ok(all.data.some((t: any) => t.tableName === 'secret'));
    });

    it('listTables leaves out a table a role denies (any command, or table.list) and keeps one only some commands are denied on', async function () {
      await ok(server, admin('createRole', root, {
        roleName: 'hidden',
        grants: [{ commands: ['*'], resources: ['*'] }],
        denies: [{ commands: ['*'], resources: ['table:main/secret'] }, { commands: ['record.*'], resources: ['table:main/items'] }],
      }));
      const hal = await accountWith('hal', ['hidden']);
      const listed = await ok(server, db('listTables', hal, {}));
      const names = JSON.stringify(listed);
      assert.ok(names.includes('items'), names);
      assert.ok(!names.includes('secret'), `a denied table is listed: ${names}`);
      assert.ok(JSON.stringify(await ok(server, db('listTables', root, {}))).includes('secret'));
    });

    it('the table.describe command leaves denied tables out of "all tables"', async function () {
      const { engine } = server;
      const ctx = { principal: engine.accounts.principal('dan'), origin: 'internal' };
      const { tables } = await engine.bus.execute<{ tables: Array<{ name: string }> }>('table.describe', { database: 'main', tables: [] }, ctx);
      assert.deepEqual(tables.map((t) => t.name).filter((name) => name === 'secret'), []);
    });
  });
});
