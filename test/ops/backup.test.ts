/**
 * Backups while serving (issue 20 part 2; docs/operations.md "Backups and restores"). A real
 * server takes a mixed load (REST inserts, `db` insertRecords actions, MQTT 5 QoS 1 publishes)
 * while `engine backup <folder>` (another process, beside it) and the admin action
 * `backupDatabase` copy its data folder. Each copy passes `engine check`; a second server started
 * on a copy (`engine --config <copy>/settings.json`) holds every write acknowledged before the
 * backup began and uses the copied TLS pair; the first server lost nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { call, tempDataDir } from '../helpers/server';
import { integrationTableName } from '../mqtt/session-helpers';
import { action, adminToken, assertIntegrity, runTool, startEngine, type RunningEngine } from './ops-process';

const TOPIC = 'backup/load';

interface Acknowledged {
  restIds: number[];
  actionIds: number[];
  messages: string[];
}

const snapshot = (a: Acknowledged): Acknowledged => ({ restIds: [...a.restIds], actionIds: [...a.actionIds], messages: [...a.messages] });

/** Runs the three writers until `stop()`; `acked` grows as writes are acknowledged. */
function mixedLoad(http: string, token: string, client: MqttClient): { acked: Acknowledged; atLeast(n: number): Promise<void>; stop(): Promise<void> } {
  const acked: Acknowledged = { restIds: [], actionIds: [], messages: [] };
  let running = true;
  let waiters: Array<() => void> = [];
  const notify = (): void => { for (const w of waiters) w(); };
  const rest = async (): Promise<void> => {
    for (let n = 0; running; n++) {
      const reply = await call('POST', `${http}/engine/api/v1/record/main/t`, { body: { n, source: 'rest' } });
      assert.equal(reply.status, 200, reply.text);
      acked.restIds.push(...(reply.json._ids as number[]));
      notify();
    }
  };
  const actions = async (): Promise<void> => {
    for (let n = 0; running; n++) {
      const reply = await action(http, { api: 'db', action: 'insertRecords', authToken: token, params: { tableName: 't', sourceData: [{ n, source: 'action' }] } });
      assert.equal(reply.errorCode, 0, reply.errorMessage);
      acked.actionIds.push(...(reply.result.ids as number[]));
      notify();
    }
  };
  const publishes = async (): Promise<void> => {
    for (let n = 0; running; n++) {
      const text = `m${n}`;
      await new Promise<void>((resolve, reject) => client.publish(TOPIC, text, { qos: 1 }, (error) => (error ? reject(error) : resolve())));
      acked.messages.push(text);
      notify();
    }
  };
  const all = Promise.all([rest(), actions(), publishes()]);
  return {
    acked,
    atLeast: (n) => new Promise<void>((resolve) => {
      const check = (): void => {
        if (acked.restIds.length >= n && acked.actionIds.length >= n && acked.messages.length >= n) {
          waiters = waiters.filter((w) => w !== check);
          resolve();
        }
      };
      waiters.push(check);
      check();
    }),
    async stop() {
      running = false;
      await all;
    },
  };
}

