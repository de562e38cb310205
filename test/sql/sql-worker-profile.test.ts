/**
 * BENCH_CPU_PROF_DIR runs the engine with `--cpu-prof --cpu-prof-name=…`: the SQL workers must
 * write a profile of their own beside the main thread's (they inherited the one name and wrote
 * over each other's file, so only the main thread's was left).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, tempDataDir } from '../helpers/server';
import { spawnEngine } from '../helpers/engine-process';
import { SQL_PLUGINS } from './sql-client';

describe('sql: CPU profiles of the SQL workers', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'sql-prof-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a profile per SQL worker beside the main thread\'s when --cpu-prof-name is set', async function () {
    const engine = spawnEngine({
      ENGINE_DATA_DIR: tempDataDir(), ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
      ENGINE_PLUGINS: JSON.stringify(SQL_PLUGINS),
      // every SELECT on a worker
      ENGINE_SQL_MAIN_SLICE_MS: '0',
    }, [], ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-name=engine.cpuprofile']);
    try {
      const { http } = await engine.listening;
      const session = await call('POST', `${http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      assert.equal(session.status, 200, session.text);
      const authToken = session.json.result.authToken as string;
      const ran = await call('POST', `${http}/api`, { auth: null, body: { api: 'db', action: 'getRecordsUsingSql', params: { sql: 'SELECT 6 * 7 AS answer' }, authToken } });
      assert.equal(ran.json.errorCode, 0, ran.text);
      assert.deepEqual(ran.json.result.data, [{ answer: 42 }]);
    } finally {
      assert.equal(await engine.stop('SIGTERM'), 0, engine.output().slice(-2000));
    }
    const files = readdirSync(dir).sort();
    assert.ok(files.includes('engine.cpuprofile'), files.join(', '));
    const workers = files.filter((file) => /^engine-sql-worker-\d+\.cpuprofile$/.test(file));
    assert.ok(workers.length >= 1, files.join(', '));
    // A worker's profile holds the runner's frames; the main thread's does not run SQLite.
    const urls = (file: string): string[] => (JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Array<{ callFrame: { url: string } }> }).nodes.map((node) => node.callFrame.url);
    assert.ok(workers.some((file) => urls(file).some((url) => url.endsWith('sql-runner.js'))), 'no worker profile shows sql-runner.js');
  });
});
