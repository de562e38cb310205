/** The real program: `node dist/main.js` with settings from files and the environment. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call, tempDataDir } from '../helpers/server';
import { spawnEngine } from '../helpers/engine-process';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** POST /api with one envelope; returns the response envelope. */
async function action(base: string, envelope: Record<string, unknown>): Promise<any> {
  const reply = await call('POST', `${base}/api`, { body: envelope, auth: null });
  assert.equal(reply.status, 200, reply.text);
  return reply.json;
}

describe('main (the server process)', function () {
  this.timeout(60_000);

  it('runs with the same Node flags from `npm start` and from its bin (the #! line)', () => {
    const root = join(__dirname, '..', '..', '..');
    const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const shebang = readFileSync(join(root, 'dist', 'main.js'), 'utf8').split('\n')[0];
    const flags = (words: string[]): string[] => words.filter((word) => word.startsWith('--'));
    assert.deepEqual(flags(shebang.split(/\s+/)), flags(start.split(/\s+/)));
    // V8's young generation stays small: idle connections cost less memory (docs/decisions.md).
    assert.ok(flags(start.split(/\s+/)).includes('--max-semi-space-size=8'));
  });

  for (const [what, env, name] of [
    ['a non-numeric port', { ENGINE_LISTENING_HTTP_PORT: 'abc' }, 'listening_http_port'],
    ['an unknown setting', { ENGINE_NOT_A_SETTING: '1' }, 'not_a_setting'],
    ['an unknown plugin', { ENGINE_PLUGINS: '["http","nope"]' }, 'nope'],
  ] as const) {
    it(`exits non-zero on ${what}, naming it`, async () => {
      const proc = spawnEngine({ ...env, ENGINE_DATA_DIR: tempDataDir() });
      assert.notEqual(await proc.exit, 0);
      assert.match(proc.output(), new RegExp(name));
    });
  }

  it('serves HTTP and HTTPS on the configured ports and stops cleanly on SIGTERM', async () => {
    const proc = spawnEngine({ ENGINE_DATA_DIR: tempDataDir(), ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: '0', ENGINE_PLUGINS: '["storage-lmdb","http"]' });
    try {
      const { http, https } = await proc.listening;
      assert.equal((await call('GET', `${http}/`, { auth: null })).status, 200);
      assert.equal((await call('GET', `${https}/`, { auth: null })).status, 200);
      assert.match(proc.output(), /default password/);
    } finally {
      assert.equal(await proc.stop('SIGTERM'), 0);
    }
  });

  it('on SIGTERM finishes in-flight writes: every acknowledged record is there after a restart', async () => {
    const dataDir = tempDataDir();
    const env = { ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_PLUGINS: '["storage-lmdb","data","http","rest"]' };
    const first = spawnEngine(env);
    const base = `${(await first.listening).http}/engine/api/v1`;
    assert.equal((await call('POST', `${base}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }] } })).status, 200);
    const acknowledged: number[] = [];
    let firstAcknowledged!: () => void;
    const someAcknowledged = new Promise<void>((resolve) => { firstAcknowledged = resolve; });
    const writes = Array.from({ length: 300 }, (_, n) => call('POST', `${base}/record/main/t`, { body: { n } })
      .then((reply) => {
        if (reply.status === 200) acknowledged.push(...(reply.json._ids as number[]));
        firstAcknowledged();
      }, () => undefined));
    await someAcknowledged;
    first.child.kill('SIGTERM');
    await Promise.all(writes);
    assert.equal(await first.exit, 0);
    assert.ok(acknowledged.length > 0, 'some writes were acknowledged before the stop');
    const second = spawnEngine(env);
    try {
      const again = `${(await second.listening).http}/engine/api/v1`;
      for (const id of acknowledged) {
        assert.equal((await call('GET', `${again}/record/main/t/${id}`)).status, 200, `acknowledged record ${id} is missing`);
      }
    } finally {
      await second.stop();
    }
  });

  it('keeps an initial admin password from ENGINE_ADMIN_PASSWORD across restarts, never storing it', async () => {
    const dataDir = tempDataDir();
    const env = { ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_ADMIN_PASSWORD: 'Plain-Text-Secret-42', ENGINE_PLUGINS: '["storage-lmdb","data","http","rest"]' };
    const first = spawnEngine(env);
    await first.listening;
    assert.equal(await first.stop('SIGINT'), 0);
    assert.doesNotMatch(first.output(), /default password/);
    for (const file of filesUnder(dataDir)) {
      assert.ok(!readFileSync(file).includes('Plain-Text-Secret-42'), `${file} holds the password in plain text`);
    }
    const second = spawnEngine({ ...env, ENGINE_ADMIN_PASSWORD: 'ignored-now' });
    try {
      const base = `${(await second.listening).http}/engine/api/v1`;
      assert.equal((await call('GET', `${base}/table/main`, { auth: ['admin', 'Plain-Text-Secret-42'] })).status, 200);
      assert.equal((await call('GET', `${base}/table/main`, { auth: ['admin', 'ignored-now'] })).status, 401);
    } finally {
      assert.equal(await second.stop(), 0);
    }
    assert.doesNotMatch(second.output(), /default password/);
  });

  it('a changed admin password: changed through alterAccount, the new one logs in after a restart and the old one is refused', async () => {
    const dataDir = tempDataDir();
    const next = 'Changed-Admin-Pw-7f3e';
    const env = { ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_PLUGINS: '["storage-lmdb","data","http","rest","actions"]' };
    const first = spawnEngine(env);
    try {
      const { http } = await first.listening;
      const login = await action(http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
      assert.equal(login.errorCode, 0, login.errorMessage);
      const altered = await action(http!, { api: 'admin', action: 'alterAccount', authToken: login.authToken, params: { username: 'admin', currentPassword: 'ADMIN', password: next } });
      assert.equal(altered.errorCode, 0, altered.errorMessage);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    for (const file of filesUnder(dataDir)) {
      assert.ok(!readFileSync(file).includes(next), `${file} holds the new password in plain text`);
    }

    const second = spawnEngine(env);
    try {
      const { http } = await second.listening;
      const base = `${http}/engine/api/v1`;
      assert.equal((await call('GET', `${base}/table/main`, { auth: ['admin', next] })).status, 200);
      assert.equal((await call('GET', `${base}/table/main`, { auth: ['admin', 'ADMIN'] })).status, 401);
      const withNew = await action(http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: next } });
      assert.equal(withNew.errorCode, 0, withNew.errorMessage);
      const withOld = await action(http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
      assert.equal(withOld.errorCode, 12033);
    } finally {
      assert.equal(await second.stop(), 0);
    }
    assert.doesNotMatch(second.output(), /default password/);
    assert.ok(!second.output().includes(next), 'the password is not in the log');
  });
});
