/** The real program: `node dist/main.js` with settings from files and the environment. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { call, tempDataDir } from '../helpers/server';

const MAIN = join(__dirname, '..', '..', 'main.js');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Run { child: ChildProcess; output: () => string; exit: Promise<number | null> }

function run(env: NodeJS.ProcessEnv, args: string[] = []): Run {
  let output = '';
  const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH, ENGINE_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function waitFor(url: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await call('GET', url, { auth: null })).status === 200) return;
    } catch { /* not yet */ }
    if (Date.now() > until) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('main (the server process)', function () {
  this.timeout(60_000);

  for (const [what, env, name] of [
    ['a non-numeric port', { ENGINE_LISTENING_HTTP_PORT: 'abc' }, 'listening_http_port'],
    ['an unknown setting', { ENGINE_NOT_A_SETTING: '1' }, 'not_a_setting'],
    ['an unknown plugin', { ENGINE_PLUGINS: '["http","nope"]' }, 'nope'],
  ] as const) {
    it(`exits non-zero on ${what}, naming it`, async () => {
      const proc = run({ ...env, ENGINE_DATA_DIR: tempDataDir() });
      assert.notEqual(await proc.exit, 0);
      assert.match(proc.output(), new RegExp(name));
    });
  }

  it('serves HTTP and HTTPS on the configured ports and stops cleanly on SIGTERM', async () => {
    const [httpPort, httpsPort] = [await freePort(), await freePort()];
    const proc = run({ ENGINE_DATA_DIR: tempDataDir(), ENGINE_LISTENING_HTTP_PORT: String(httpPort), ENGINE_LISTENING_HTTPS_PORT: String(httpsPort), ENGINE_PLUGINS: '["storage-lmdb","http"]' });
    try {
      await waitFor(`http://127.0.0.1:${httpPort}/`);
      await waitFor(`https://127.0.0.1:${httpsPort}/`);
      assert.match(proc.output(), /default password/);
    } finally {
      proc.child.kill('SIGTERM');
    }
    assert.equal(await proc.exit, 0);
  });

  it('on SIGTERM finishes in-flight writes: every acknowledged record is there after a restart', async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const env = { ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: String(port), ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_PLUGINS: '["storage-lmdb","data","http","rest"]' };
    const base = `http://127.0.0.1:${port}/engine/api/v1`;
    const first = run(env);
    await waitFor(`http://127.0.0.1:${port}/`);
    assert.equal((await call('POST', `${base}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }] } })).status, 200);
    const acknowledged: number[] = [];
    const writes = Array.from({ length: 300 }, (_, n) => call('POST', `${base}/record/main/t`, { body: { n } })
      .then((reply) => { if (reply.status === 200) acknowledged.push(...(reply.json._ids as number[])); }, () => undefined));
    await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGTERM');
    await Promise.all(writes);
    assert.equal(await first.exit, 0);
    assert.ok(acknowledged.length > 0, 'some writes were acknowledged before the stop');
    const second = run(env);
    try {
      await waitFor(`http://127.0.0.1:${port}/`);
      for (const id of acknowledged) {
        assert.equal((await call('GET', `${base}/record/main/t/${id}`)).status, 200, `acknowledged record ${id} is missing`);
      }
    } finally {
      second.child.kill('SIGTERM');
      await second.exit;
    }
  });

  it('keeps accounts and a changed admin password across restarts, never storing the password', async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const env = { ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: String(port), ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_ADMIN_PASSWORD: 'Plain-Text-Secret-42', ENGINE_PLUGINS: '["storage-lmdb","http"]' };
    const first = run(env);
    await waitFor(`http://127.0.0.1:${port}/`);
    first.child.kill('SIGINT');
    assert.equal(await first.exit, 0);
    assert.doesNotMatch(first.output(), /default password/);
    for (const file of filesUnder(dataDir)) {
      assert.ok(!readFileSync(file).includes('Plain-Text-Secret-42'), `${file} holds the password in plain text`);
    }
    const second = run({ ...env, ENGINE_ADMIN_PASSWORD: 'ignored-now' });
    await waitFor(`http://127.0.0.1:${port}/`);
    second.child.kill('SIGTERM');
    assert.equal(await second.exit, 0);
    assert.doesNotMatch(second.output(), /default password/);
  });
});
