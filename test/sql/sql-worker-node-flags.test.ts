/**
 * The server runs with `--max-semi-space-size=8` (`npm start` and the bin's `#!` line, checked by
 * test/kernel/process). An SQL worker started with the process's Node options handed to it
 * explicitly (`new Worker(file, { execArgv })`, plugins/sql/worker-profile.ts) is refused by Node
 * when they hold a V8 option (ERR_WORKER_INVALID_EXEC_ARGV), so SQL that runs on a worker must be
 * tried with the flags the server really runs with, not only as `node dist/main.js`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, tempDataDir } from '../helpers/server';
import { spawnEngine } from '../helpers/engine-process';
import { SQL_PLUGINS } from './sql-client';

/** The Node flags of `npm start` (the same as the bin's, test/kernel/process). */
function startFlags(): string[] {
  const root = join(__dirname, '..', '..', '..');
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => word.startsWith('--'));
}

describe('sql: workers under the Node flags the server runs with', function () {
  this.timeout(120_000);

  it('runs SQL on a worker, a SELECT and a runSqlStatements INSERT, when the server runs with the flags of `npm start`', async () => {
    const flags = startFlags();
    assert.ok(flags.length > 0, 'npm start passes Node flags (the case this test is about)');
    const engine = spawnEngine({
      ENGINE_DATA_DIR: tempDataDir(), ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
      ENGINE_PLUGINS: JSON.stringify(SQL_PLUGINS),
      // every statement on a worker (none answered on the main thread)
      ENGINE_SQL_MAIN_SLICE_MS: '0',
    }, [], flags);
    try {
      const { http } = await engine.listening;
      const api = async (api: string, action: string, params: Record<string, unknown>, authToken?: string): Promise<Record<string, any>> => {
        const reply = await call('POST', `${http}/api`, { auth: null, body: { api, action, params, ...(authToken ? { authToken } : {}) } });
        assert.equal(reply.status, 200, reply.text);
        return reply.json as Record<string, any>;
      };
      const session = await api('admin', 'createSession', { username: 'admin', password: 'ADMIN' });
      assert.equal(session.errorCode, 0, JSON.stringify(session));
      const authToken = session.result.authToken as string;

      const selected = await api('db', 'getRecordsUsingSql', { sql: 'SELECT 6 * 7 AS answer' }, authToken);
      assert.equal(selected.errorCode, 0, JSON.stringify(selected));
      assert.deepEqual(selected.result.data, [{ answer: 42 }]);

      const ran = await api('db', 'runSqlStatements', {
        sqlStatements: ['CREATE TABLE flags_check (name VARCHAR(20))', "INSERT INTO flags_check (name) VALUES ('one')"],
      }, authToken);
      assert.equal(ran.errorCode, 0, JSON.stringify(ran));
      assert.deepEqual(ran.result.data.map((statement: { errorCode: number }) => statement.errorCode), [0, 0], JSON.stringify(ran.result.data));
      assert.equal(ran.result.committed, true);
    } finally {
      assert.equal(await engine.stop('SIGTERM'), 0, engine.output().slice(-2000));
    }
  });
});
