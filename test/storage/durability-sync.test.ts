/**
 * Nothing is acknowledged before it is durable, checked where it can fail: the real server
 * process runs under `strace -f`, a client makes acknowledged writes one at a time through REST
 * and the action interface, and the trace must show every byte written to LMDB's data file
 * synced (fdatasync/fsync, or written through an O_DSYNC descriptor) before the response that
 * acknowledges it was written to the socket (test/helpers/sync-trace.ts has the rules).
 *
 * The same run against a server started with the test-only `unsafe_no_sync` storage option must
 * fail that check: proof that the check can catch a server that answers before syncing, which
 * SIGKILL tests cannot (the page cache survives a killed process).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, type HttpResult } from '../helpers/server';
import { checkSyncTrace, type SyncReport } from '../helpers/sync-trace';
import { FREE_MQTT_PORTS } from '../helpers/engine-process';

const MAIN = join(__dirname, '..', '..', 'main.js');
const TRACED_CALLS = 'openat,close,write,writev,pwrite64,pwritev,pwritev2,fdatasync,fsync,msync,sendto,sendmsg';

interface TracedServer {
  url: string;
  /** Stops the server (SIGTERM) and returns the trace. */
  stop(): Promise<string>;
}

/** `node dist/main.js` under strace, on a fresh data folder and a free port. */
function startTracedServer(dir: string, options: { unsafeNoSync: boolean }): Promise<TracedServer> {
  const traceFile = join(dir, 'trace.txt');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ENGINE_DATA_DIR: join(dir, 'data'),
    ENGINE_LISTENING_HTTP_PORT: '0',
    ENGINE_LISTENING_HTTPS_PORT: 'off',
    // Free ports for the broker: the default 1883 may be taken on the machine.
    ...FREE_MQTT_PORTS,
    ENGINE_LOG_LEVEL: 'info',
    ...(options.unsafeNoSync ? { NODE_ENV: 'test', ENGINE_PLUGIN_OPTIONS: '{"storage-lmdb":{"unsafe_no_sync":true}}' } : {}),
  };
  const strace = spawn('strace', ['-f', '-qq', '-s', '16', '-e', `trace=${TRACED_CALLS}`, '-o', traceFile, process.execPath, MAIN], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => strace.on('exit', (code) => resolve(code)));
  let output = '';
  return new Promise((resolve, reject) => {
    strace.on('error', (error) => reject(new Error(`cannot run strace (on Debian: apt-get install strace): ${error.message}`)));
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
    strace.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    strace.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((text) => text.includes('"msg":"listening"'));
      if (!line) return;
      const { http, pid } = JSON.parse(line) as { http: string; pid: number };
      resolve({
        url: http,
        async stop() {
          process.kill(pid, 'SIGTERM');
          await exited;
          return readFileSync(traceFile, 'utf8');
        },
      });
    });
  });
}

interface Step {
  label: string;
  /** An acknowledged write: its commit must show in the trace before its response. */
  write: boolean;
  result: HttpResult;
}

