/**
 * Crash consistency: a child process writes (small concurrent inserts, 100-row batches and
 * message appends) and prints every id as soon as its promise resolves; the parent kills it with
 * SIGKILL mid-stream, reopens the data folder and checks that every acknowledged id is there.
 * SIGKILL keeps the operating system's page cache, so this passes without syncing too: that
 * writes are synced before they are acknowledged is checked by durability-sync.test.ts.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';

const CHILD = `
const { openLmdbStorage } = require(process.argv[2]);
(async () => {
  const store = await openLmdbStorage({ dataDir: process.argv[3], defaultDatabase: 'main' });
  await store.createTable('main', 'acks', [{ name: 'v', type: 'integer' }]);
  await store.messageLog.ensureTopic('dur/t');
  process.stdout.write('ready\\n');
  const message = (i) => ({ createTs: '2024-01-01T00:00:00.000', payload: { type: 'string', value: 'm' + i }, qos: 1,
    retain: false, contentType: null, correlationData: null, responseTopic: null, expirySeconds: null,
    userProperties: null, payloadFormat: null, publisher: null });
  let i = 0;
  const writer = async (kind) => {
    for (;;) {
      const n = i++;
      if (kind === 'small') {
        const ids = await store.insertValues('main', 'acks', { table: store.getTable('main', 'acks'), ids: [null], values: [[n]] });
        process.stdout.write('r ' + ids.join(' ') + '\\n');
      } else if (kind === 'batch') {
        const ids = [], values = []; for (let k = 0; k < 100; k++) { ids.push(null); values.push([n]); }
        const got = await store.insertValues('main', 'acks', { table: store.getTable('main', 'acks'), ids, values });
        process.stdout.write('r ' + got.join(' ') + '\\n');
      } else {
        const ids = await store.messageLog.append([{ topic: 'dur/t', message: message(n) }, { topic: 'dur/t', message: message(n) }]);
        process.stdout.write('m ' + ids.join(' ') + '\\n');
      }
    }
  };
  for (let w = 0; w < 20; w++) writer('small');
  writer('batch');
  for (let w = 0; w < 5; w++) writer('messages');
})();
`;

describe('lmdb storage: durability', function () {
  this.timeout(60000);

  it('every acknowledged write survives SIGKILL', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-durable-'));
    const script = path.join(dir, 'child.js');
    const dataDir = path.join(dir, 'data');
    fs.writeFileSync(script, CHILD);
    const modulePath = path.resolve(__dirname, '../../plugins/storage-lmdb/lmdb-storage.js');
    const child = spawn(process.execPath, [script, modulePath, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const records = new Set<number>();
    const messages = new Set<number>();
    let buffered = '';
    let acks = 0;
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          const [kind, ...rest] = line.split(' ');
          const target = kind === 'r' ? records : kind === 'm' ? messages : null;
          if (target === null) continue;
          for (const id of rest) target.add(Number(id));
          acks++;
          if (acks === 3000) child.kill('SIGKILL');
        }
      });
    });
    assert.ok(records.size > 1000, `only ${records.size} record acks`);
    assert.ok(messages.size > 100, `only ${messages.size} message acks`);
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      const ids = [...records];
      const got = store.getRecords('main', 'acks', ids);
      const missing = ids.filter((_, i) => got[i] === undefined);
      assert.deepEqual(missing, [], `${missing.length} acknowledged records lost`);
      const info = store.messageLog.getTopic('dur/t')!;
      const msgIds = [...messages];
      const msgs = store.getRecords('main', info.table, msgIds);
      assert.deepEqual(msgIds.filter((_, i) => msgs[i] === undefined), []);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
