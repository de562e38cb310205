/**
 * A full disk is an error, not a corruption (issue 20 part 3; docs/operations.md "A full disk and
 * the log's size"). The server runs as a real process with its data folder on a tmpfs made for the
 * test (`mount -t tmpfs -o size=…`, as root); a ballast file takes the rest of the space. Filled
 * through REST, the actions interface and MQTT: every refused write has the stable error (REST 507
 * with errorCode 12050, action errorCode 12050, MQTT 5 PUBACK 0x97, MQTT 3.1.1 disconnect) and never
 * a 500; reads go on; the full state is logged once, not per write; once the ballast is removed,
 * writes work again at once; after a stop the folder passes `engine check` and every acknowledged
 * write is there after a restart.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { LmdbEnvironment } from '../../plugins/storage-lmdb/environment';
import { call } from '../helpers/server';
import { integrationTableName } from '../mqtt/session-helpers';
import { action, adminToken, assertIntegrity, startEngine, type RunningEngine } from './ops-process';

const TMPFS_SIZE = '24m';
const VALUE = 'x'.repeat(16 * 1024);
const PAYLOAD = Buffer.alloc(16 * 1024, 0x61);
/** Enough writes to fill what LMDB can still reuse inside its file once the device is full. */
const MAX_FILL_WRITES = 2000;

/** The server's free-space reserve in this test (storage_min_free_bytes). */
const RESERVE = 4 << 20;
/** What the ballast leaves free: under the reserve, so the store refuses new data. */
const LEFT_FREE = 2 << 20;

function freeBytes(path: string): number {
  const stats = statfsSync(path);
  return stats.bavail * stats.bsize;
}

/** Takes the filesystem's free space down to LEFT_FREE. */
function fillWithBallast(file: string, mountPoint: string): void {
  const fd = openSync(file, 'w');
  try {
    const chunk = Buffer.alloc(1 << 20, 1);
    while (freeBytes(mountPoint) - chunk.length >= LEFT_FREE) writeSync(fd, chunk);
    const rest = freeBytes(mountPoint) - LEFT_FREE;
    if (rest > 0) writeSync(fd, chunk.subarray(0, rest));
  } finally {
    closeSync(fd);
  }
}

