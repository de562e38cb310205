/**
 * Failed logins cannot starve the server: passwords are checked in a bounded pool of worker
 * threads (never in libuv's pool, which LMDB commits need), repeated failures back off per
 * account and per address, and an unknown account costs the same password check. Through REST
 * Basic auth and createSession, from distinct client addresses (127.0.0.2, .3 … reach a server on
 * 127.0.0.1 and are not in `login_shared_addresses`).
 */
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { request } from 'node:http';
import { ManualClock } from '../helpers/manual-clock';
import { readResponse, startServer, type HttpResult, type TestServer } from '../helpers/server';

const REST = '/engine/api/v1';

/** One HTTP request sent from `from` (a local address). */
function send(server: TestServer, from: string, method: string, path: string, options: { body?: unknown; auth?: [string, string] } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.from(JSON.stringify(options.body));
    headers['content-type'] = 'application/json';
  }
  if (options.auth) headers.authorization = `Basic ${Buffer.from(`${options.auth[0]}:${options.auth[1]}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = request(`${server.http}${path}`, { method, headers, localAddress: from }, (res) => readResponse(res, resolve));
    req.on('error', reject);
    req.end(payload);
  });
}

function restGet(server: TestServer, from: string, auth: [string, string]): Promise<HttpResult> {
  return send(server, from, 'GET', `${REST}/table/main`, { auth });
}

/** createSession from `from`; returns the response envelope. */
async function createSession(server: TestServer, from: string, username: string, password: string): Promise<any> {
  const reply = await send(server, from, 'POST', '/api', { body: { api: 'admin', action: 'createSession', params: { username, password } } });
  assert.equal(reply.status, 200, reply.text);
  return reply.json;
}

