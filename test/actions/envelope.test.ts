/** The action envelope: parsing, errors, requestId, tokens, defaults (plugins/actions/envelope.ts). */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { EngineError } from '../../kernel/errors';
import { parseJsonBody } from '../../plugins/actions/envelope';
import { admin, db, fails, login, ok, post, send, startActionServer } from './action-client';
import { ManualClock } from '../helpers/manual-clock';

describe('actions: envelope', function () {
  let server: TestServer;
  let token: string;
  // expiry is tested by advancing the engine's clock, not by sleeping
  const clock = new ManualClock();

  before(async function () {
    server = await startActionServer({}, false, { clock });
    token = await login(server);
  });
  after(async function () {
    await server?.close();
  });

  it('answers every parsed envelope with HTTP 200 and the four response properties', async function () {
    const response = await send(server, admin('pingSession', token));
    assert.deepEqual(Object.keys(response).sort(), ['authToken', 'errorCode', 'errorMessage', 'result']);
    assert.equal(response.authToken, token);
    assert.equal(response.errorCode, 0);
    assert.equal(response.errorMessage, '');
    assert.deepEqual(response.result, {});
  });

  it('answers a body that is not JSON with HTTP 400 and errorCode 12009 in an envelope', async function () {
    for (const body of ['{"action": ', 'not json', '{"a":1}}', '\u0000']) {
      const response = await post(server, body);
      assert.equal(response.status, 400, body);
      assert.equal(response.json.errorCode, 12009);
      assert.match(response.json.errorMessage, /not valid JSON/);
      assert.deepEqual(response.json.result, {});
      assert.equal(response.json.authToken, '');
    }
  });

  it('answers an empty body with HTTP 400 and 12009', async function () {
    const response = await post(server, '');
    assert.equal(response.status, 400);
    assert.equal(response.json.errorCode, 12009);
  });

  it('reads JSON whatever the Content-Type says', async function () {
    const response = await post(server, JSON.stringify(admin('pingSession', token)), { 'content-type': 'text/plain' });
    assert.equal(response.status, 200);
    assert.equal(response.json.errorCode, 0);
  });

  it('answers a body larger than body_limit_bytes with 12028', async function () {
    const small = await startActionServer({ body_limit_bytes: 1024 }, false);
    try {
      const response = await post(small, { action: 'pingSession', params: { pad: 'x'.repeat(4096) } });
      assert.equal(response.status, 413);
      assert.equal(response.json.errorCode, 12028);
    } finally {
      await small.close();
    }
  });

  it('rejects JSON that is not an object with 12012', async function () {
    for (const body of [[1, 2], 'text', 42, null, true]) {
      const response = await post(server, JSON.stringify(body));
      assert.equal(response.status, 200);
      assert.equal(response.json.errorCode, 12012, JSON.stringify(body));
    }
  });

  it('answers a missing action with 12025', async function () {
    await fails(server, { api: 'admin', params: {}, authToken: token }, 12025);
    await fails(server, { api: 'admin', action: '', params: {}, authToken: token }, 12025);
    await fails(server, { api: 'admin', action: null, params: {}, authToken: token }, 12025);
  });

  it('answers wrong-typed envelope properties with 12012', async function () {
    await fails(server, { api: 'admin', action: 42, authToken: token }, 12012);
    await fails(server, { api: 'admin', action: 'pingSession', params: [1], authToken: token }, 12012);
    await fails(server, { api: 'admin', action: 'pingSession', params: 'x', authToken: token }, 12012);
    await fails(server, { api: 7, action: 'pingSession', authToken: token }, 12012);
    await fails(server, { api: 'admin', action: 'pingSession', authToken: 12345 }, 12012);
    await fails(server, { api: 'admin', action: 'pingSession', apiVersion: 1, authToken: token }, 12012);
    await fails(server, { api: 'admin', action: 'pingSession', debug: true, authToken: token }, 12012);
    await fails(server, { api: 'admin', action: 'pingSession', responseOptions: 'objects', authToken: token }, 12012);
  });

  it('accepts apiVersion and an omitted params object', async function () {
    const response = await send(server, { api: 'admin', action: 'describeSessions', apiVersion: '1.0', authToken: token });
    assert.equal(response.errorCode, 0);
    assert.ok(Array.isArray(response.result.sessions));
  });

  it('answers an unknown action with 14701', async function () {
    const response = await fails(server, db('noSuchAction', token), 14701);
    assert.match(response.errorMessage, /noSuchAction/);
    await fails(server, admin('getRecordsByTable', token), 14701);
    await fails(server, { api: 'nope', action: 'pingSession', authToken: token }, 14701);
  });

  it('answers mq actions that have not landed with 14701; getMessagesFromMqTopic without the messaging plugin with 12006', async function () {
    await fails(server, { api: 'mq', action: 'noSuchMqAction', params: {}, authToken: token }, 14701);
    const response = await fails(server, { api: 'mq', action: 'getMessagesFromMqTopic', params: { topic: 'a' }, authToken: token }, 12006);
    assert.match(response.errorMessage, /messaging plugin/);
  });

  it('echoes requestId unchanged, whatever its JSON type, and only when supplied', async function () {
    for (const requestId of ['r-1', 17, 0, { a: [1, 'b'] }, [1, 2], null, false, '']) {
      const response = await send(server, { ...admin('pingSession', token), requestId });
      assert.deepEqual(response.requestId, requestId);
      assert.ok(Object.prototype.hasOwnProperty.call(response, 'requestId'));
    }
    const without = await send(server, admin('pingSession', token));
    assert.ok(!Object.prototype.hasOwnProperty.call(without, 'requestId'));
  });

  it('echoes requestId on errors too', async function () {
    const response = await fails(server, { ...db('noSuchAction', token), requestId: 'e-1' }, 14701);
    assert.equal(response.requestId, 'e-1');
    const noToken = await fails(server, { ...admin('listAccounts', undefined), requestId: 9 }, 12031);
    assert.equal(noToken.requestId, 9);
  });

  it('echoes a requestId number exactly as written: beyond 2^53, with its decimals, its exponent', async function () {
    const texts = ['9007199254740993', '123456789012345678901234567890', '1.50', '-0', '1e400', '2E+3', '[ 1 , 2.0 ]',
      '{"n": [9007199254740993, 1.0], "s": "x\\"}, \\"requestId\\": 2"}'];
    for (const text of texts) {
      const response = await post(server, `{"api":"admin","action":"pingSession","requestId":${text},"authToken":${JSON.stringify(token)}}`);
      assert.equal(response.status, 200);
      assert.equal(response.json.errorCode, 0, response.text);
      assert.ok(response.text.includes(`"requestId":${text},`), `${text} in ${response.text}`);
    }
  });

  it('echoes a requestId number exactly on errors, after other params, and as the last of repeated keys', async function () {
    const params = '{"tricky": "\\"requestId\\": 1", "nested": {"requestId": 2, "list": [{"requestId": 3}]}}';
    const error = await post(server, `{"api":"db","action":"noSuchAction","params":${params},"authToken":${JSON.stringify(token)},"requestId":9007199254740993}`);
    assert.equal(error.json.errorCode, 14701);
    assert.ok(error.text.includes('"requestId":9007199254740993,'), error.text);
    const repeated = await post(server, `{"requestId":1,"api":"admin","action":"pingSession","requestId" : 9007199254740995 }`);
    assert.ok(repeated.text.includes('"requestId":9007199254740995,'), repeated.text);
    const escapedKey = await post(server, `{"api":"admin","action":"pingSession","request\\u0049d":18014398509481985}`);
    assert.ok(escapedKey.text.includes('"requestId":18014398509481985,'), escapedKey.text);
    const omitted = await post(server, `{"api":"admin","action":"pingSession","requestId":9007199254740993,"responseOptions":{"omit":["authToken","result"]}}`);
    assert.equal(omitted.text, '{"requestId":9007199254740993,"errorCode":0,"errorMessage":""}');
  });

  it('answers a missing, unknown or wrong token with 12031', async function () {
    await fails(server, admin('listAccounts', undefined), 12031);
    await fails(server, admin('listAccounts', 'no-such-token'), 12031);
    await fails(server, admin('listAccounts', ''), 12031);
    await fails(server, db('listTables', 'x'.repeat(10_000)), 12031);
  });

  it('answers an expired token with 12031 (idleConnectionTimeoutSeconds)', async function () {
    const short = await login(server, 'admin', 'ADMIN', { idleConnectionTimeoutSeconds: 1 });
    await ok(server, admin('pingSession', short));
    clock.advanceSeconds(1.001);
    await fails(server, admin('pingSession', short), 12031);
    await fails(server, admin('listAccounts', short), 12031);
  });

  it('keeps a session alive while it is used', async function () {
    const short = await login(server, 'admin', 'ADMIN', { idleConnectionTimeoutSeconds: 1 });
    for (let i = 0; i < 3; i++) {
      clock.advanceSeconds(0.6);
      await ok(server, admin('pingSession', short));
    }
  });

  it('runs createSession and pingSession without a token and without api', async function () {
    const result = await ok(server, { action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
    assert.equal(typeof result.authToken, 'string');
    await ok(server, { action: 'pingSession' });
  });

  it('defaults api to the session\'s defaultApi (db unless set)', async function () {
    await fails(server, { action: 'listAccounts', authToken: token }, 14701);
    const adminDefault = await login(server, 'admin', 'ADMIN', { defaultApi: 'admin' });
    const result = await ok(server, { action: 'listAccounts', authToken: adminDefault });
    assert.ok(Array.isArray(result.accounts));
  });

  it('answers the response authToken at the top level', async function () {
    const response = await send(server, admin('listAccounts', token));
    assert.equal(response.authToken, token);
  });

  it('adds debugInfo with debug "max", hiding passwords and tokens', async function () {
    const response = await send(server, { ...admin('createSession', undefined, { username: 'admin', password: 'ADMIN' }), debug: 'max' });
    assert.equal(response.errorCode, 0);
    assert.equal(response.debugInfo.request.params.password, '********');
    assert.equal(typeof response.debugInfo.elapsedMilliseconds, 'number');
    const plain = await send(server, admin('pingSession', token));
    assert.equal(plain.debugInfo, undefined);
    const withToken = await send(server, { ...admin('pingSession', token), debug: 'max' });
    assert.equal(withToken.debugInfo.request.authToken, '********');
  });

  it('removes the properties named by responseOptions.omit (array or object form)', async function () {
    const a = await send(server, { ...admin('pingSession', token), responseOptions: { omit: ['errorMessage', 'authToken'] } });
    assert.deepEqual(Object.keys(a).sort(), ['errorCode', 'result']);
    const b = await send(server, { ...admin('pingSession', token), responseOptions: { omit: { result: true, errorMessage: false } } });
    assert.deepEqual(Object.keys(b).sort(), ['authToken', 'errorCode', 'errorMessage']);
    await fails(server, { ...admin('pingSession', token), responseOptions: { omit: 'errorMessage' } }, 12012);
  });

  it('ignores unknown envelope properties', async function () {
    await ok(server, { ...admin('pingSession', token), somethingElse: { x: 1 } });
  });

  it('survives prototype-poisoning keys', async function () {
    const body = `{"api":"admin","action":"pingSession","authToken":${JSON.stringify(token)},"params":{"__proto__":{"polluted":true}},"responseOptions":{"constructor":{"prototype":{"x":1}}}}`;
    const response = await post(server, body);
    assert.equal(response.status, 200);
    assert.equal(response.json.errorCode, 0);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('actions: parseJsonBody', function () {
  it('parses JSON, drops __proto__ keys and constructor keys holding a prototype', function () {
    assert.deepEqual(parseJsonBody(' {"a":[1,{"b":"x"}]}\n'), { a: [1, { b: 'x' }] });
    const poisoned = parseJsonBody('{"a":1,"__proto__":{"polluted":true},"b":{"constructor":{"prototype":{}}, "c":2}}') as Record<string, any>;
    assert.deepEqual(Object.keys(poisoned), ['a', 'b']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(poisoned.b, { c: 2 });
    // the words inside values are harmless and kept
    assert.deepEqual(parseJsonBody('{"note":"__proto__ and constructor"}'), { note: '__proto__ and constructor' });
    // a "constructor" without "prototype" is data (a column may be named so)
    assert.deepEqual(parseJsonBody('{"constructor":"x","d":{"constructor":{"n":1}}}'), { constructor: 'x', d: { constructor: { n: 1 } } });
  });

  it('answers MALFORMED_JSON for empty or blank text and for invalid JSON', function () {
    for (const text of ['', '   ', '\n\t\r ', '\u00a0\ufeff\u2028', 'nope', '{"a":']) {
      assert.throws(() => parseJsonBody(text), (error: unknown) => error instanceof EngineError && error.id === 'MALFORMED_JSON', JSON.stringify(text));
    }
    assert.throws(() => parseJsonBody(' '), /empty/);
  });
});
