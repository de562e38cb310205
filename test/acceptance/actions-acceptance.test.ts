/**
 * Black-box acceptance suite for the JSON-action interface (`POST /api`).
 *
 * Written from the specification (the product's documented actions), issue 4, docs/actions.md and
 * the established product's public documentation (FairCom JSON DB API parameter names and result
 * shapes). Only real HTTP requests against a real engine on a temporary data folder.
 */
import assert from 'node:assert/strict';
import { call, startServer, type HttpResult, type TestServer } from '../helpers/server';
import { ManualClock } from '../helpers/manual-clock';

let server: TestServer;

function post(body: unknown, headers?: Record<string, string>): Promise<HttpResult> {
  return call('POST', `${server.http}/api`, { body, auth: null, headers });
}

/** Sends an envelope, asserts HTTP 200 and a JSON object answer. */
async function send(envelope: unknown): Promise<any> {
  const response = await post(envelope);
  assert.equal(response.status, 200, `HTTP ${response.status}: ${response.text}`);
  assert.ok(response.json && typeof response.json === 'object', response.text);
  return response.json;
}

/** Sends and asserts success; returns `result`. */
async function ok(envelope: Record<string, unknown>): Promise<any> {
  const response = await send(envelope);
  assert.equal(response.errorCode, 0, `${String(envelope.action)} failed: ${response.errorCode} ${response.errorMessage}`);
  assert.equal(response.errorMessage, '');
  return response.result;
}

/** Sends and asserts the given error code with a non-empty message; returns the envelope. */
async function fails(envelope: Record<string, unknown>, errorCode: number): Promise<any> {
  const response = await send(envelope);
  assert.equal(response.errorCode, errorCode, `${String(envelope.action)}: expected ${errorCode}, got ${response.errorCode} "${response.errorMessage}"`);
  assert.equal(typeof response.errorMessage, 'string');
  assert.notEqual(response.errorMessage, '');
  return response;
}

async function login(username = 'admin', password = 'ADMIN', params: Record<string, unknown> = {}): Promise<string> {
  const result = await ok({ api: 'admin', action: 'createSession', params: { username, password, ...params } });
  assert.equal(typeof result.authToken, 'string');
  return result.authToken;
}

function db(authToken: string, action: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'db', action, params, authToken, ...extra };
}
function adm(authToken: string | undefined, action: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'admin', action, params, authToken, ...extra };
}

let tableCounter = 0;
function uniqueTable(prefix = 't'): string {
  tableCounter += 1;
  return `${prefix}_${Date.now() % 100000}_${tableCounter}`;
}

/** A people table with name varchar(20), age integer; returns its name. */
async function peopleTable(token: string, rows: Array<[string, number]> = [['Ann', 30], ['Bob', 40], ['Cid', 50], ['Dee', 60], ['Eve', 70]]): Promise<string> {
  const tableName = uniqueTable('people');
  await ok(db(token, 'createTable', {
    tableName,
    fields: [{ name: 'name', type: 'varchar', length: 20 }, { name: 'age', type: 'integer' }],
  }));
  if (rows.length) {
    await ok(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData: rows }));
  }
  return tableName;
}

async function countRows(token: string, tableName: string): Promise<number> {
  const result = await ok(db(token, 'getRecordsByTable', { tableName, maxRecords: 100000 }));
  return result.totalRecordCount;
}

// Expiry is tested by advancing the engine's clock, not by sleeping.
const clock = new ManualClock();