describe('logins: bounded hashing, backoff, no enumeration', function () {
  this.timeout(60_000);
  const plugins = ['storage-lmdb', 'data', 'http', 'rest', 'actions'];

  describe('backoff (3 failures before backing off)', () => {
    let server: TestServer;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ plugins, login_failures_before_backoff: 3, login_backoff_max_seconds: 4 }, { clock });
      for (const name of ['vic', 'ursula', 'sam', 'tom']) await server.engine.accounts.create(name, `${name}-pw`, ['reader']);
    });
    after(() => server.close());

    it('after 3 failures an account is refused for 1 s, then 2 s, 4 s (capped): 429 with Retry-After, 12034, right password or not, with no password check', async () => {
      for (const from of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) assert.equal((await restGet(server, from, ['vic', 'wrong'])).status, 401);

      const checksBefore = server.engine.passwordHasher.stats.done;
      const refused = await restGet(server, '127.0.0.4', ['vic', 'vic-pw']);
      assert.equal(refused.status, 429);
      assert.equal(refused.json.errorCode, 12034);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal((await createSession(server, '127.0.0.1', 'VIC', 'vic-pw')).errorCode, 12034);
      assert.equal(server.engine.passwordHasher.stats.done, checksBefore, 'a refused attempt checks no password');

      clock.advanceSeconds(1);
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'wrong'])).status, 401, 'checked again after the backoff');
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'vic-pw'])).headers['retry-after'], '2', 'the next failure doubles it');
      clock.advanceSeconds(2);
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'wrong'])).status, 401);
      clock.advanceSeconds(1);
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'vic-pw'])).status, 429);
      clock.advanceSeconds(3);
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'wrong'])).status, 401);
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'vic-pw'])).headers['retry-after'], '4', 'capped at login_backoff_max_seconds');
      clock.advanceSeconds(4);
      assert.equal((await restGet(server, '127.0.0.1', ['vic', 'vic-pw'])).status, 200, 'the right password after the backoff');
    });

    it('a successful login clears the account\'s count', async () => {
      for (let round = 0; round < 3; round++) {
        assert.equal((await createSession(server, '127.0.0.1', 'ursula', 'no')).errorCode, 12033);
        assert.equal((await createSession(server, '127.0.0.1', 'ursula', 'no')).errorCode, 12033);
        assert.equal((await createSession(server, '127.0.0.1', 'ursula', 'ursula-pw')).errorCode, 0);
      }
    });

    it('per address: failures on any accounts from one address make it back off, other addresses are unaffected', async () => {
      for (const name of ['nobody1', 'nobody2', 'sam']) assert.equal((await createSession(server, '127.0.0.5', name, 'guess')).errorCode, 12033);
      const refused = await createSession(server, '127.0.0.5', 'tom', 'tom-pw');
      assert.equal(refused.errorCode, 12034);
      assert.match(refused.errorMessage, /try again in 1 s/);
      assert.equal((await restGet(server, '127.0.0.5', ['tom', 'tom-pw'])).status, 429);
      assert.equal((await createSession(server, '127.0.0.6', 'tom', 'tom-pw')).errorCode, 0);
      assert.equal((await createSession(server, '127.0.0.6', 'sam', 'sam-pw')).errorCode, 0, 'sam had one failure only');
      clock.advanceSeconds(1);
      assert.equal((await createSession(server, '127.0.0.5', 'tom', 'tom-pw')).errorCode, 0);
    });

    it('a shared address (login_shared_addresses, default this machine\'s loopback) backs off per account only', async () => {
      for (const name of ['nobody3', 'nobody4', 'nobody5', 'nobody6']) assert.equal((await createSession(server, '127.0.0.1', name, 'guess')).errorCode, 12033);
      assert.equal((await createSession(server, '127.0.0.1', 'tom', 'tom-pw')).errorCode, 0);
    });
  });

  describe('password checks', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ plugins, password_hash_workers: 2, login_failures_before_backoff: 0 });
      await server.engine.accounts.create('known', 'known-pw');
    });
    after(() => server.close());

    it('an unknown account costs one password check, like a wrong password', async () => {
      const checks = () => server.engine.passwordHasher.stats.done;
      let before = checks();
      assert.equal((await createSession(server, '127.0.0.1', 'known', 'wrong')).errorCode, 12033);
      assert.equal(checks() - before, 1, 'a wrong password is checked');
      before = checks();
      assert.equal((await createSession(server, '127.0.0.1', 'unknown', 'wrong')).errorCode, 12033);
      assert.equal(checks() - before, 1, 'an unknown account is checked too');
      before = checks();
      assert.equal((await restGet(server, '127.0.0.1', ['never-was', 'wrong'])).status, 401);
      assert.equal(checks() - before, 1, 'through REST as well');
    });

    it('a name no account can have is refused without a password check (the name rules are public)', async () => {
      const checks = () => server.engine.passwordHasher.stats.done;
      const before = checks();
      assert.equal((await createSession(server, '127.0.0.1', 'not a name!', 'wrong')).errorCode, 12033);
      assert.equal((await restGet(server, '127.0.0.1', ['x'.repeat(65), 'wrong'])).status, 401);
      assert.equal(checks() - before, 0);
    });

    it('runs at most password_hash_workers checks at once, none of them in libuv\'s thread pool', async () => {
      let scryptInThreadPool = 0;
      const hook = createHook({ init(_id, type) { if (type === 'SCRYPTREQUEST') scryptInThreadPool++; } }).enable();
      try {
        const flood = Array.from({ length: 24 }, (_, n) => n % 2 === 0
          ? createSession(server, '127.0.0.1', `flood${n}`, 'wrong').then((reply) => reply.errorCode)
          : restGet(server, '127.0.0.1', ['known', `wrong${n}`]).then((reply) => reply.status));
        const outcomes = await Promise.all(flood);
        assert.deepEqual(new Set(outcomes), new Set([12033, 401]));
      } finally {
        hook.disable();
      }
      const { mostRunning } = server.engine.passwordHasher.stats;
      assert.ok(mostRunning >= 1 && mostRunning <= 2, `at most 2 checks ran at once (saw ${mostRunning})`);
      assert.equal(scryptInThreadPool, 0, 'no scrypt ran in libuv\'s thread pool');
    });
  });

  describe('verified credentials expire on the engine clock', () => {
    it('a cached password is checked again once credential_cache_seconds have passed (REST and createSession)', async () => {
      const clock = new ManualClock();
      const server = await startServer({ plugins, credential_cache_seconds: 30 }, { clock });
      try {
        await server.engine.accounts.create('cora', 'cora-pw', ['reader']);
        const checks = () => server.engine.passwordHasher.stats.done;
        let before = checks();
        assert.equal((await restGet(server, '127.0.0.1', ['cora', 'cora-pw'])).status, 200);
        assert.equal(checks() - before, 1, 'the first request checks the password');
        before = checks();
        assert.equal((await restGet(server, '127.0.0.1', ['cora', 'cora-pw'])).status, 200);
        assert.equal((await createSession(server, '127.0.0.1', 'cora', 'cora-pw')).errorCode, 0);
        assert.equal(checks() - before, 0, 'within the cache time no check runs');
        clock.advanceSeconds(31);
        before = checks();
        assert.equal((await restGet(server, '127.0.0.1', ['cora', 'cora-pw'])).status, 200);
        assert.equal(checks() - before, 1, 'after it, the password is checked again');
      } finally {
        await server.close();
      }
    });
  });
});
