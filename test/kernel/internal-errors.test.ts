/**
 * An unexpected error (a bug, a failing disk) answers 500 / errorCode 12001 with a generic message
 * and a reference; its own text goes to the log only, under that reference (kernel/client-error.ts).
 * Through REST, the action interface and a route on the http plugin, against a real data folder.
 */
import assert from 'node:assert/strict';
import { definePlugin } from '../../kernel/plugin';
import type { StoragePort } from '../../kernel/storage/storage-port';
import { call, startServer, type HttpResult, type TestServer } from '../helpers/server';
import { captureLog, type CapturedLog } from '../helpers/log-capture';

/** What the failure says about the inside: none of it may reach a client. */
const SECRET = 'EIO: write failed on /srv/secret-volume/data.mdb page 0x7f3a';
const REFERENCE = /^internal error, reference ([0-9a-f]{12}) /;

const faultRoute = definePlugin({
  name: 'fault-route',
  dependencies: ['http'],
  register(engine) {
    engine.need('http').fastify.get('/test/fault', async () => {
      throw new TypeError(SECRET);
    });
  },
});

describe('kernel: unexpected errors', function () {
  let server: TestServer;
  let log: CapturedLog;
  let token: string;

  before(async function () {
    log = captureLog();
    server = await startServer({ plugins: ['storage-lmdb', 'data', 'http', 'rest', 'actions'] }, { extraPlugins: [faultRoute], logger: log.logger });
    const created = await call('POST', `${server.http}/engine/api/v1/table/main/t`, { body: { fields: [{ name: 'v', type: 'integer' }] } });
    assert.equal(created.status, 200, created.text);
    // The storage fails the way a broken disk or a bug would: with an error that is not an EngineError.
    const storage = server.engine.need('storage') as StoragePort & Record<string, unknown>;
    const fail = () => { throw new Error(SECRET); };
    storage.insertValues = fail;
    const session = await call('POST', `${server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    token = session.json.authToken;
  });
  after(async function () {
    await server?.close();
  });

  /** The reference in the message, after checking that nothing of the failure is in the answer. */
  function referenceOf(result: HttpResult): string {
    assert.ok(!result.text.includes('EIO') && !result.text.includes('secret') && !result.text.includes('Error'), result.text);
    assert.equal(result.json.errorCode, 12001, result.text);
    const match = REFERENCE.exec(result.json.errorMessage);
    assert.ok(match, result.json.errorMessage);
    return match[1];
  }

  /** The log entry of that reference: it holds the failure's text and stack. */
  function logged(reference: string): Record<string, any> {
    const entries = log.entries().filter((entry) => entry.reference === reference);
    assert.equal(entries.length, 1, `one log entry for reference ${reference}`);
    const [entry] = entries;
    assert.equal(entry.level, 50);
    assert.equal(entry.err.message, SECRET);
    assert.match(entry.err.stack, /EIO/);
    return entry;
  }

  it('REST answers 500 with a reference; the log has the failure under it', async function () {
    const result = await call('POST', `${server.http}/engine/api/v1/record/main/t`, { body: { v: 1 } });
    assert.equal(result.status, 500);
    const entry = logged(referenceOf(result));
    assert.equal(entry.method, 'POST');
    assert.equal(entry.url, '/engine/api/v1/record/main/t');
  });

  it('an action answers 12001 with a reference in its envelope; the log has the failure under it', async function () {
    const result = await call('POST', `${server.http}/api`, {
      auth: null,
      body: { api: 'db', action: 'insertRecords', params: { tableName: 't', sourceData: [{ v: 1 }] }, authToken: token, requestId: 'r1' },
    });
    assert.equal(result.status, 200);
    assert.equal(result.json.requestId, 'r1');
    assert.equal(result.json.authToken, token);
    const entry = logged(referenceOf(result));
    assert.equal(entry.api, 'db');
    assert.equal(entry.action, 'insertRecords');
  });

  it('a route on the http plugin answers 500 with a reference; the log has the failure under it', async function () {
    const result = await call('GET', `${server.http}/test/fault`, { auth: null });
    assert.equal(result.status, 500);
    assert.equal(logged(referenceOf(result)).url, '/test/fault');
  });

  it('gives every failure its own reference', async function () {
    const first = referenceOf(await call('POST', `${server.http}/engine/api/v1/record/main/t`, { body: { v: 2 } }));
    const second = referenceOf(await call('POST', `${server.http}/engine/api/v1/record/main/t`, { body: { v: 3 } }));
    assert.notEqual(first, second);
  });

  it('shows errors meant for clients as they are, and logs none of them as internal', async function () {
    const before = log.entries().length;
    const missing = await call('POST', `${server.http}/engine/api/v1/record/main/nosuch`, { body: { v: 1 } });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.errorMessage, 'table "nosuch" does not exist in database "main"');
    const action = await call('POST', `${server.http}/api`, { auth: null, body: { api: 'db', action: 'getRecordsByTable', params: { tableName: 'nosuch' }, authToken: token } });
    assert.equal(action.json.errorCode, 4023);
    assert.equal(log.entries().slice(before).filter((entry) => entry.level >= 50).length, 0);
  });
});