/** Writes `file` until the device has not one byte left (ENOSPC at 512 B). */
function fillDevice(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

interface PublishOutcome { ok: boolean; reasonCode?: number; closed?: boolean }

/** One QoS 1 PUBLISH: its PUBACK's reason code, or the connection's close. */
function publishQos1(client: MqttClient, topic: string, payload: Buffer): Promise<PublishOutcome> {
  return new Promise((resolve) => {
    const onClose = (): void => resolve({ ok: false, closed: true });
    client.once('close', onClose);
    client.publish(topic, payload, { qos: 1 }, (error) => {
      client.off('close', onClose);
      if (!error) return resolve({ ok: true, reasonCode: 0 });
      const code = (error as { code?: unknown }).code;
      resolve(typeof code === 'number' ? { ok: false, reasonCode: code } : { ok: false, closed: true });
    });
  });
}

function connectMqtt(url: string, protocolVersion: 4 | 5, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { protocolVersion, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0, clean: true });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

const fullLines = (running: RunningEngine): number => running.proc.logs().filter((line) => String(line.msg).startsWith('storage: FULL')).length;
const resumeLines = (running: RunningEngine): number => running.proc.logs().filter((line) => String(line.msg).startsWith('storage: a commit succeeded again')).length;

describe('ops: a full disk is an error, not a corruption (tmpfs, real process)', function () {
  this.timeout(180_000);
  let mountPoint: string | undefined;
  let mounted = false;
  let running: RunningEngine | undefined;
  const clients: MqttClient[] = [];

  before(function () {
    mountPoint = mkdtempSync(join(tmpdir(), 'engine-full-disk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'tmpfs', mountPoint], { stdio: 'pipe' });
    } catch (error) {
      throw new Error(`this test mounts a small tmpfs and needs root (mount -t tmpfs): ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
    }
    mounted = true;
  });

  afterEach(function () {
    // The server's own words, when it failed.
    if (this.currentTest?.state === 'failed' && running) process.stderr.write(`server output (last 4000 characters):\n${running.proc.output().slice(-4000)}\n`);
  });

  after(async function () {
    for (const client of clients) client.end(true);
    if (running) await running.proc.stop();
    if (mountPoint && mounted) {
      try {
        execFileSync('umount', [mountPoint], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
      }
    }
    if (mountPoint) rmSync(mountPoint, { recursive: true, force: true });
  });

  it('refuses writes with the stable error on REST, actions and MQTT, keeps reads, logs once, resumes when space returns, and loses nothing', async () => {
    const dataDir = join(mountPoint!, 'data');
    const ballast = join(mountPoint!, 'ballast');
    running = await startEngine({ ENGINE_DATA_DIR: dataDir, ENGINE_STORAGE_MIN_FREE_BYTES: String(RESERVE) });
    const { http, mqttUrl } = running;
    const rest = `${http}/engine/api/v1`;
    const token = await adminToken(http);
    assert.equal((await call('POST', `${rest}/table/main/t`, { body: { fields: [{ name: 's', type: 'lvarchar' }] } })).status, 200);

    const acknowledgedIds: number[] = [];
    const acknowledgedMessages: string[] = [];
    const restInsert = async (): Promise<{ status: number; errorCode?: number }> => {
      const reply = await call('POST', `${rest}/record/main/t`, { body: { s: VALUE } });
      if (reply.status === 200) acknowledgedIds.push(...(reply.json._ids as number[]));
      return { status: reply.status, errorCode: reply.json?.errorCode };
    };
    const actionInsert = async (): Promise<number> => {
      const reply = await action(http, { api: 'db', action: 'insertRecords', authToken: token, params: { tableName: 't', sourceData: [{ s: VALUE }] } });
      if (reply.errorCode === 0) acknowledgedIds.push(...(reply.result.ids as number[]));
      return reply.errorCode as number;
    };
    let published = 0;
    const v5 = await connectMqtt(mqttUrl, 5, 'full-disk-v5');
    clients.push(v5);
    const mqttPublish = async (client: MqttClient): Promise<PublishOutcome> => {
      const text = `m${published++}`;
      const outcome = await publishQos1(client, 'full/disk', Buffer.concat([Buffer.from(`${text}:`), PAYLOAD]));
      if (outcome.ok) acknowledgedMessages.push(text);
      return outcome;
    };

    // Stored before the disk fills.
    for (let i = 0; i < 5; i++) assert.equal((await restInsert()).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await mqttPublish(v5)).ok, true);
    const before = [...acknowledgedIds];

    fillWithBallast(ballast, mountPoint!);
    assert.ok(freeBytes(mountPoint!) < RESERVE);

    // Fill what is left through REST: every refusal is 507 / 12050, never a 500.
    let restRefused: { status: number; errorCode?: number } | undefined;
    for (let i = 0; i < MAX_FILL_WRITES && !restRefused; i++) {
      const outcome = await restInsert();
      if (outcome.status !== 200) restRefused = outcome;
    }
    assert.deepEqual(restRefused, { status: 507, errorCode: 12050 });
    // ... and through MQTT 5: PUBACK 0x97 Quota exceeded.
    let mqttRefused: PublishOutcome | undefined;
    for (let i = 0; i < MAX_FILL_WRITES && !mqttRefused; i++) {
      const outcome = await mqttPublish(v5);
      if (!outcome.ok) mqttRefused = outcome;
    }
    assert.deepEqual(mqttRefused, { ok: false, reasonCode: 0x97 });

    // Full: every protocol answers its stable error, and the full state is not logged again.
    // The line comes through the process's stdout pipe: awaited, not read at once (a loaded
    // machine delivered it after the refusals were answered).
    await running.proc.logged((line) => String(line.msg).startsWith('storage: FULL'));
    const loggedFull = fullLines(running);
    assert.ok(loggedFull >= 1, 'the full state is logged');
    for (let i = 0; i < 10; i++) {
      assert.deepEqual(await restInsert(), { status: 507, errorCode: 12050 });
      assert.equal(await actionInsert(), 12050);
      assert.deepEqual(await mqttPublish(v5), { ok: false, reasonCode: 0x97 });
    }
    assert.equal(fullLines(running), loggedFull, 'thirty refused writes log nothing more');
    assert.deepEqual(running.proc.logs().filter((line) => Number(line.level) >= 50).map((line) => line.msg), [], 'nothing is logged as an error');
    // A 3.1.1 publisher cannot be told: it is disconnected (and will send again).
    const v311 = await connectMqtt(mqttUrl, 4, 'full-disk-v311');
    clients.push(v311);
    assert.deepEqual(await mqttPublish(v311), { ok: false, closed: true });
    assert.ok(!v5.disconnected, 'the MQTT 5 publisher stays connected');

    // Reads go on.
    for (const id of before) {
      const reply = await call('GET', `${rest}/record/main/t/${id}`);
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.json.s, VALUE);
    }
    const read = await action(http, { api: 'db', action: 'getRecordsByIds', authToken: token, params: { tableName: 't', ids: before } });
    assert.equal(read.errorCode, 0, read.errorMessage);

    // Space returns: writes work again at once, on every protocol, and that is logged.
    unlinkSync(ballast);
    assert.equal((await restInsert()).status, 200);
    assert.equal(await actionInsert(), 0);
    assert.deepEqual(await mqttPublish(v5), { ok: true, reasonCode: 0 });
    assert.ok(resumeLines(running) >= 1, 'writes resuming is logged');

    v5.end(true);
    assert.equal(await running.proc.stop(), 0);
    running = undefined;
    await assertIntegrity(dataDir);

    // Nothing acknowledged is lost, nothing stored before is damaged.
    running = await startEngine({ ENGINE_DATA_DIR: dataDir, ENGINE_STORAGE_MIN_FREE_BYTES: String(RESERVE) });
    const again = `${running.http}/engine/api/v1`;
    for (const id of acknowledgedIds) {
      const reply = await call('GET', `${again}/record/main/t/${id}`);
      assert.equal(reply.status, 200, `acknowledged record ${id}: ${reply.text}`);
      assert.equal(reply.json.s, VALUE);
    }
    const table = integrationTableName('full/disk');
    const found = await call('POST', `${again}/query/main/${table}/create_ts_idx?top=1000000`, {
      body: { find: { create_ts: { operator: '>=', value: '2000-01-01T00:00:00.000' } } },
    });
    assert.equal(found.status, 200, found.text);
    // A binary payload reads back as hex (default_binary_format).
    const stored = new Set((found.json._records as Array<{ source_payload: string }>)
      .map((record) => /^m\d+:/.exec(Buffer.from(record.source_payload, 'hex').toString('latin1'))?.[0]));
    for (const text of acknowledgedMessages) assert.ok(stored.has(`${text}:`), `acknowledged message ${text} is stored`);
    // The next case starts its own server: this one is stopped (else it outlives the suite).
    assert.equal(await running.proc.stop(), 0);
    running = undefined;
  });

  it('with the reserve off, a device that really fills (ENOSPC): small writes get the same stable errors, the server survives, and resumes', async () => {
    const dataDir = join(mountPoint!, 'data-no-reserve');
    const ballast = join(mountPoint!, 'ballast-no-reserve');
    running = await startEngine({ ENGINE_DATA_DIR: dataDir, ENGINE_STORAGE_MIN_FREE_BYTES: '0' });
    const { http, mqttUrl } = running;
    const rest = `${http}/engine/api/v1`;
    assert.equal((await call('POST', `${rest}/table/main/small`, { body: { fields: [{ name: 's', type: 'varchar', length: 100 }] } })).status, 200);
    const acknowledged: number[] = [];
    const insert = async (): Promise<number> => {
      const reply = await call('POST', `${rest}/record/main/small`, { body: { s: 'a small value' } });
      if (reply.status === 200) acknowledged.push(...(reply.json._ids as number[]));
      else assert.deepEqual({ status: reply.status, errorCode: reply.json?.errorCode }, { status: 507, errorCode: 12050 });
      return reply.status;
    };
    for (let i = 0; i < 5; i++) assert.equal(await insert(), 200);
    const client = await connectMqtt(mqttUrl, 5, 'full-disk-no-reserve');
    clients.push(client);

    // Every byte taken: LMDB meets ENOSPC (lmdb-js may say EIO while the device is full).
    const fd = openSync(ballast, 'w');
    try {
      for (const size of [1 << 20, 1 << 12, 1 << 9]) {
        const chunk = Buffer.alloc(size, 1);
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw error;
          }
        }
      }
    } finally {
      closeSync(fd);
    }
    let refused = false;
    for (let i = 0; i < MAX_FILL_WRITES && !refused; i++) refused = (await insert()) === 507;
    assert.ok(refused, 'REST is refused with 507 once the device is full');
    let mqttRefused: PublishOutcome | undefined;
    for (let i = 0; i < MAX_FILL_WRITES && !mqttRefused; i++) {
      const outcome = await publishQos1(client, 'full/small', Buffer.from('small'));
      if (!outcome.ok) mqttRefused = outcome;
    }
    assert.deepEqual(mqttRefused, { ok: false, reasonCode: 0x97 });
    assert.equal(fullLines(running) >= 1, true);
    for (const id of acknowledged) assert.equal((await call('GET', `${rest}/record/main/small/${id}`)).status, 200, 'reads go on');

    unlinkSync(ballast);
    assert.equal(await insert(), 200, 'writes resume once space returns');
    assert.deepEqual(await publishQos1(client, 'full/small', Buffer.from('after')), { ok: true, reasonCode: 0 });
    client.end(true);
    assert.equal(await running.proc.stop(), 0);
    running = undefined;
    await assertIntegrity(dataDir);
  });

  // lmdb-js's close waits for the sync of the newest commit, and a failed commit's never comes:
  // a store whose last commit failed must still close (else the stop ends at shutdown_timeout_seconds, exit 1).
  it('a server stopped while its device is full (its last commit failed with ENOSPC) closes its store and exits 0', async () => {
    const dataDir = join(mountPoint!, 'data-stop-full');
    const ballast = join(mountPoint!, 'ballast-stop-full');
    running = await startEngine({ ENGINE_DATA_DIR: dataDir, ENGINE_STORAGE_MIN_FREE_BYTES: '0' });
    const rest = `${running.http}/engine/api/v1`;
    assert.equal((await call('POST', `${rest}/table/main/small`, { body: { fields: [{ name: 's', type: 'varchar', length: 100 }] } })).status, 200);
    const acknowledged: number[] = [];
    const insert = async (): Promise<number> => {
      const reply = await call('POST', `${rest}/record/main/small`, { body: { s: 'a small value' } });
      if (reply.status === 200) acknowledged.push(...(reply.json._ids as number[]));
      else assert.deepEqual({ status: reply.status, errorCode: reply.json?.errorCode }, { status: 507, errorCode: 12050 });
      return reply.status;
    };
    for (let i = 0; i < 5; i++) assert.equal(await insert(), 200);
    fillDevice(ballast);
    let refused = false;
    for (let i = 0; i < MAX_FILL_WRITES && !refused; i++) refused = (await insert()) === 507;
    assert.ok(refused, 'REST is refused with 507 once the device is full');

    // Stopped while still full: the drain closes the store and the process exits 0.
    assert.equal(await running.proc.stop(), 0, 'the stop was not cut by shutdown_timeout_seconds');
    running = undefined;
    unlinkSync(ballast);
    await assertIntegrity(dataDir);
    running = await startEngine({ ENGINE_DATA_DIR: dataDir, ENGINE_STORAGE_MIN_FREE_BYTES: '0' });
    for (const id of acknowledged) assert.equal((await call('GET', `${running.http}/engine/api/v1/record/main/small/${id}`)).status, 200, `acknowledged record ${id}`);
    assert.equal(await running.proc.stop(), 0);
    running = undefined;
  });

  it('a store whose last commit failed with ENOSPC still closes, and the failed write is refused, not left waiting', async () => {
    const dataDir = join(mountPoint!, 'data-env-close');
    const ballast = join(mountPoint!, 'ballast-env-close');
    const env = new LmdbEnvironment(dataDir);
    const db = env.openInternal('x:close-test');
    await env.write(() => { void db.put('before', 'stored'); });
    fillDevice(ballast);
    try {
      // Each value needs new pages: with no byte left on the device its commit fails.
      const big = 'y'.repeat(256 * 1024);
      await assert.rejects(env.write(() => { void db.put('too-big', big); }), /Commit failed|space/);
      // The mocha timeout bounds the close: lmdb-js would wait for the failed commit's sync.
      await env.close();
    } finally {
      unlinkSync(ballast);
    }
    const again = new LmdbEnvironment(dataDir);
    try {
      assert.equal(again.openInternal('x:close-test').get('before'), 'stored');
    } finally {
      await again.close();
    }
  });
});