/** Acknowledged writes through REST and actions, one at a time; returns them in order. */
async function writeThroughBothProtocols(url: string): Promise<Step[]> {
  const steps: Step[] = [];
  const rest = `${url}/engine/api/v1`;
  const step = async (label: string, write: boolean, request: Promise<HttpResult>): Promise<HttpResult> => {
    const result = await request;
    assert.equal(result.status, 200, `${label}: ${result.text}`);
    if (result.json && typeof result.json.errorCode === 'number') assert.equal(result.json.errorCode, 0, `${label}: ${result.text}`);
    steps.push({ label, write, result });
    return result;
  };
  const action = (label: string, write: boolean, body: Record<string, unknown>) =>
    step(label, write, call('POST', `${url}/api`, { auth: null, body }));

  await step('create table', true, call('POST', `${rest}/table/main/acks`, { body: { fields: [{ name: 'v', type: 'integer' }] } }));
  const session = await action('createSession', false, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
  const authToken = session.json.authToken as string;
  for (let round = 0; round < 3; round++) {
    const created = await step('REST create', true, call('POST', `${rest}/record/main/acks`, { body: { v: round } }));
    const id = created.json._ids[0] as number;
    await step('REST create array', true, call('POST', `${rest}/record/main/acks`, { body: [{ v: round }, { v: round + 1 }] }));
    await step('REST replace', true, call('PUT', `${rest}/record/main/acks/${id}`, { body: { v: round + 10 } }));
    await step('REST patch', true, call('PATCH', `${rest}/record/main/acks/${id}`, { body: { v: round + 20 } }));
    await step('REST delete', true, call('DELETE', `${rest}/record/main/acks/${id}`));
    const inserted = await action('insertRecords', true, { action: 'insertRecords', authToken, params: { tableName: 'acks', sourceData: [{ v: round }] } });
    const actionId = inserted.json.result.ids[0] as number;
    await action('updateRecords', true, { action: 'updateRecords', authToken, params: { tableName: 'acks', sourceData: [{ id: actionId, v: round + 30 }] } });
    await action('deleteRecords', true, { action: 'deleteRecords', authToken, params: { tableName: 'acks', ids: [actionId] } });
    const transaction = await action('createTransaction', false, { action: 'createTransaction', authToken });
    const transactionId = transaction.json.result.transactionId as string;
    await action('insertRecords in a transaction', false, { action: 'insertRecords', authToken, params: { tableName: 'acks', sourceData: [{ v: round }], transactionId } });
    await action('commitTransaction', true, { action: 'commitTransaction', authToken, params: { transactionId } });
  }
  return steps;
}

/** Runs the writes against a traced server and pairs each step with its traced response. */
async function tracedRun(options: { unsafeNoSync: boolean }): Promise<{ steps: Step[]; report: SyncReport }> {
  const dir = mkdtempSync(join(tmpdir(), 'engine-sync-'));
  try {
    const server = await startTracedServer(dir, options);
    const written = await writeThroughBothProtocols(server.url).then((steps) => ({ steps }), (error: unknown) => ({ error }));
    const trace = await server.stop();
    if ('error' in written) throw written.error;
    const { steps } = written;
    const report = checkSyncTrace(trace);
    assert.ok(report.dataFiles > 0, 'the trace shows LMDB opening data.mdb');
    assert.equal(report.responses.length, steps.length, 'one traced response per request');
    report.responses.forEach((response, i) => assert.equal(response.status, steps[i].result.status, steps[i].label));
    return { steps, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('durability: nothing is acknowledged before it is synced (strace)', function () {
  this.timeout(120_000);

  it('syncs every acknowledged write, through REST and actions, before answering it', async function () {
    const { steps, report } = await tracedRun({ unsafeNoSync: false });
    steps.forEach((step, i) => {
      const response = report.responses[i];
      if (step.write) assert.ok(response.dataWrites > 0, `${step.label}: its commit shows in the trace before its response`);
      assert.equal(response.unsyncedWrites, 0, `${step.label}: answered with ${response.unsyncedWrites} writes to data.mdb not yet synced`);
    });
  });

  it('catches a server that answers before syncing (unsafe_no_sync)', async function () {
    const { steps, report } = await tracedRun({ unsafeNoSync: true });
    steps.forEach((step, i) => {
      const response = report.responses[i];
      if (!step.write) return;
      assert.ok(response.dataWrites > 0, `${step.label}: its commit shows in the trace`);
      assert.ok(response.unsyncedWrites > 0, `${step.label}: the check sees its unsynced commit`);
    });
  });
});

describe('durability: the sync-trace check', function () {
  const open = '100  openat(AT_FDCWD, "/d/data.mdb", O_RDWR|O_CREAT, 0664) = 5\n'
    + '100  openat(AT_FDCWD, "/d/data.mdb", O_WRONLY|O_DSYNC|O_CLOEXEC) = 6\n';
  const response = '100  writev(9, [{iov_base="HTTP/1.1 200 OK\\r"..., iov_len=100}], 1) = 100\n';

  it('passes pages synced before the answer, meta written through O_DSYNC', function () {
    const trace = `${open}101  writev(5, [{iov_base="\\1"..., iov_len=4096}], 1) = 4096\n101  fdatasync(5) = 0\n`
      + `101  pwrite64(6, "\\0"..., 128, 40) = 128\n${response}`;
    assert.deepEqual(checkSyncTrace(trace).responses, [{ status: 200, dataWrites: 2, unsyncedWrites: 0 }]);
  });

  it('fails pages never synced, and a sync entered before the write returned', function () {
    const unsynced = `${open}101  pwrite64(5, "\\1"..., 4096, 8192) = 4096\n101  pwrite64(5, "\\0"..., 128, 40) = 128\n${response}`;
    assert.deepEqual(checkSyncTrace(unsynced).responses, [{ status: 200, dataWrites: 2, unsyncedWrites: 2 }]);
    const early = `${open}102  fdatasync(5 <unfinished ...>\n101  pwrite64(5, "\\1"..., 4096, 8192) = 4096\n102  <... fdatasync resumed>) = 0\n${response}`;
    assert.equal(checkSyncTrace(early).responses[0].unsyncedWrites, 1);
  });

  it('counts a sync that returns after the answer began as too late', function () {
    const late = `${open}101  pwrite64(5, "\\1"..., 4096, 8192) = 4096\n102  fdatasync(5 <unfinished ...>\n`
      + `100  writev(9, [{iov_base="HTTP/1.1 200 OK\\r"..., iov_len=100}], 1 <unfinished ...>\n102  <... fdatasync resumed>) = 0\n100  <... writev resumed>) = 100\n`;
    assert.equal(checkSyncTrace(late).responses[0].unsyncedWrites, 1);
  });
});