describe('acceptance: JSON-action interface', function () {
  this.timeout(60000);
  let token: string;

  before(async () => {
    server = await startServer({}, { clock });
    token = await login();
  });
  after(async () => { await server?.close(); });

  // ---------------------------------------------------------------- envelope
  describe('envelope', () => {
    it('echoes requestId unchanged for every JSON type, on success and on error', async () => {
      const values: unknown[] = ['2', '', 0, 42, -1.5, true, false, null, { a: [1, { b: 'c' }] }, [1, 'x', null]];
      for (const requestId of values) {
        const good = await send({ api: 'admin', action: 'pingSession', params: {}, authToken: token, requestId });
        assert.ok('requestId' in good, `requestId ${JSON.stringify(requestId)} missing`);
        assert.deepEqual(good.requestId, requestId);
        const bad = await send({ api: 'db', action: 'noSuchAction', params: {}, authToken: token, requestId });
        assert.deepEqual(bad.requestId, requestId);
        assert.equal(bad.errorCode, 14701);
      }
    });

    it('has no requestId when none was sent', async () => {
      const response = await send({ api: 'admin', action: 'pingSession', params: {}, authToken: token });
      assert.ok(!('requestId' in response));
    });

    it('answers success with errorCode 0, errorMessage "", result object and authToken', async () => {
      const response = await send(db(token, 'listTables'));
      assert.equal(response.errorCode, 0);
      assert.equal(response.errorMessage, '');
      assert.equal(typeof response.result, 'object');
      assert.equal(response.authToken, token);
    });

    it('answers errors with authToken, result {} and a non-zero code', async () => {
      const response = await send(db(token, 'getRecordsByTable', { tableName: 'does_not_exist_anywhere' }));
      assert.equal(response.errorCode, 4023);
      assert.equal(typeof response.authToken, 'string');
      assert.equal(response.authToken, token);
      assert.deepEqual(response.result, {});
      const noToken = await send({ api: 'db', action: 'listTables', params: {} });
      assert.equal(noToken.errorCode, 12031);
      assert.ok('authToken' in noToken, 'authToken missing from an error response');
    });

    it('orders response properties authToken, result, requestId, errorCode, errorMessage', async () => {
      const response = await send({ ...db(token, 'listTables'), requestId: 'r' });
      assert.deepEqual(Object.keys(response), ['authToken', 'result', 'requestId', 'errorCode', 'errorMessage']);
    });

    it('answers a non-JSON body with HTTP 400 and an envelope carrying 12009', async () => {
      for (const body of ['{not json', 'hello', '{"action": "pingSession",']) {
        const response = await post(body);
        assert.equal(response.status, 400, body);
        assert.ok(response.json, `not a JSON envelope: ${response.text}`);
        assert.equal(response.json.errorCode, 12009);
        assert.equal(typeof response.json.errorMessage, 'string');
        assert.notEqual(response.json.errorMessage, '');
        assert.ok('authToken' in response.json);
      }
    });

    it('answers an empty body with HTTP 400 / 12009', async () => {
      const response = await call('POST', `${server.http}/api`, { body: '', auth: null, headers: { 'content-type': 'application/json' } });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.json?.errorCode, 12009);
    });

    it('parses JSON sent as text/plain', async () => {
      const response = await post(JSON.stringify(db(token, 'listTables')), { 'content-type': 'text/plain' });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.json.errorCode, 0);
    });

    it('answers JSON that is not an object with HTTP 200 and 12012', async () => {
      for (const body of ['[1]', '"x"', '42']) {
        const response = await post(body);
        assert.equal(response.status, 200, `${body}: ${response.text}`);
        assert.equal(response.json.errorCode, 12012, body);
      }
    });

    it('serves the envelope over HTTPS too', async () => {
      assert.ok(server.https, 'no https url');
      const response = await call('POST', `${server.https}/api`, { body: db(token, 'listTables'), auth: null });
      assert.equal(response.status, 200);
      assert.equal(response.json.errorCode, 0);
    });

    it('rejects a missing action with 12025 and a non-string action with 12012', async () => {
      await fails({ api: 'db', params: {}, authToken: token }, 12025);
      await fails({ api: 'db', action: '', params: {}, authToken: token }, 12025);
      await fails({ api: 'db', action: 42, params: {}, authToken: token }, 12012);
    });

    it('rejects params that are not an object with 12012', async () => {
      await fails({ api: 'db', action: 'listTables', params: [1, 2], authToken: token }, 12012);
      await fails({ api: 'db', action: 'listTables', params: 'x', authToken: token }, 12012);
    });

    it('accepts an omitted params object', async () => {
      const response = await send({ api: 'db', action: 'listTables', authToken: token });
      assert.equal(response.errorCode, 0, response.errorMessage);
    });

    it('answers an unknown action with 14701', async () => {
      await fails(db(token, 'frobnicate'), 14701);
      await fails(adm(token, 'frobnicate'), 14701);
    });

    it('defaults api to the session defaultApi (db unless set)', async () => {
      const response = await send({ action: 'listTables', params: {}, authToken: token });
      assert.equal(response.errorCode, 0, response.errorMessage);
      const adminToken = await login('admin', 'ADMIN', { defaultApi: 'admin' });
      const sessions = await send({ action: 'listSessions', params: {}, authToken: adminToken });
      assert.equal(sessions.errorCode, 0, sessions.errorMessage);
      assert.ok(Array.isArray(sessions.result.sessions));
      // listTables is a db action: with defaultApi admin and no api it is not found
      const wrongApi = await send({ action: 'listTables', params: {}, authToken: adminToken });
      assert.equal(wrongApi.errorCode, 14701);
    });

    it('accepts apiVersion "1.0" and debug "max" (debugInfo masks secrets)', async () => {
      const response = await send({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' }, apiVersion: '1.0', debug: 'max' });
      assert.equal(response.errorCode, 0);
      assert.ok(response.debugInfo, 'debugInfo missing');
      const text = JSON.stringify(response.debugInfo);
      assert.ok(!text.includes('"ADMIN"'), `password leaked in debugInfo: ${text}`);
    });
  });

  // ---------------------------------------------------------------- sessions
  describe('admin sessions', () => {
    it('createSession: authToken at top level and in result, settings echoed', async () => {
      const response = await send({
        api: 'admin', action: 'createSession', requestId: 'cs',
        params: {
          username: 'admin', password: 'ADMIN', description: 'acceptance', defaultApi: 'db',
          defaultDatabaseName: 'main', defaultOwnerName: 'admin', defaultBinaryFormat: 'base64',
          defaultVariantFormat: 'string', defaultResponseOptions: { dataFormat: 'objects', numberFormat: 'string' },
          idleConnectionTimeoutSeconds: 120,
        },
      });
      assert.equal(response.errorCode, 0, response.errorMessage);
      assert.equal(typeof response.authToken, 'string');
      assert.ok(response.authToken.length >= 22, 'token shorter than 128 bits');
      assert.equal(response.result.authToken, response.authToken);
      const r = response.result;
      assert.equal(r.username, 'admin');
      assert.equal(r.description, 'acceptance');
      assert.equal(r.defaultApi, 'db');
      assert.equal(r.defaultDatabaseName, 'main');
      assert.equal(r.defaultOwnerName, 'admin');
      assert.equal(r.defaultBinaryFormat, 'base64');
      assert.equal(r.defaultVariantFormat, 'string');
      assert.deepEqual(r.defaultResponseOptions, { dataFormat: 'objects', numberFormat: 'string' });
      assert.equal(r.idleConnectionTimeoutSeconds, 120);
      assert.equal(typeof r.sessionStartTimestamp, 'string');
      assert.equal(typeof r.sessionLastAccessedTimestamp, 'string');
      assert.equal(response.requestId, 'cs');
    });

    it('createSession defaults: idle timeout 3600, db api, main database, admin owner, hex', async () => {
      const r = await ok({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
      assert.equal(r.idleConnectionTimeoutSeconds, 3600);
      assert.equal(r.defaultApi, 'db');
      assert.equal(r.defaultDatabaseName, 'main');
      assert.equal(r.defaultOwnerName, 'admin');
      assert.equal(r.defaultBinaryFormat, 'hex');
    });

    it('tokens are distinct per session', async () => {
      const a = await login();
      const b = await login();
      assert.notEqual(a, b);
    });

    it('createSession: username is case-insensitive, password is not', async () => {
      await login('ADMIN', 'ADMIN');
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'admin' } }, 12033);
    });

    it('createSession: bad credentials 12033', async () => {
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'wrong' } }, 12033);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'nobody_here', password: 'x' } }, 12033);
    });

    it('createSession: missing params 12025, invalid values 12012', async () => {
      await fails({ api: 'admin', action: 'createSession', params: { password: 'ADMIN' } }, 12025);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin' } }, 12025);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', idleConnectionTimeoutSeconds: 'soon' } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', defaultApi: 'nope' } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', defaultBinaryFormat: 'octal' } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', defaultDatabaseName: '' } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', defaultOwnerName: '' } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', defaultResponseOptions: { dataFormat: 'csv' } } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 42, password: 'ADMIN' } }, 12012);
    });

    it('createSession works without api when the action is only in admin', async () => {
      const response = await send({ action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
      assert.equal(response.errorCode, 0, response.errorMessage);
    });

    it('bad, missing or deleted tokens answer 12031', async () => {
      await fails(db('not-a-real-token', 'listTables'), 12031);
      await fails({ api: 'db', action: 'listTables', params: {} }, 12031);
      // a non-string token is a wrong-typed envelope property: 12031 or 12012 are both defensible
      const numeric = await send({ api: 'db', action: 'listTables', params: {}, authToken: 12345 });
      assert.ok([12031, 12012].includes(numeric.errorCode), String(numeric.errorCode));
      const t = await login();
      const deleted = await ok(adm(t, 'deleteSession'));
      assert.ok(deleted);
      await fails(db(t, 'listTables'), 12031);
    });

    it('an idle session expires after idleConnectionTimeoutSeconds (12031)', async () => {
      const t = await login('admin', 'ADMIN', { idleConnectionTimeoutSeconds: 1 });
      await ok(db(t, 'listTables'));
      clock.advanceSeconds(1.6);
      await fails(db(t, 'listTables'), 12031);
    });

    it('each request resets the idle clock', async () => {
      const t = await login('admin', 'ADMIN', { idleConnectionTimeoutSeconds: 2 });
      for (let i = 0; i < 3; i += 1) {
        clock.advanceSeconds(0.9);
        await ok(db(t, 'listTables'));
      }
    });

    it('pingSession works with and without a token', async () => {
      const r = await ok({ api: 'admin', action: 'pingSession', params: {} });
      assert.deepEqual(r, {});
      await ok(adm(token, 'pingSession'));
    });

    it('alterSession changes settings and they apply to later requests', async () => {
      const t = await login();
      const tableName = await peopleTable(t, [['Ann', 30]]);
      const before = await ok(db(t, 'getRecordsByTable', { tableName }));
      assert.equal(before.dataFormat, 'arrays');
      const altered = await ok(adm(t, 'alterSession', { description: 'changed', defaultResponseOptions: { dataFormat: 'objects' } }));
      assert.equal(altered.description, 'changed');
      assert.deepEqual(altered.defaultResponseOptions, { dataFormat: 'objects' });
      const after = await ok(db(t, 'getRecordsByTable', { tableName }));
      assert.equal(after.dataFormat, 'objects');
      assert.equal(after.data[0].name, 'Ann');
      // the request's own responseOptions win over the session's defaults
      const overridden = await ok(db(t, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'arrays' } }));
      assert.equal(overridden.dataFormat, 'arrays');
      assert.ok(Array.isArray(overridden.data[0]));
      await fails(adm(t, 'alterSession', { defaultBinaryFormat: 'octal' }), 12012);
    });

    it('describeSessions and listSessions show the current session', async () => {
      const t = await login('admin', 'ADMIN', { description: 'described' });
      const described = await ok(adm(t, 'describeSessions'));
      assert.ok(Array.isArray(described.sessions));
      const mine = described.sessions.find((s: any) => s.currentSession === true);
      assert.ok(mine, 'current session not described');
      assert.equal(mine.description, 'described');
      const listed = await ok(adm(t, 'listSessions'));
      assert.ok(listed.sessions.some((s: any) => s.sessionId === mine.sessionId && s.currentSession === true));
      assert.ok(listed.sessions.some((s: any) => s.sessionId !== mine.sessionId && s.currentSession === false));
    });

    it('deleteSession of another session by authToken ends it', async () => {
      const victim = await login();
      await ok(adm(token, 'deleteSession', { authToken: victim }));
      await fails(db(victim, 'listTables'), 12031);
    });
  });

  // ---------------------------------------------------------------- accounts and roles
  describe('accounts and roles', () => {
    let readerToken: string;
    const reader = `reader_${Date.now() % 100000}`;

    before(async () => {
      const account = await ok(adm(token, 'createAccount', { username: reader, password: 'pw-1', roles: ['reader'] }));
      assert.equal(account.username, reader);
      assert.ok(!JSON.stringify(account).toLowerCase().includes('scrypt'), 'password hash exposed');
      readerToken = await login(reader, 'pw-1');
    });

    it('listAccounts shows accounts without password material', async () => {
      const result = await ok(adm(token, 'listAccounts'));
      const found = result.accounts.find((a: any) => a.username === reader);
      assert.ok(found);
      const text = JSON.stringify(result);
      assert.ok(!text.includes('pw-1') && !text.includes('scrypt'), 'password material in listAccounts');
      assert.ok(!('password' in found) && !('passwordHash' in found) && !('hash' in found));
    });

    it('non-admins cannot manage accounts or roles (12030)', async () => {
      await fails(adm(readerToken, 'createAccount', { username: 'intruder', password: 'x' }), 12030);
      await fails(adm(readerToken, 'deleteAccount', { username: 'admin' }), 12030);
      await fails(adm(readerToken, 'alterAccount', { username: 'admin', password: 'hacked' }), 12030);
      await fails(adm(readerToken, 'createRole', { roleName: 'evil', grants: [{ commands: ['*'], resources: ['*'] }] }), 12030);
      await fails(adm(readerToken, 'assignRolesToAccounts', { usernames: [reader], roleNames: ['admin'] }), 12030);
      await fails(adm(readerToken, 'revokeRolesFromAccounts', { usernames: ['admin'], roleNames: ['admin'] }), 12030);
      await fails(adm(readerToken, 'deleteRole', { roleName: 'reader' }), 12030);
      // and nothing changed
      await login('admin', 'ADMIN');
      await fails({ api: 'admin', action: 'createSession', params: { username: 'intruder', password: 'x' } }, 12033);
    });

    it('a reader can read but not write (12030)', async () => {
      const tableName = await peopleTable(token, [['Ann', 30]]);
      const read = await ok(db(readerToken, 'getRecordsByTable', { tableName }));
      assert.equal(read.returnedRecordCount, 1);
      await fails(db(readerToken, 'insertRecords', { tableName, dataFormat: 'objects', sourceData: [{ name: 'X', age: 1 }] }), 12030);
      await fails(db(readerToken, 'deleteTables', { tableNames: [tableName] }), 12030);
      assert.equal(await countRows(token, tableName), 1);
    });

    it('a user cannot end or alter a session of another user', async () => {
      const response = await send(adm(readerToken, 'deleteSession', { authToken: token }));
      assert.notEqual(response.errorCode, 0);
      await ok(db(token, 'listTables'));
      const listed = await ok(adm(readerToken, 'listSessions'));
      assert.ok(!listed.sessions.some((s: any) => s.authToken === token), 'reader sees admin tokens');
    });

    it('createRole / assignRolesToAccounts / revokeRolesFromAccounts / alterRole / deleteRole / listRoles', async () => {
      const user = `writer_${Date.now() % 100000}`;
      const roleName = `writers_${Date.now() % 100000}`;
      await ok(adm(token, 'createAccount', { username: user, password: 'pw' }));
      const tableName = await peopleTable(token, []);
      const role = await ok(adm(token, 'createRole', { roleName, grants: [{ commands: ['record.*', 'table.*'], resources: ['*'] }] }));
      assert.equal(role.roleName, roleName);
      const listed = await ok(adm(token, 'listRoles'));
      assert.ok(listed.roles.some((r: any) => r.roleName === roleName));
      const userToken = await login(user, 'pw');
      await fails(db(userToken, 'insertRecords', { tableName, dataFormat: 'objects', sourceData: [{ name: 'A', age: 1 }] }), 12030);
      await ok(adm(token, 'assignRolesToAccounts', { usernames: [user], roleNames: [roleName] }));
      await ok(db(userToken, 'insertRecords', { tableName, dataFormat: 'objects', sourceData: [{ name: 'A', age: 1 }] }));
      await ok(adm(token, 'revokeRolesFromAccounts', { usernames: [user], roleNames: [roleName] }));
      await fails(db(userToken, 'insertRecords', { tableName, dataFormat: 'objects', sourceData: [{ name: 'B', age: 2 }] }), 12030);
      await ok(adm(token, 'alterRole', { roleName, description: 'altered' }));
      await ok(adm(token, 'deleteRole', { roleName }));
      const after = await ok(adm(token, 'listRoles'));
      assert.ok(!after.roles.some((r: any) => r.roleName === roleName));
      await fails(adm(token, 'assignRolesToAccounts', { usernames: [user], roleNames: ['no_such_role'] }), 12042);
    });

    it('alterAccount password change ends the account\'s other sessions; deleteAccount ends all', async () => {
      const user = `pwchange_${Date.now() % 100000}`;
      await ok(adm(token, 'createAccount', { username: user, password: 'old', roles: ['reader'] }));
      const s1 = await login(user, 'old');
      const s2 = await login(user, 'old');
      await ok(adm(s1, 'alterAccount', { username: user, currentPassword: 'old', password: 'new' }));
      await ok(db(s1, 'listTables'));
      await fails(db(s2, 'listTables'), 12031);
      await fails({ api: 'admin', action: 'createSession', params: { username: user, password: 'old' } }, 12033);
      const s3 = await login(user, 'new');
      await ok(adm(token, 'deleteAccount', { username: user }));
      await fails(db(s1, 'listTables'), 12031);
      await fails(db(s3, 'listTables'), 12031);
      await fails({ api: 'admin', action: 'createSession', params: { username: user, password: 'new' } }, 12033);
    });

    it('createAccount: missing params 12025, duplicate 12041, admin cannot be deleted', async () => {
      await fails(adm(token, 'createAccount', { password: 'x' }), 12025);
      await fails(adm(token, 'createAccount', { username: reader, password: 'x' }), 12041);
      const response = await send(adm(token, 'deleteAccount', { username: 'admin' }));
      assert.notEqual(response.errorCode, 0);
      await login('admin', 'ADMIN');
    });
  });

  // ---------------------------------------------------------------- tables
  describe('db: databases and tables', () => {
    it('createTable adds the automatic id and reports field metadata', async () => {
      const tableName = uniqueTable('meta');
      const created = await ok(db(token, 'createTable', {
        tableName,
        fields: [
          { name: 'name', type: 'varchar', length: 30, nullable: false, defaultValue: 'anon' },
          { name: 'score', type: 'bigint' },
          { name: 'blob', type: 'binary', length: 8 },
        ],
      }));
      assert.equal(created.tableName, tableName);
      const described = await ok(db(token, 'describeTables', { tableNames: [tableName] }));
      const fields = described.data[0].fields;
      const id = fields.find((f: any) => f.name === 'id');
      assert.ok(id, 'automatic id missing');
      for (const key of ['name', 'type', 'length', 'scale', 'autoTimestamp', 'defaultValue', 'nullable', 'primaryKey']) {
        for (const f of fields) assert.ok(key in f, `field ${f.name} lacks ${key}`);
      }
      assert.equal(id.type, 'bigint');
      assert.equal(id.primaryKey, 1);
      assert.equal(id.nullable, false);
      const name = fields.find((f: any) => f.name === 'name');
      assert.equal(name.type, 'varchar');
      assert.equal(name.length, 30);
      assert.equal(name.nullable, false);
      assert.equal(name.primaryKey, 0);
      assert.equal(name.autoTimestamp, 'none');
      assert.equal(name.scale, null);
      assert.equal(name.defaultValue, 'anon');
      const blob = fields.find((f: any) => f.name === 'blob');
      assert.equal(blob.type, 'binary');
      assert.equal(blob.length, 8);
    });

    it('listTables lists it; createTable twice 4022; missing table 4023; missing tableName 12025', async () => {
      const tableName = await peopleTable(token, []);
      const listed = await ok(db(token, 'listTables'));
      assert.ok(listed.data.some((t: any) => t.tableName === tableName));
      await fails(db(token, 'createTable', { tableName, fields: [{ name: 'x', type: 'integer' }] }), 4022);
      await fails(db(token, 'getRecordsByTable', { tableName: 'no_such_table_xyz' }), 4023);
      await fails(db(token, 'getRecordsByTable', {}), 12025);
      await fails(db(token, 'createTable', { tableName: uniqueTable(), fields: [{ name: 'x', type: 'nosuchtype' }] }), 4026);
    });

    it('databaseName or ownerName set to "" is an error (12012)', async () => {
      const tableName = await peopleTable(token, [['Ann', 1]]);
      await fails(db(token, 'getRecordsByTable', { tableName, databaseName: '' }), 12012);
      await fails(db(token, 'getRecordsByTable', { tableName, ownerName: '' }), 12012);
      await fails(db(token, 'insertRecords', { tableName, databaseName: '', sourceData: [{ name: 'x', age: 1 }] }), 12012);
      await fails(db(token, 'listTables', { ownerName: '' }), 12012);
      // explicit values work
      const r = await ok(db(token, 'getRecordsByTable', { tableName, databaseName: 'main', ownerName: 'admin' }));
      assert.equal(r.returnedRecordCount, 1);
    });

    it('createDatabase / listDatabases / tables in another database / deleteDatabase', async () => {
      const databaseName = `db_${Date.now() % 100000}`;
      await ok(db(token, 'createDatabase', { databaseName }));
      const list = await ok(db(token, 'listDatabases'));
      assert.ok(list.data.some((d: any) => d.databaseName === databaseName));
      await ok(db(token, 'createTable', { databaseName, tableName: 'x', fields: [{ name: 'v', type: 'integer' }] }));
      await ok(db(token, 'insertRecords', { databaseName, tableName: 'x', sourceData: [{ v: 1 }] }));
      const r = await ok(db(token, 'getRecordsByTable', { databaseName, tableName: 'x' }));
      assert.equal(r.returnedRecordCount, 1);
      await fails(db(token, 'getRecordsByTable', { databaseName: 'no_such_db_q', tableName: 'x' }), 4094);
      await ok(db(token, 'deleteDatabase', { databaseName }));
      await fails(db(token, 'getRecordsByTable', { databaseName, tableName: 'x' }), 4094);
    });

    it('deleteTables deletes several; one missing table deletes none', async () => {
      const a = await peopleTable(token, [['A', 1]]);
      const b = await peopleTable(token, [['B', 2]]);
      const response = await send(db(token, 'deleteTables', { tableNames: [a, 'no_such_table_del', b] }));
      assert.notEqual(response.errorCode, 0);
      assert.equal(await countRows(token, a), 1);
      assert.equal(await countRows(token, b), 1);
      await ok(db(token, 'deleteTables', { tableNames: [a, b] }));
      await fails(db(token, 'getRecordsByTable', { tableName: a }), 4023);
      await fails(db(token, 'getRecordsByTable', { tableName: b }), 4023);
      await fails(db(token, 'deleteTables', {}), 12025);
    });

    it('alterTable addFields adds a column; old records read null', async () => {
      const tableName = await peopleTable(token, [['Ann', 30]]);
      await ok(db(token, 'alterTable', { tableName, addFields: [{ name: 'email', type: 'varchar', length: 50 }] }));
      const described = await ok(db(token, 'describeTables', { tableNames: [tableName] }));
      assert.ok(described.data[0].fields.some((f: any) => f.name === 'email' && f.type === 'varchar' && f.length === 50));
      await ok(db(token, 'insertRecords', { tableName, dataFormat: 'objects', sourceData: [{ name: 'Bob', age: 40, email: 'b@x' }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(r.data[0].email, null);
      assert.equal(r.data[1].email, 'b@x');
    });

    it('createIndex / listIndexes / deleteIndexes', async () => {
      const tableName = await peopleTable(token);
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_name', fields: [{ name: 'name' }] }));
      const list = await ok(db(token, 'listIndexes', { tableName }));
      const names = list.data.map((i: any) => i.indexName);
      assert.ok(names.includes('by_name') && names.includes('id_pk'), JSON.stringify(names));
      await fails(db(token, 'createIndex', { tableName, indexName: 'by_name', fields: [{ name: 'name' }] }), 4051);
      await fails(db(token, 'createIndex', { tableName, indexName: 'by_nothing', fields: [{ name: 'nothing' }] }), 4014);
      await ok(db(token, 'deleteIndexes', { tableName, indexNames: ['by_name'] }));
      await fails(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name' }), 4045);
    });
  });

  // ---------------------------------------------------------------- writes
  describe('db: insertRecords / updateRecords / deleteRecords', () => {
    it('inserts objects, arrays and autoDetect (both shapes)', async () => {
      const tableName = await peopleTable(token, []);
      const objects = await ok(db(token, 'insertRecords', { tableName, dataFormat: 'objects', sourceData: [{ name: 'Ann', age: 30 }, { name: 'Bob', age: 40 }] }));
      assert.equal(objects.dataFormat, 'objects');
      const arrays = await ok(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData: [['Cid', 50]] }));
      assert.equal(arrays.dataFormat, 'arrays');
      const autoObjects = await ok(db(token, 'insertRecords', { tableName, sourceData: [{ name: 'Dee', age: 60 }] }));
      assert.equal(autoObjects.dataFormat, 'objects');
      const autoArrays = await ok(db(token, 'insertRecords', { tableName, dataFormat: 'autoDetect', fieldNames: ['age', 'name'], sourceData: [[70, 'Eve']] }));
      assert.equal(autoArrays.dataFormat, 'arrays');
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => [x.name, x.age]), [['Ann', 30], ['Bob', 40], ['Cid', 50], ['Dee', 60], ['Eve', 70]]);
      // ids are increasing integers
      const ids = r.data.map((x: any) => x.id);
      assert.ok(ids.every((id: any, i: number) => Number.isInteger(id) && (i === 0 || id > ids[i - 1])));
    });

    it('insertRecords: bad input', async () => {
      const tableName = await peopleTable(token, []);
      await fails(db(token, 'insertRecords', { tableName }), 12025);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [] }), 12012);
      await fails(db(token, 'insertRecords', { tableName, sourceData: 'x' }), 12012);
      await fails(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', sourceData: [['A', 1]] }), 12025);
      await fails(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData: [['A']] }), 12012);
      await fails(db(token, 'insertRecords', { tableName, dataFormat: 'csv', sourceData: [{ name: 'A' }] }), 12012);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ nosuchcolumn: 1 }] }), 4014);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ name: 'x'.repeat(21) }] }), 4031);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ age: 'old' }] }), 4031);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ age: 2 ** 40 }] }), 4031);
      assert.equal(await countRows(token, tableName), 0);
    });

    it('a wrong type inside a 5,000-row insertRecords stores nothing; the server keeps serving', async () => {
      const tableName = await peopleTable(token, []);
      const sourceData: unknown[][] = [];
      for (let i = 0; i < 5000; i += 1) sourceData.push([`n${i}`, i]);
      sourceData[4321] = ['bad', 'not a number'];
      const response = await fails(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData }), 4031);
      assert.match(response.errorMessage, /4321|age/);
      assert.equal(await countRows(token, tableName), 0);
      // the same batch without the bad row goes in entirely
      sourceData[4321] = ['good', 4321];
      const done = await ok(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData }));
      assert.equal(done.insertedRecordCount ?? done.ids?.length, 5000);
      assert.equal(await countRows(token, tableName), 5000);
    });

    it('updateRecords merges (objects and arrays); unknown id 101', async () => {
      const tableName = await peopleTable(token, [['Ann', 30], ['Bob', 40]]);
      const before = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const [ann, bob] = before.data;
      const u1 = await ok(db(token, 'updateRecords', { tableName, dataFormat: 'objects', sourceData: [{ id: ann.id, age: 31 }] }));
      assert.equal(u1.updatedRecordCount, 1);
      await ok(db(token, 'updateRecords', { tableName, dataFormat: 'arrays', fieldNames: ['id', 'name'], sourceData: [[bob.id, 'Robert']] }));
      const after = await ok(db(token, 'getRecordsByIds', { tableName, ids: [ann.id, bob.id] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(after.data.map((x: any) => [x.name, x.age]), [['Ann', 31], ['Robert', 40]]);
      await fails(db(token, 'updateRecords', { tableName, sourceData: [{ id: 999999, age: 1 }] }), 101);
      await fails(db(token, 'updateRecords', { tableName, sourceData: [{ age: 1 }] }), 12025);
      await fails(db(token, 'updateRecords', { tableName, sourceData: [{ id: ann.id, age: 'x' }] }), 4031);
    });

    it('deleteRecords by ids', async () => {
      const tableName = await peopleTable(token);
      const all = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const ids = all.data.map((x: any) => x.id);
      const r = await ok(db(token, 'deleteRecords', { tableName, ids: [ids[0], ids[2], 987654] }));
      assert.equal(r.deletedRecordCount, 2);
      assert.equal(await countRows(token, tableName), 3);
      await fails(db(token, 'deleteRecords', { tableName }), 12025);
    });
  });

  // ---------------------------------------------------------------- reads
  describe('db: getRecords actions', () => {
    let tableName: string;
    let ids: number[];
    before(async () => {
      tableName = await peopleTable(token, [['Mia', 25], ['Ann', 30], ['Zed', 35], ['Pete', 40], ['Nora', 45], ['Bob', 50], ['Peter', 55]]);
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_name', fields: [{ name: 'name' }] }));
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_age_desc', fields: [{ name: 'age', ascending: false }] }));
      const all = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      ids = all.data.map((x: any) => x.id);
    });

    it('getRecordsByTable: the specification\'s result shape (default dataFormat arrays)', async () => {
      const r = await ok(db(token, 'getRecordsByTable', { tableName }));
      assert.equal(r.dataFormat, 'arrays');
      assert.equal(r.binaryFormat, 'hex');
      assert.ok(Array.isArray(r.fields));
      assert.deepEqual(r.fields.map((f: any) => f.name), ['id', 'name', 'age']);
      for (const f of r.fields) {
        for (const key of ['name', 'type', 'length', 'scale', 'autoTimestamp', 'defaultValue', 'nullable', 'primaryKey']) assert.ok(key in f, `${f.name}.${key}`);
      }
      assert.ok(Array.isArray(r.data) && Array.isArray(r.data[0]));
      assert.deepEqual(r.data[0], [ids[0], 'Mia', 25]);
      assert.equal(r.moreRecords, false);
      assert.equal(r.requestedRecordCount, 20);
      assert.equal(r.returnedRecordCount, 7);
      assert.equal(r.totalRecordCount, 7);
    });

    it('getRecordsByTable: maxRecords, skipRecords, moreRecords, reverseOrder', async () => {
      const page = await ok(db(token, 'getRecordsByTable', { tableName, maxRecords: 3, skipRecords: 2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(page.data.map((x: any) => x.name), ['Zed', 'Pete', 'Nora']);
      assert.equal(page.moreRecords, true);
      assert.equal(page.requestedRecordCount, 3);
      assert.equal(page.returnedRecordCount, 3);
      assert.equal(page.totalRecordCount, 7);
      const last = await ok(db(token, 'getRecordsByTable', { tableName, maxRecords: 2, skipRecords: 5 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(last.moreRecords, false);
      const reversed = await ok(db(token, 'getRecordsByTable', { tableName, reverseOrder: true, maxRecords: 2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(reversed.data.map((x: any) => x.name), ['Peter', 'Bob']);
    });

    it('getRecordsByTable: tableFilter', async () => {
      const r = await ok(db(token, 'getRecordsByTable', { tableName, tableFilter: 'age >= 40 && age < 55' }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.name), ['Pete', 'Nora', 'Bob']);
      const eq = await ok(db(token, 'getRecordsByTable', { tableName, tableFilter: 'name == "Zed"' }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(eq.data.map((x: any) => x.age), [35]);
      await fails(db(token, 'getRecordsByTable', { tableName, tableFilter: 'age >>> 3' }), 4072);
      await fails(db(token, 'getRecordsByTable', { tableName, tableFilter: 'nosuchcol == 1' }), 4072);
    });

    it('getRecordsByTable: invalid paging values 12012', async () => {
      await fails(db(token, 'getRecordsByTable', { tableName, maxRecords: 'lots' }), 12012);
      await fails(db(token, 'getRecordsByTable', { tableName, maxRecords: 0 }), 12012);
      await fails(db(token, 'getRecordsByTable', { tableName, skipRecords: -1 }), 12012);
      await fails(db(token, 'getRecordsByTable', { tableName, reverseOrder: 'yes' }), 12012);
    });

    it('getRecordsByIds: records in the order asked, missing ids left out', async () => {
      const r = await ok(db(token, 'getRecordsByIds', { tableName, ids: [ids[3], 999999, ids[0]] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.name), ['Pete', 'Mia']);
      assert.equal(r.requestedRecordCount, 3);
      assert.equal(r.returnedRecordCount, 2);
      assert.ok(Array.isArray(r.fields));
      await fails(db(token, 'getRecordsByIds', { tableName }), 12025);
      await fails(db(token, 'getRecordsByIds', { tableName, ids: 'x' }), 12012);
    });

    it('getRecordsByIds accepts numeric-string ids (as numberFormat string returns them)', async () => {
      const r = await ok(db(token, 'getRecordsByIds', { tableName, ids: [String(ids[1])] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.name), ['Ann']);
    });

    it('getRecordsByIndex: index order, descending segment, reverseOrder, filter', async () => {
      const byName = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name' }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(byName.data.map((x: any) => x.name), ['Ann', 'Bob', 'Mia', 'Nora', 'Pete', 'Peter', 'Zed']);
      const rev = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name', reverseOrder: true, maxRecords: 2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(rev.data.map((x: any) => x.name), ['Zed', 'Peter']);
      assert.equal(rev.moreRecords, true);
      const byAge = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_age_desc', maxRecords: 3 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(byAge.data.map((x: any) => x.age), [55, 50, 45]);
      const filtered = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name', tableFilter: 'age <= 30' }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(filtered.data.map((x: any) => x.name), ['Ann', 'Mia']);
      const pk = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'id_pk', maxRecords: 1 }));
      assert.equal(pk.data[0][0], ids[0]);
      await fails(db(token, 'getRecordsByIndex', { tableName }), 12025);
      await fails(db(token, 'getRecordsByIndex', { tableName, indexName: 'nope' }), 4045);
    });

    it('getRecordsInKeyRange: the established product\'s indexFilter form', async () => {
      const r = await ok(db(token, 'getRecordsInKeyRange', {
        tableName,
        indexFilter: { indexName: 'by_name', indexFieldFilters: [{ fieldName: 'name', operator: '>=', value: 'M' }, { fieldName: 'name', operator: '<', value: 'Peter' }] },
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.name), ['Mia', 'Nora', 'Pete']);
      const upperOnly = await ok(db(token, 'getRecordsInKeyRange', {
        tableName, indexFilter: { indexName: 'by_name', indexFieldFilters: [{ fieldName: 'name', operator: '<=', value: 'Bob' }] },
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(upperOnly.data.map((x: any) => x.name), ['Ann', 'Bob']);
      const withFilter = await ok(db(token, 'getRecordsInKeyRange', {
        tableName, tableFilter: 'age > 30',
        indexFilter: { indexName: 'by_name', indexFieldFilters: [{ fieldName: 'name', operator: '>', value: 'Ann' }] },
        reverseOrder: true, maxRecords: 2,
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(withFilter.data.map((x: any) => x.name), ['Zed', 'Peter']);
      const exact = await ok(db(token, 'getRecordsInKeyRange', {
        tableName, indexFilter: { indexName: 'by_name', indexFieldFilters: [{ fieldName: 'name', operator: '=', value: 'Nora' }] },
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(exact.data.map((x: any) => x.age), [45]);
      await fails(db(token, 'getRecordsInKeyRange', {
        tableName, indexFilter: { indexName: 'by_name', indexFieldFilters: [{ fieldName: 'age', operator: '>', value: 1 }] },
      }), 12012);
    });

    it('getRecordsInKeyRange: numeric range on the id index and without a range', async () => {
      const r = await ok(db(token, 'getRecordsInKeyRange', {
        tableName, indexFilter: { indexName: 'id_pk', indexFieldFilters: [{ fieldName: 'id', operator: '>', value: ids[4] }] },
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.name), ['Bob', 'Peter']);
      const all = await ok(db(token, 'getRecordsInKeyRange', { tableName, indexName: 'by_name' }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(all.returnedRecordCount, 7);
      assert.equal(all.data[0].name, 'Ann');
    });

    it('cursors: returnCursor, fetch forward, backward, skip, moreRecords, closeCursor', async () => {
      const opened = await ok(db(token, 'getRecordsByTable', { tableName, returnCursor: true }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(typeof opened.cursorId, 'string');
      assert.ok(opened.cursorId.length >= 16);
      assert.ok(!('data' in opened) || opened.data === undefined || opened.data.length === 0);
      const cursorId = opened.cursorId;
      const f1 = await ok(db(token, 'getRecordsFromCursor', { cursorId, fetchRecords: 3 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(f1.data.map((x: any) => x.name), ['Mia', 'Ann', 'Zed']);
      assert.equal(f1.moreRecords, true);
      assert.equal(f1.returnedRecordCount, 3);
      assert.ok(Array.isArray(f1.fields));
      assert.equal(f1.dataFormat, 'objects');
      const f2 = await ok(db(token, 'getRecordsFromCursor', { cursorId, fetchRecords: 2, skipRecords: 1 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(f2.data.map((x: any) => x.name), ['Nora', 'Bob']);
      const back = await ok(db(token, 'getRecordsFromCursor', { cursorId, fetchRecords: -2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(back.data.map((x: any) => x.name), ['Nora', 'Pete'], 'backward fetch goes back from the current position');
      const rest = await ok(db(token, 'getRecordsFromCursor', { cursorId, fetchRecords: 100 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(rest.moreRecords, false);
      await fails(db(token, 'getRecordsFromCursor', { cursorId, fetchRecords: 0 }), 12012);
      await ok(db(token, 'closeCursor', { cursorId }));
      await fails(db(token, 'getRecordsFromCursor', { cursorId, fetchRecords: 1 }), 4080);
      await fails(db(token, 'getRecordsFromCursor', {}), 12025);
    });

    it('cursors: skipRecords at open, index cursors, another session\'s cursor 4080', async () => {
      const opened = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name', returnCursor: true, skipRecords: 2 }));
      const f = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(f.data.map((x: any) => x.name), ['Mia', 'Nora']);
      const other = await login();
      await fails(db(other, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 1 }), 4080);
      await fails(db(other, 'closeCursor', { cursorId: opened.cursorId }), 4080);
      await ok(db(token, 'closeCursor', { cursorId: opened.cursorId }));
    });

    it('getRecordsFromCursor default fetchRecords is 20 (established product)', async () => {
      const opened = await ok(db(token, 'getRecordsByTable', { tableName, returnCursor: true }));
      const f = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId }));
      assert.equal(f.returnedRecordCount, 7);
      await ok(db(token, 'closeCursor', { cursorId: opened.cursorId }));
    });
  });

  // ---------------------------------------------------------------- transactions
  describe('db: transactions', () => {
    it('writes in a transaction are invisible to others until commit', async () => {
      const tableName = await peopleTable(token, [['Ann', 30]]);
      const other = await login();
      const { transactionId } = await ok(db(token, 'createTransaction'));
      assert.equal(typeof transactionId, 'string');
      const ins = await ok(db(token, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'Tx', age: 1 }] }));
      const newId = ins.ids?.[0];
      assert.equal(await countRows(other, tableName), 1);
      const otherById = await ok(db(other, 'getRecordsByIds', { tableName, ids: [newId] }));
      assert.equal(otherById.returnedRecordCount, 0);
      const inTx = await ok(db(token, 'getRecordsByIds', { tableName, ids: [newId], transactionId }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(inTx.data[0]?.name, 'Tx');
      await ok(db(token, 'commitTransaction', { transactionId }));
      assert.equal(await countRows(other, tableName), 2);
      await fails(db(token, 'commitTransaction', { transactionId }), 4081);
      await fails(db(token, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'Late', age: 2 }] }), 4081);
    });

    it('getRecordsByTable inside the transaction sees its own writes', async () => {
      const tableName = await peopleTable(token, [['Ann', 30]]);
      const { transactionId } = await ok(db(token, 'createTransaction'));
      await ok(db(token, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'Mine', age: 2 }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName, transactionId }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.name), ['Ann', 'Mine']);
      await ok(db(token, 'rollbackTransaction', { transactionId }));
    });

    it('rollback discards updates, deletes and inserts', async () => {
      const tableName = await peopleTable(token, [['Ann', 30], ['Bob', 40]]);
      const all = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const { transactionId } = await ok(db(token, 'createTransaction'));
      await ok(db(token, 'updateRecords', { tableName, transactionId, sourceData: [{ id: all.data[0].id, age: 99 }] }));
      await ok(db(token, 'deleteRecords', { tableName, transactionId, ids: [all.data[1].id] }));
      await ok(db(token, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'Gone', age: 1 }] }));
      await ok(db(token, 'rollbackTransaction', { transactionId }));
      const after = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(after.data.map((x: any) => [x.name, x.age]), [['Ann', 30], ['Bob', 40]]);
      await fails(db(token, 'rollbackTransaction', { transactionId }), 4081);
    });

    it('another session\'s or an unknown transactionId is an error (4081)', async () => {
      const tableName = await peopleTable(token, []);
      const { transactionId } = await ok(db(token, 'createTransaction'));
      const other = await login();
      await fails(db(other, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'X', age: 1 }] }), 4081);
      await fails(db(other, 'commitTransaction', { transactionId }), 4081);
      await fails(db(other, 'rollbackTransaction', { transactionId }), 4081);
      await fails(db(token, 'commitTransaction', { transactionId: 'no-such-transaction' }), 4081);
      await fails(db(token, 'commitTransaction', {}), 12025);
      await ok(db(token, 'rollbackTransaction', { transactionId }));
      assert.equal(await countRows(token, tableName), 0);
    });

    it('ending a session rolls back its open transaction', async () => {
      const tableName = await peopleTable(token, []);
      const t = await login();
      const { transactionId } = await ok(db(t, 'createTransaction'));
      await ok(db(t, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'X', age: 1 }] }));
      await ok(adm(t, 'deleteSession'));
      assert.equal(await countRows(token, tableName), 0);
    });
  });

  // ---------------------------------------------------------------- response options
  describe('responseOptions', () => {
    let tableName: string;
    before(async () => {
      tableName = uniqueTable('ro');
      await ok(db(token, 'createTable', {
        tableName,
        fields: [
          { name: 'name', type: 'varchar', length: 20 },
          { name: 'big', type: 'bigint' },
          { name: 'price', type: 'float' },
          { name: 'doc', type: 'json' },
          { name: 'bin', type: 'binary', length: 4 },
        ],
      }));
      await ok(db(token, 'insertRecords', {
        tableName, dataFormat: 'objects',
        sourceData: [{ name: 'Ann', big: 1234567, price: 1.5, doc: { a: { b: 1, c: 2 }, d: [{ e: 1, f: 2 }] }, bin: '0102' }],
      }));
    });
    const read = (responseOptions: Record<string, unknown>) => send(db(token, 'getRecordsByTable', { tableName }, { responseOptions }));

    it('binaryFormat hex (default, upper-case, padded with 0x00), base64, byteArray', async () => {
      const hex = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(hex.binaryFormat, 'hex');
      assert.equal(hex.data[0].bin, '01020000');
      const b64 = (await read({ dataFormat: 'objects', binaryFormat: 'base64' })).result;
      assert.equal(b64.binaryFormat, 'base64');
      assert.equal(b64.data[0].bin, Buffer.from([1, 2, 0, 0]).toString('base64'));
      const arr = (await read({ dataFormat: 'objects', binaryFormat: 'byteArray' })).result;
      assert.equal(arr.binaryFormat, 'byteArray');
      assert.deepEqual(arr.data[0].bin, [1, 2, 0, 0]);
      const upper = (await read({ dataFormat: 'objects', binaryFormat: 'BASE64' })).result;
      assert.equal(upper.data[0].bin, 'AQIAAA==');
      assert.equal((await read({ binaryFormat: 'octal' })).errorCode, 12012);
    });

    it('binaryFormat in params states how incoming binary is written', async () => {
      const t = uniqueTable('binin');
      await ok(db(token, 'createTable', { tableName: t, fields: [{ name: 'bin', type: 'binary', length: 3 }] }));
      await ok(db(token, 'insertRecords', { tableName: t, binaryFormat: 'base64', sourceData: [{ bin: Buffer.from([0xff, 0x10]).toString('base64') }] }));
      await ok(db(token, 'insertRecords', { tableName: t, binaryFormat: 'byteArray', sourceData: [{ bin: [1, 2, 3] }] }));
      await ok(db(token, 'insertRecords', { tableName: t, binaryFormat: 'hex', sourceData: [{ bin: 'abcdef' }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName: t }, { responseOptions: { dataFormat: 'objects', binaryFormat: 'hex' } }));
      assert.deepEqual(r.data.map((x: any) => x.bin), ['FF1000', '010203', 'ABCDEF']);
      await fails(db(token, 'insertRecords', { tableName: t, sourceData: [{ bin: '01020304' }] }), 4031);
      await fails(db(token, 'insertRecords', { tableName: t, binaryFormat: 'byteArray', sourceData: [{ bin: [256] }] }), 4031);
      await fails(db(token, 'insertRecords', { tableName: t, binaryFormat: 'hex', sourceData: [{ bin: 'zz' }] }), 4031);
    });

    it('session defaultBinaryFormat applies to output and to input', async () => {
      const t = await login('admin', 'ADMIN', { defaultBinaryFormat: 'base64' });
      const r = await ok(db(t, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(r.binaryFormat, 'base64');
      assert.equal(r.data[0].bin, 'AQIAAA==');
    });

    it('dataFormat objects/arrays (case-insensitive), result states the format', async () => {
      const objects = (await read({ dataFormat: 'OBJECTS' })).result;
      assert.equal(objects.dataFormat, 'objects');
      assert.equal(objects.data[0].name, 'Ann');
      const arrays = (await read({ dataFormat: 'arrays' })).result;
      assert.equal(arrays.dataFormat, 'arrays');
      assert.ok(Array.isArray(arrays.data[0]));
      const def = (await read({ dataFormat: 'default' })).result;
      assert.equal(def.dataFormat, 'arrays');
      assert.equal((await read({ dataFormat: 'table' })).errorCode, 12012);
    });

    it('numberFormat string returns numbers in strings; null/omitted means number', async () => {
      const s = (await read({ dataFormat: 'objects', numberFormat: 'string' })).result;
      assert.equal(s.data[0].big, '1234567');
      assert.equal(typeof s.data[0].id, 'string');
      assert.equal(Number(s.data[0].price), 1.5);
      assert.equal(typeof s.data[0].price, 'string');
      const n = (await read({ dataFormat: 'objects', numberFormat: null })).result;
      assert.equal(n.data[0].big, 1234567);
      const upper = (await read({ dataFormat: 'objects', numberFormat: 'STRING' })).result;
      assert.equal(upper.data[0].big, '1234567');
      assert.equal((await read({ numberFormat: 'words' })).errorCode, 12012);
    });

    it('includeFields / excludeFields, mutually exclusive', async () => {
      const inc = (await read({ dataFormat: 'objects', includeFields: ['name', 'big'] })).result;
      assert.deepEqual(Object.keys(inc.data[0]).sort(), ['big', 'name']);
      assert.deepEqual(inc.fields.map((f: any) => f.name), ['name', 'big']);
      const exc = (await read({ dataFormat: 'objects', excludeFields: ['doc', 'bin'] })).result;
      assert.deepEqual(Object.keys(exc.data[0]).sort(), ['big', 'id', 'name', 'price']);
      const arrays = (await read({ dataFormat: 'arrays', includeFields: ['big', 'name'] })).result;
      assert.deepEqual(arrays.data[0], ['Ann', 1234567], 'table order kept');
      const emptyExclude = (await read({ dataFormat: 'objects', includeFields: ['name'], excludeFields: [] })).result;
      assert.deepEqual(Object.keys(emptyExclude.data[0]), ['name']);
      const both = await read({ includeFields: ['name'], excludeFields: ['big'] });
      assert.equal(both.errorCode, 12012);
    });

    it('includePaths / excludePaths on a JSON column, mutually exclusive', async () => {
      const inc = (await read({ dataFormat: 'objects', includePaths: ['doc.a.b'] })).result;
      assert.deepEqual(inc.data[0].doc, { a: { b: 1 } });
      assert.equal(inc.data[0].name, 'Ann');
      const arr = (await read({ dataFormat: 'objects', includePaths: ['doc.d.e'] })).result;
      assert.deepEqual(arr.data[0].doc, { d: [{ e: 1 }] });
      const exc = (await read({ dataFormat: 'objects', excludePaths: ['doc.a.c', 'doc.d'] })).result;
      assert.deepEqual(exc.data[0].doc, { a: { b: 1 } });
      const both = await read({ includePaths: ['doc.a'], excludePaths: ['doc.d'] });
      assert.equal(both.errorCode, 12012);
    });

    it('omit removes top-level response properties (array and object forms)', async () => {
      const a = await read({ omit: ['errorMessage', 'authToken'] });
      assert.ok(!('errorMessage' in a));
      assert.ok(!('authToken' in a));
      assert.equal(a.errorCode, 0);
      const o = await read({ omit: { errorMessage: true, authToken: false } });
      assert.ok(!('errorMessage' in o));
      assert.ok('authToken' in o);
      assert.equal((await read({ omit: 'errorMessage' })).errorCode, 12012);
    });

    it('stringFormat hex returns varchar values as upper-case hex of their bytes', async () => {
      const r = (await read({ dataFormat: 'objects', stringFormat: 'hex' })).result;
      assert.equal(r.data[0].name, '416E6E');
      assert.equal(r.data[0].big, 1234567);
      const j = (await read({ dataFormat: 'objects', stringFormat: 'json' })).result;
      assert.equal(j.data[0].name, 'Ann');
      assert.equal((await read({ stringFormat: 'base32' })).errorCode, 12012);
    });

    it('unknown responseOptions properties are ignored; non-object responseOptions is 12012', async () => {
      const r = await read({ fixedLengthCharFormat: 'sql', includeBookmarks: false });
      assert.equal(r.errorCode, 0);
      const bad = await send({ ...db(token, 'getRecordsByTable', { tableName }), responseOptions: 'objects' });
      assert.equal(bad.errorCode, 12012);
    });

    it('numberFormat string from the session\'s defaultResponseOptions', async () => {
      const t = await login('admin', 'ADMIN', { defaultResponseOptions: { numberFormat: 'string', dataFormat: 'objects' } });
      const r = await ok(db(t, 'getRecordsByTable', { tableName }));
      assert.equal(r.data[0].big, '1234567');
    });
  });

  // ---------------------------------------------------------------- variants
  describe('variant and binary columns', () => {
    let tableName: string;
    before(async () => {
      tableName = uniqueTable('var');
      await ok(db(token, 'createTable', {
        tableName,
        fields: [
          { name: 'label', type: 'varchar', length: 10 },
          { name: 'v', type: 'variant', nullable: false },
          { name: 'nv', type: 'variant' },
        ],
      }));
    });
    const readAll = async (responseOptions: Record<string, unknown>) => (await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects', ...responseOptions } }))).data;

    it('variantFormat json round-trips JSON values', async () => {
      await ok(db(token, 'insertRecords', {
        tableName, sourceData: [
          { label: 'obj', v: { a: 1, b: [true, null] } },
          { label: 'str', v: 'hello' },
          { label: 'num', v: 42 },
          { label: 'bool', v: true },
        ],
      }));
      const data = await readAll({ variantFormat: 'json' });
      const byLabel = Object.fromEntries(data.map((x: any) => [x.label, x.v]));
      assert.deepEqual(byLabel.obj, { a: 1, b: [true, null] });
      assert.equal(byLabel.str, 'hello');
      assert.equal(byLabel.num, 42);
      assert.equal(byLabel.bool, true);
    });

    it('JSON null into a non-nullable variant is an error and stores nothing; nullable takes null', async () => {
      const before = await countRows(token, tableName);
      const response = await send(db(token, 'insertRecords', { tableName, sourceData: [{ label: 'ok', v: 1 }, { label: 'null', v: null }] }));
      assert.notEqual(response.errorCode, 0);
      assert.equal(await countRows(token, tableName), before);
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ label: 'nvnull', v: 1, nv: null }] }));
      const data = await readAll({});
      assert.equal(data.find((x: any) => x.label === 'nvnull').nv, null);
    });

    it('variantFormat variantObject returns schema, type, value (and valueEncoding)', async () => {
      const data = await readAll({ variantFormat: 'variantObject' });
      const obj = data.find((x: any) => x.label === 'obj').v;
      assert.equal(typeof obj.schema, 'string');
      assert.ok(obj.schema.length > 0);
      assert.equal(obj.type, 'json');
      assert.deepEqual(obj.value, { a: 1, b: [true, null] });
      const str = data.find((x: any) => x.label === 'str').v;
      assert.equal(str.type, 'json');
    });

    it('variantObject input sets its own type and encoding', async () => {
      const schema = (await readAll({ variantFormat: 'variantObject' }))[0].v.schema;
      await ok(db(token, 'insertRecords', {
        tableName, variantFormat: 'variantObject', sourceData: [
          { label: 'vobin', v: { schema, type: 'binary', value: '0A0B', valueEncoding: 'hex' } },
          { label: 'vostr', v: { schema, type: 'string', value: 'plain text' } },
        ],
      }));
      const asObjects = await readAll({ variantFormat: 'variantObject', binaryFormat: 'base64' });
      const vobin = asObjects.find((x: any) => x.label === 'vobin').v;
      assert.equal(vobin.type, 'binary');
      assert.equal(Buffer.from(vobin.value, vobin.valueEncoding === 'hex' ? 'hex' : 'base64').toString('hex'), '0a0b');
      const asJson = await readAll({ variantFormat: 'json', binaryFormat: 'hex' });
      assert.equal(asJson.find((x: any) => x.label === 'vobin').v, '0A0B');
      assert.equal(asJson.find((x: any) => x.label === 'vostr').v, 'plain text');
      await fails(db(token, 'insertRecords', { tableName, variantFormat: 'variantObject', sourceData: [{ label: 'bad', v: 'not an object' }] }), 4031);
    });

    it('variantFormat string returns JSON variants as their JSON text', async () => {
      const data = await readAll({ variantFormat: 'string' });
      assert.equal(data.find((x: any) => x.label === 'obj').v, '{"a":1,"b":[true,null]}');
      assert.equal(data.find((x: any) => x.label === 'num').v, '42');
    });

    it('variantFormat binary returns the stored bytes in binaryFormat', async () => {
      const data = await readAll({ variantFormat: 'binary', binaryFormat: 'hex' });
      assert.equal(data.find((x: any) => x.label === 'num').v, Buffer.from('42').toString('hex').toUpperCase());
      assert.equal(data.find((x: any) => x.label === 'str').v, Buffer.from('"hello"').toString('hex').toUpperCase());
    });

    it('variantFormat in params: binary input stored as bytes', async () => {
      await ok(db(token, 'insertRecords', { tableName, variantFormat: 'binary', binaryFormat: 'hex', sourceData: [{ label: 'rawbin', v: 'DEADBEEF' }] }));
      const obj = (await readAll({ variantFormat: 'variantObject', binaryFormat: 'hex' })).find((x: any) => x.label === 'rawbin').v;
      assert.equal(obj.type, 'binary');
      assert.equal(String(obj.value).toUpperCase(), 'DEADBEEF');
    });

    it('stringFormat hex also applies to variant strings', async () => {
      const data = await readAll({ stringFormat: 'hex', variantFormat: 'json' });
      const hexLabel = Buffer.from('vostr').toString('hex').toUpperCase(); // the varchar label is hex too
      const row = data.find((x: any) => x.label === hexLabel);
      assert.ok(row, 'varchar label not hex-encoded');
      assert.equal(row.v, Buffer.from('plain text').toString('hex').toUpperCase());
    });

    it('invalid variantFormat 12012 (responseOptions and params)', async () => {
      const r = await send(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { variantFormat: 'xml' } }));
      assert.equal(r.errorCode, 12012);
      await fails(db(token, 'insertRecords', { tableName, variantFormat: 'xml', sourceData: [{ label: 'x', v: 1 }] }), 12012);
    });

    it('session defaultVariantFormat applies to output', async () => {
      const t = await login('admin', 'ADMIN', { defaultVariantFormat: 'variantObject' });
      const r = await ok(db(t, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const obj = r.data.find((x: any) => x.label === 'obj').v;
      assert.equal(obj.type, 'json');
    });
  });

  // ---------------------------------------------------------------- deeper probes
  describe('deeper probes', () => {
    it('a table with its own id bigint primary key takes the supplied ids (bulk-loader pattern)', async () => {
      const tableName = uniqueTable('ownid');
      await ok(db(token, 'createTable', {
        tableName,
        fields: [{ name: 'id', type: 'bigint', primaryKey: 1, nullable: false }, { name: 'a', type: 'integer' }, { name: 'b', type: 'varchar', length: 10 }],
      }));
      const ins = await ok(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['id', 'a', 'b'], sourceData: [[100, 1, 'x'], [7, 2, 'y']] }));
      assert.deepEqual(ins.ids, [100, 7]);
      const r = await ok(db(token, 'getRecordsByIds', { tableName, ids: [7, 100] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => [x.id, x.a]), [[7, 2], [100, 1]]);
      await fails(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['id', 'a', 'b'], sourceData: [[5, 1, 'z'], [100, 9, 'dup']] }), 2);
      assert.equal(await countRows(token, tableName), 2);
      const auto = await ok(db(token, 'insertRecords', { tableName, sourceData: [{ a: 3, b: 'auto' }] }));
      assert.ok(auto.ids[0] > 100, `next free id expected, got ${auto.ids[0]}`);
      const described = await ok(db(token, 'describeTables', { tableNames: [tableName] }));
      assert.equal(described.data[0].fields.filter((f: any) => f.name === 'id').length, 1);
    });

    it('unique index: a duplicate rejects the whole insert (2)', async () => {
      const tableName = await peopleTable(token, [['Ann', 30]]);
      await ok(db(token, 'createIndex', { tableName, indexName: 'u_name', unique: true, fields: [{ name: 'name' }] }));
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ name: 'New', age: 1 }, { name: 'Ann', age: 2 }] }), 2);
      assert.equal(await countRows(token, tableName), 1);
    });

    it('bigint values beyond 2^53 survive as strings', async () => {
      const tableName = uniqueTable('big');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'big', type: 'bigint' }] }));
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ big: '9223372036854775807' }, { big: -5 }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(String(r.data[0].big), '9223372036854775807');
      assert.equal(r.data[1].big, -5);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ big: '9223372036854775808' }] }), 4031);
    });

    it('number(length, scale), money, date, time, timestamp round-trip in ISO form', async () => {
      const tableName = uniqueTable('types');
      await ok(db(token, 'createTable', {
        tableName,
        fields: [
          { name: 'n', type: 'number', length: 10, scale: 2 },
          { name: 'd', type: 'date' },
          { name: 't', type: 'time' },
          { name: 'ts', type: 'timestamp' },
          { name: 'flag', type: 'bit' },
          { name: 'c', type: 'char', length: 5 },
        ],
      }));
      const described = await ok(db(token, 'describeTables', { tableNames: [tableName] }));
      const n = described.data[0].fields.find((f: any) => f.name === 'n');
      assert.equal(n.length, 10);
      assert.equal(n.scale, 2);
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ n: 12.34, d: '2024-07-11', t: '21:18:01.000', ts: '2024-07-11T21:18:01.000', flag: true, c: 'ab' }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const row = r.data[0];
      assert.equal(Number(row.n), 12.34);
      assert.equal(row.d, '2024-07-11');
      assert.match(row.t, /^21:18:01(\.000)?$/);
      assert.match(row.ts, /^2024-07-11T21:18:01(\.000)?Z?$/);
      assert.equal(row.flag, true);
      assert.match(row.c, /^ab/);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ d: '2024-13-45' }] }), 4031);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ c: 'toolong' }] }), 4031);
    });

    it('autoValue timestamps: onInsert is set by the server; autoTimestamp is derived', async () => {
      const tableName = uniqueTable('auto');
      await ok(db(token, 'createTable', {
        tableName,
        fields: [{ name: 'v', type: 'integer' }, { name: 'created', type: 'timestamp', autoValue: 'timestampOnInsert' }],
      }));
      const described = await ok(db(token, 'describeTables', { tableNames: [tableName] }));
      const created = described.data[0].fields.find((f: any) => f.name === 'created');
      assert.equal(created.autoTimestamp, 'onInsert');
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ v: 1 }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(typeof r.data[0].created, 'string');
      assert.match(r.data[0].created, /^\d{4}-\d\d-\d\dT/);
    });

    it('defaultValue fills omitted columns', async () => {
      const tableName = uniqueTable('defv');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'v', type: 'integer' }, { name: 's', type: 'varchar', length: 10, defaultValue: 'dflt' }] }));
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ v: 1 }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(r.data[0].s, 'dflt');
    });

    it('non-nullable column without a value is rejected (4031), nothing stored', async () => {
      const tableName = uniqueTable('nn');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'v', type: 'integer', nullable: false }, { name: 'w', type: 'integer' }] }));
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ v: 1 }, { w: 2 }] }), 4031);
      await fails(db(token, 'insertRecords', { tableName, sourceData: [{ v: null }] }), 4031);
      assert.equal(await countRows(token, tableName), 0);
    });

    it('maxRecords above 100,000 is 12012; getRecordsByIds above 100,000 ids is 12012', async () => {
      const tableName = await peopleTable(token, [['A', 1]]);
      await fails(db(token, 'getRecordsByTable', { tableName, maxRecords: 100001 }), 12012);
      const ids = Array.from({ length: 100001 }, (_, i) => i + 1);
      await fails(db(token, 'getRecordsByIds', { tableName, ids }), 12012);
    });

    it('returnCursor answers cursorId, dataFormat, binaryFormat and fields; cursor totalRecordCount -1', async () => {
      const tableName = await peopleTable(token);
      const opened = await ok(db(token, 'getRecordsByTable', { tableName, returnCursor: true }, { responseOptions: { dataFormat: 'objects', binaryFormat: 'base64' } }));
      assert.equal(opened.dataFormat, 'objects');
      assert.equal(opened.binaryFormat, 'base64');
      assert.ok(Array.isArray(opened.fields) && opened.fields.length === 3);
      const f = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 2 }));
      assert.equal(f.totalRecordCount, -1);
      assert.equal(f.requestedRecordCount, 2);
      await ok(db(token, 'closeCursor', { cursorId: opened.cursorId }));
    });

    it('a backward fetch at the beginning returns nothing and moreRecords false', async () => {
      const tableName = await peopleTable(token);
      const opened = await ok(db(token, 'getRecordsByTable', { tableName, returnCursor: true }));
      const back = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: -3 }));
      assert.equal(back.returnedRecordCount, 0);
      assert.equal(back.moreRecords, false);
      const fwd = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(fwd.data.map((x: any) => x.name), ['Ann', 'Bob']);
      await ok(db(token, 'closeCursor', { cursorId: opened.cursorId }));
    });

    it('established product: getRecordsFromCursor startFrom beforeFirstRecord / afterLastRecord', async () => {
      const tableName = await peopleTable(token);
      const opened = await ok(db(token, 'getRecordsByTable', { tableName, returnCursor: true }));
      await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 3 }));
      const again = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, startFrom: 'beforeFirstRecord', fetchRecords: 1 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(again.data.map((x: any) => x.name), ['Ann']);
      const last = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, startFrom: 'afterLastRecord', fetchRecords: -2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(last.data.map((x: any) => x.name), ['Eve', 'Dee']);
      await ok(db(token, 'closeCursor', { cursorId: opened.cursorId }));
    });

    it('deleting a table closes its cursors', async () => {
      const tableName = await peopleTable(token);
      const opened = await ok(db(token, 'getRecordsByTable', { tableName, returnCursor: true }));
      await ok(db(token, 'deleteTables', { tableNames: [tableName] }));
      await fails(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 1 }), 4080);
    });

    it('a cursor expires after cursor_idle_timeout_seconds', async () => {
      const cursorClock = new ManualClock();
      const s = await startServer({ cursor_idle_timeout_seconds: 1 } as any, { clock: cursorClock });
      const prev = server;
      server = s;
      try {
        const t = await login();
        const tableName = await peopleTable(t);
        const opened = await ok(db(t, 'getRecordsByTable', { tableName, returnCursor: true }));
        cursorClock.advanceSeconds(2.2);
        await fails(db(t, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 1 }), 4080);
      } finally {
        server = prev;
        await s.close();
      }
    });

    it('a body above body_limit_bytes answers 413 with 12028', async () => {
      const s = await startServer({ body_limit_bytes: 2048 } as any);
      try {
        const response = await call('POST', `${s.http}/api`, { body: { action: 'pingSession', params: { pad: 'x'.repeat(5000) } }, auth: null });
        assert.equal(response.status, 413, response.text);
        assert.equal(response.json?.errorCode, 12028);
      } finally {
        await s.close();
      }
    });

    it('transaction: updates and deletes are invisible to others until commit', async () => {
      const tableName = await peopleTable(token, [['Ann', 30], ['Bob', 40]]);
      const all = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const other = await login();
      const { transactionId } = await ok(db(token, 'createTransaction'));
      await ok(db(token, 'updateRecords', { tableName, transactionId, sourceData: [{ id: all.data[0].id, age: 99 }] }));
      await ok(db(token, 'deleteRecords', { tableName, transactionId, ids: [all.data[1].id] }));
      const seen = await ok(db(other, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(seen.data.map((x: any) => [x.name, x.age]), [['Ann', 30], ['Bob', 40]]);
      const own = await ok(db(token, 'getRecordsByIds', { tableName, transactionId, ids: [all.data[0].id, all.data[1].id] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(own.data.map((x: any) => [x.name, x.age]), [['Ann', 99]]);
      await ok(db(token, 'commitTransaction', { transactionId }));
      const after = await ok(db(other, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(after.data.map((x: any) => [x.name, x.age]), [['Ann', 99]]);
    });

    it('transaction: getRecordsByIndex / getRecordsInKeyRange inside the transaction see its writes', async () => {
      const tableName = await peopleTable(token, [['Ann', 30]]);
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_name', fields: [{ name: 'name' }] }));
      const { transactionId } = await ok(db(token, 'createTransaction'));
      await ok(db(token, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'Abe', age: 1 }] }));
      const byIndex = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name', transactionId }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(byIndex.data.map((x: any) => x.name), ['Abe', 'Ann']);
      await ok(db(token, 'rollbackTransaction', { transactionId }));
    });

    it('alterSession defaultResponseOptions null clears them', async () => {
      const t = await login('admin', 'ADMIN', { defaultResponseOptions: { dataFormat: 'objects' } });
      const altered = await ok(adm(t, 'alterSession', { defaultResponseOptions: null }));
      assert.ok(altered.defaultResponseOptions === null || Object.keys(altered.defaultResponseOptions).length === 0);
      const tableName = await peopleTable(t, [['A', 1]]);
      const r = await ok(db(t, 'getRecordsByTable', { tableName }));
      assert.equal(r.dataFormat, 'arrays');
    });

    it('idleConnectionTimeoutSeconds out of range is 12012', async () => {
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', idleConnectionTimeoutSeconds: 0 } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', idleConnectionTimeoutSeconds: 31536001 } }, 12012);
      await fails({ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', idleConnectionTimeoutSeconds: 1.5 } }, 12012);
    });

    it('another account\'s session: describe / alter / delete are refused (12032) for non-admins', async () => {
      const user = `sess_${Date.now() % 100000}`;
      await ok(adm(token, 'createAccount', { username: user, password: 'pw', roles: ['reader'] }));
      const t = await login(user, 'pw');
      await fails(adm(t, 'alterSession', { authToken: token, description: 'pwned' }), 12032);
      await fails(adm(t, 'deleteSession', { authToken: token }), 12032);
      const d = await send(adm(t, 'describeSessions', { authTokens: [token] }));
      assert.ok(d.errorCode === 12032 || (d.errorCode === 0 && d.result.sessions.length === 0), JSON.stringify(d));
      // admin (session.manageAll) sees the user's session
      const listed = await ok(adm(token, 'listSessions'));
      assert.ok(listed.sessions.some((s: any) => s.username === user));
    });

    it('omit applies to error responses too', async () => {
      const r = await send({ ...db(token, 'getRecordsByTable', { tableName: 'no_such_tbl_omit' }), responseOptions: { omit: ['authToken'] } });
      assert.equal(r.errorCode, 4023);
      assert.ok(!('authToken' in r));
    });

    it('numberFormat string applies to arrays data and to float columns', async () => {
      const tableName = uniqueTable('nf');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'f', type: 'float' }, { name: 'i', type: 'integer' }] }));
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ f: 0.1, i: -7 }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { numberFormat: 'string' } }));
      assert.equal(typeof r.data[0][0], 'string');
      assert.equal(r.data[0][1], '0.1');
      assert.equal(r.data[0][2], '-7');
    });

    it('includeFields: unknown names are ignored; includeFields not an array is 12012', async () => {
      const tableName = await peopleTable(token, [['A', 1]]);
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects', includeFields: ['name', 'ghost'] } }));
      assert.deepEqual(Object.keys(r.data[0]), ['name']);
      const bad = await send(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { includeFields: 'name' } }));
      assert.equal(bad.errorCode, 12012);
    });

    it('stringFormat hex on char columns returns the stored bytes', async () => {
      const tableName = uniqueTable('chx');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'c', type: 'char', length: 4 }, { name: 'lv', type: 'lvarchar' }] }));
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ c: 'ab', lv: 'é' }] }));
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects', stringFormat: 'hex' } }));
      assert.match(r.data[0].c, /^6162/);
      assert.equal(r.data[0].lv, 'C3A9');
    });

    it('getRecordsInKeyRange: two-field index, filter on the second field', async () => {
      const tableName = uniqueTable('kr2');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'g', type: 'varchar', length: 10 }, { name: 'k', type: 'integer' }] }));
      await ok(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['g', 'k'], sourceData: [['even', 2], ['odd', 1], ['even', 10], ['odd', 3], ['even', 4]] }));
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_g_k', fields: [{ name: 'g' }, { name: 'k' }] }));
      const r = await ok(db(token, 'getRecordsInKeyRange', {
        tableName,
        indexFilter: { indexName: 'by_g_k', indexFieldFilters: [{ fieldName: 'g', operator: '=', value: 'even' }, { fieldName: 'k', operator: '>=', value: 4 }] },
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.k), [4, 10]);
      const ours = await ok(db(token, 'getRecordsInKeyRange', { tableName, indexName: 'by_g_k', indexRange: { '>=': ['even', 3], '<': ['odd'] } }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(ours.data.map((x: any) => x.k), [4, 10]);
    });

    it('integration-style guard: a binary value in getRecordsInKeyRange bound uses the session format', async () => {
      const tableName = uniqueTable('binkey');
      await ok(db(token, 'createTable', { tableName, fields: [{ name: 'b', type: 'binary', length: 2 }] }));
      await ok(db(token, 'insertRecords', { tableName, sourceData: [{ b: '0001' }, { b: '0002' }, { b: '00FF' }] }));
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_b', fields: [{ name: 'b' }] }));
      const r = await ok(db(token, 'getRecordsInKeyRange', {
        tableName, indexFilter: { indexName: 'by_b', indexFieldFilters: [{ fieldName: 'b', operator: '>=', value: '0002' }] },
      }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => x.b), ['0002', '00FF']);
    });

    it('requestId is echoed on authentication errors and on 12025/12012 errors', async () => {
      const a = await send({ api: 'db', action: 'listTables', params: {}, authToken: 'bogus', requestId: { n: 1 } });
      assert.equal(a.errorCode, 12031);
      assert.deepEqual(a.requestId, { n: 1 });
      const b = await send({ api: 'db', params: {}, authToken: token, requestId: [7] });
      assert.deepEqual(b.requestId, [7]);
    });

    it('REST sees a record inserted inside a transaction only after commit', async () => {
      const tableName = await peopleTable(token, []);
      const { transactionId } = await ok(db(token, 'createTransaction'));
      const ins = await ok(db(token, 'insertRecords', { tableName, transactionId, sourceData: [{ name: 'Tx', age: 1 }] }));
      const before = await call('GET', `${server.http}/engine/api/v1/record/main/${tableName}/${ins.ids[0]}`, { auth: ['admin', 'ADMIN'] });
      assert.equal(before.status, 404);
      await ok(db(token, 'commitTransaction', { transactionId }));
      const after = await call('GET', `${server.http}/engine/api/v1/record/main/${tableName}/${ins.ids[0]}`, { auth: ['admin', 'ADMIN'] });
      assert.equal(after.status, 200);
      assert.equal(after.json.name, 'Tx');
    });

    it('moreRecords counts only matching records; totalRecordCount is the table size', async () => {
      const tableName = await peopleTable(token, [['A', 1], ['B', 2], ['C', 3], ['D', 4], ['E', 5], ['F', 6]]);
      const r = await ok(db(token, 'getRecordsByTable', { tableName, tableFilter: 'age <= 2', maxRecords: 2 }));
      assert.equal(r.returnedRecordCount, 2);
      assert.equal(r.moreRecords, false, 'no further matching record follows');
      assert.equal(r.totalRecordCount, 6);
      const past = await ok(db(token, 'getRecordsByTable', { tableName, skipRecords: 10 }));
      assert.equal(past.returnedRecordCount, 0);
      assert.deepEqual(past.data, []);
      assert.equal(past.moreRecords, false);
      const revSkip = await ok(db(token, 'getRecordsByTable', { tableName, reverseOrder: true, skipRecords: 1, maxRecords: 2 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(revSkip.data.map((x: any) => x.name), ['E', 'D']);
    });

    it('an index cursor fetches backward in index order', async () => {
      const tableName = await peopleTable(token, [['Cy', 1], ['Al', 2], ['Bo', 3]]);
      await ok(db(token, 'createIndex', { tableName, indexName: 'by_name', fields: [{ name: 'name' }] }));
      const opened = await ok(db(token, 'getRecordsByIndex', { tableName, indexName: 'by_name', returnCursor: true }));
      const f = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: 3 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(f.data.map((x: any) => x.name), ['Al', 'Bo', 'Cy']);
      const b = await ok(db(token, 'getRecordsFromCursor', { cursorId: opened.cursorId, fetchRecords: -2 }, { responseOptions: { dataFormat: 'objects' } }));
      // the cursor stands on the last record returned (Cy); backward reads the ones before it
      assert.deepEqual(b.data.map((x: any) => x.name), ['Bo', 'Al']);
      await ok(db(token, 'closeCursor', { cursorId: opened.cursorId }));
    });

    it('an unknown api is refused; __proto__ keys do no harm', async () => {
      const r = await send({ api: 'sql', action: 'listTables', params: {}, authToken: token });
      assert.ok([14701, 12012].includes(r.errorCode), String(r.errorCode));
      const tableName = await peopleTable(token, []);
      const body = `{"api":"db","action":"insertRecords","authToken":"${token}","params":{"tableName":"${tableName}","sourceData":[{"name":"P","age":1,"__proto__":{"polluted":true}}]}}`;
      const response = await post(body);
      assert.equal(response.status, 200);
      assert.equal(({} as any).polluted, undefined);
      await ok(db(token, 'listTables'));
    });

    it('arrays with an unknown field name is 4014; ids as numeric strings work for update/delete', async () => {
      const tableName = await peopleTable(token, [['A', 1], ['B', 2]]);
      await fails(db(token, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'ghost'], sourceData: [['x', 1]] }), 4014);
      const all = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects', numberFormat: 'string' } }));
      const [a, b] = all.data.map((x: any) => x.id);
      assert.equal(typeof a, 'string');
      await ok(db(token, 'updateRecords', { tableName, sourceData: [{ id: a, age: 11 }] }));
      const del = await ok(db(token, 'deleteRecords', { tableName, ids: [b] }));
      assert.equal(del.deletedRecordCount, 1);
      const left = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(left.data.map((x: any) => [x.name, x.age]), [['A', 11]]);
    });

    it('GET /api does not crash the server', async () => {
      const response = await call('GET', `${server.http}/api`, { auth: null });
      assert.ok(response.status >= 200 && response.status < 500, String(response.status));
      await ok(db(token, 'listTables'));
    });

    it('concurrent 5,000-row inserts from several sessions all land', async () => {
      const tableName = await peopleTable(token, []);
      const tokens = await Promise.all([login(), login(), login(), login()]);
      await Promise.all(tokens.map((t, k) => {
        const rows = Array.from({ length: 5000 }, (_, i) => [`s${k}_${i}`, i]);
        return ok(db(t, 'insertRecords', { tableName, dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData: rows }));
      }));
      assert.equal(await countRows(token, tableName), 20000);
    });
  });

  // ---------------------------------------------------------------- one store
  describe('one store: actions and REST', () => {
    it('a table made by actions is readable through REST GET /engine/api/v1/record/main/{table}/{id}', async () => {
      const tableName = await peopleTable(token, [['Rest', 77]]);
      const r = await ok(db(token, 'getRecordsByTable', { tableName }, { responseOptions: { dataFormat: 'objects' } }));
      const id = r.data[0].id;
      const rest = await call('GET', `${server.http}/engine/api/v1/record/main/${tableName}/${id}`, { auth: ['admin', 'ADMIN'] });
      assert.equal(rest.status, 200, rest.text);
      assert.equal(rest.json.name, 'Rest');
      assert.equal(rest.json.age, 77);
      const list = await call('GET', `${server.http}/engine/api/v1/table/main`, { auth: ['admin', 'ADMIN'] });
      assert.ok(list.json._tables.includes(tableName));
    });

    it('a table and records made through REST are readable through actions', async () => {
      const tableName = uniqueTable('fromrest');
      const created = await call('POST', `${server.http}/engine/api/v1/table/main/${tableName}`, { auth: ['admin', 'ADMIN'], body: { fields: [{ name: 'n', type: 'INTEGER', length: 4 }, { name: 's', type: 'VARCHAR', length: 48 }] } });
      assert.equal(created.status, 200, created.text);
      const rec = await call('POST', `${server.http}/engine/api/v1/record/main/${tableName}`, { auth: ['admin', 'ADMIN'], body: [{ n: 1, s: 'one' }, { n: 2, s: 'two' }] });
      assert.equal(rec.status, 200, rec.text);
      const r = await ok(db(token, 'getRecordsByIds', { tableName, ids: rec.json._ids }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(r.data.map((x: any) => [x.n, x.s]), [[1, 'one'], [2, 'two']]);
      assert.deepEqual(r.data.map((x: any) => x.id), rec.json._ids);
    });

    it('the server keeps serving after bad input', async () => {
      await post('{{{{');
      await post('[]');
      await send({ api: 'db', action: 'insertRecords', params: { tableName: 'x', sourceData: [[[[[]]]]] }, authToken: token });
      await ok(db(token, 'listTables'));
    });
  });
});