function connectMqtt(url: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { protocolVersion: 5, clientId: 'backup-load', username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

/** Asserts every acknowledged write is on the server at `http`. */
async function assertHolds(http: string, acked: Acknowledged, what: string): Promise<void> {
  const rest = `${http}/engine/api/v1`;
  // Every missing record is collected before failing: whether they are the newest ones (an older
  // snapshot) or scattered says where to look.
  const missing: string[] = [];
  for (const [ids, source] of [[acked.restIds, 'rest'], [acked.actionIds, 'action']] as const) {
    for (const id of ids) {
      const reply = await call('GET', `${rest}/record/main/t/${id}`);
      if (reply.status !== 200) missing.push(`${source} ${id} (${reply.status} ${reply.json?.errorCode ?? reply.text})`);
      else assert.equal(reply.json.source, source);
    }
  }
  if (missing.length > 0) {
    const there = await call('POST', `${rest}/query/main/t/by_n?top=1000000`, { body: { find: { n: { operator: '>=', value: 0 } } } });
    const ids = ((there.json?._records ?? []) as Array<{ _id: number }>).map((record) => record._id);
    assert.fail(`${what}: ${missing.length} acknowledged records missing: ${missing.slice(0, 10).join(', ')}; ${ids.length} records there, the highest id ${Math.max(...ids)}`);
  }
  const found = await call('POST', `${rest}/query/main/${integrationTableName(TOPIC)}/create_ts_idx?top=1000000`, {
    body: { find: { create_ts: { operator: '>=', value: '2000-01-01T00:00:00.000' } } },
  });
  assert.equal(found.status, 200, found.text);
  // A binary payload reads back as hex (default_binary_format); ours are `m<n>`, never hex digits only.
  const stored = new Set((found.json._records as Array<{ source_payload: string }>).map((record) => Buffer.from(record.source_payload, 'hex').toString('latin1')));
  for (const text of acked.messages) assert.ok(stored.has(text), `${what}: acknowledged message ${text} is stored`);
}

describe('ops: backups while serving (real processes)', function () {
  this.timeout(180_000);
  const started: RunningEngine[] = [];
  const clients: MqttClient[] = [];
  const folders: string[] = [];

  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const s of started) process.stderr.write(`server output:\n${s.proc.output().slice(-3000)}\n`);
  });

  after(async () => {
    for (const client of clients) client.end(true);
    for (const s of started) await s.proc.stop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it('engine backup and backupDatabase under REST, action and MQTT QoS 1 load: the copies pass engine check, a server started on one holds every write acknowledged before, the first lost nothing', async () => {
    const dataDir = tempDataDir();
    folders.push(dataDir);
    const first = await startEngine({ ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTPS_PORT: '0' });
    started.push(first);
    const rest = `${first.http}/engine/api/v1`;
    assert.equal((await call('POST', `${rest}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }, { name: 'source', type: 'varchar', length: 16 }] } })).status, 200);
    assert.equal((await call('POST', `${rest}/index/main/t/by_n`, { body: { fields: [{ name: 'n' }] } })).status, 200);
    const token = await adminToken(first.http);
    const client = await connectMqtt(first.mqttUrl);
    clients.push(client);

    const load = mixedLoad(first.http, token, client);
    await load.atLeast(30);

    // `engine backup`, another process, while the load goes on.
    const root = mkdtempSync(join(tmpdir(), 'engine-backups-'));
    folders.push(root);
    const cliCopy = join(root, 'cli');
    const beforeCli = snapshot(load.acked);
    const run = await runTool(['backup', cliCopy], { ENGINE_DATA_DIR: dataDir });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /backup: .* of at most .*%\)/, 'progress is reported');
    const result = JSON.parse(run.stdout) as { folder: string; bytes: number; files: string[] };
    assert.equal(result.folder, cliCopy);
    assert.ok(result.bytes > 0);
    for (const file of ['data.mdb', 'settings.json', 'tls/server-cert.pem', 'tls/server-key.pem']) {
      assert.ok(existsSync(join(cliCopy, file)), `the copy holds ${file}`);
      assert.equal(statSync(join(cliCopy, file)).mode & 0o077, 0, `${file} is the owner's only`);
    }
    await load.atLeast(beforeCli.messages.length + 20);

    // The admin action, while the load goes on.
    const actionCopy = join(root, 'action');
    const beforeAction = snapshot(load.acked);
    const backedUp = await action(first.http, { api: 'admin', action: 'backupDatabase', authToken: token, params: { folder: actionCopy } });
    assert.equal(backedUp.errorCode, 0, backedUp.errorMessage);
    assert.equal(backedUp.result.folder, actionCopy);
    // A folder that already holds a store is refused.
    const again = await action(first.http, { api: 'admin', action: 'backupDatabase', authToken: token, params: { folder: actionCopy } });
    assert.equal(again.errorCode, 12012, again.errorMessage);
    // So is any folder that is not empty: a backup never writes over a file.
    const occupied = join(root, 'occupied');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'settings.json'), 'keep me');
    const over = await action(first.http, { api: 'admin', action: 'backupDatabase', authToken: token, params: { folder: occupied } });
    assert.equal(over.errorCode, 12012, over.errorMessage);
    assert.equal(readFileSync(join(occupied, 'settings.json'), 'utf8'), 'keep me');
    assert.deepEqual(readdirSync(occupied), ['settings.json']);
    await load.stop();
    const all = snapshot(load.acked);

    // `engine check` refuses the folder of a running server (it would write to it).
    const refused = await runTool(['check', dataDir]);
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /is open in process \d+ \(a running server\?\)/);

    // Each copy is sound.
    for (const copy of [cliCopy, actionCopy]) {
      const report = await assertIntegrity(copy);
      assert.ok(Number(report.records) >= 2 * 30 && Number(report.indexEntries) === Number(report.records), JSON.stringify(report));
    }

    // A server started on each copy holds what was acknowledged before its backup began.
    const settings = JSON.parse(readFileSync(join(cliCopy, 'settings.json'), 'utf8')) as { data_dir: string };
    assert.equal(settings.data_dir, cliCopy);
    for (const [copy, before] of [[cliCopy, beforeCli], [actionCopy, beforeAction]] as const) {
      const restored = await startEngine({ ENGINE_LISTENING_HTTPS_PORT: '0' }, ['--config', join(copy, 'settings.json')]);
      started.push(restored);
      assert.ok(!restored.proc.logs().some((line) => line.msg === 'generated a self-signed TLS certificate'), 'the copied TLS pair is used');
      await assertHolds(restored.http, before, `server on ${copy}`);
      assert.equal(await restored.proc.stop(), 0);
    }

    // The first server lost nothing.
    await assertHolds(first.http, all, 'first server');
  });
});
