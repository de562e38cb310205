/**
 * The message log on LMDB at scale: 100,000 topics, each with one message, in one environment
 * (a table per topic used to stop at about 4,095 with MDB_DBS_FULL), read back through the
 * storage port and the message log port, before and after a reopen.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MessageInput, StoragePort } from '../../kernel/storage/storage-port';
import type { LogAppend } from '../../kernel/storage/message-log-port';
import { open } from 'lmdb';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { LOG_DB, LOG_INDEX_DB, type LmdbMessageLog } from '../../plugins/storage-lmdb/message-log';
import { readAll, rowOf } from '../../kernel/storage/stored-values';

const TOPICS = 100_000;
const BATCH = 10_000;

function message(i: number): MessageInput {
  return {
    createTs: '2024-01-01T00:00:00.000', payload: { type: 'json', value: JSON.stringify({ i }) }, qos: i % 3, retain: false,
    contentType: null, correlationData: null, responseTopic: null, expirySeconds: null, userProperties: null,
    payloadFormat: null, publisher: 'scale',
  };
}

const topicOf = (i: number): string => `site/${i % 97}/device-${i}/temp`;

describe('lmdb storage: the message log at 100,000 topics', function () {
  this.timeout(60000);
  let dir: string;
  let store: StoragePort;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-log-'));
    store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
  });

  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function check(): void {
    const log = store.messageLog;
    assert.equal(log.lastSequence(), TOPICS);
    assert.equal(log.listTopics().length, TOPICS);
    const tables = store.listTables('main');
    assert.equal(tables.length, TOPICS);
    for (const i of [0, 1, 4095, 4096, 50_000, TOPICS - 1]) {
      const topic = topicOf(i);
      const info = log.getTopic(topic)!;
      assert.ok(info, topic);
      assert.ok(tables.includes(info.table));
      assert.equal(store.countRecords('main', info.table), 1);
      const [record] = readAll(store.readRecords('main', info.table, {}));
      assert.equal(record.id, i + 1, 'the message id is its sequence');
      const row = rowOf(store.getTable('main', info.table), record.id, record.values);
      assert.deepEqual(row.source_payload, { type: 'json', value: JSON.stringify({ i }) });
      assert.equal(row.mqtt_qos, i % 3);
      assert.deepEqual(store.getRecords('main', info.table, [i + 1, i + 2])[1], undefined);
      assert.deepEqual(log.readTopic(topic, { limit: 5 }).map((m) => m.sequence), [i + 1]);
      assert.deepEqual(readAll(store.readRecords('main', info.table, { limit: 5 })).map((r) => r.id), [i + 1]);
    }
    const page = log.readFrom(4090, 10);
    assert.deepEqual(page.map((m) => m.sequence), Array.from({ length: 10 }, (_, k) => 4091 + k));
    assert.deepEqual(page.map((m) => m.topic), Array.from({ length: 10 }, (_, k) => topicOf(4090 + k)));
  }

  it('appends one message to each of 100,000 topics in batches, and reads them back', async () => {
    for (let from = 0; from < TOPICS; from += BATCH) {
      const batch: LogAppend[] = [];
      for (let i = from; i < from + BATCH; i++) batch.push({ topic: topicOf(i), message: message(i) });
      const seqs = await store.messageLog.append(batch);
      assert.equal(seqs[0], from + 1);
      assert.equal(seqs[BATCH - 1], from + BATCH);
    }
    check();
  });

  it('keeps them across a reopen, and still takes new topics', async () => {
    await store.close();
    store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    check();
    assert.deepEqual(await store.messageLog.append([{ topic: 'one/more', message: message(TOPICS) }]), [TOPICS + 1]);
    assert.equal(store.messageLog.listTopics().length, TOPICS + 1);
  });

  it('keeps a topic longer than an LMDB key (up to 65,500 bytes) across a reopen', async () => {
    const long = `very/long/${'é'.repeat(3000)}`;
    const [seq] = await store.messageLog.append([{ topic: long, message: message(1) }]);
    await store.close();
    store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    assert.equal(store.messageLog.getTopic(long)?.topic, long);
    assert.deepEqual(store.messageLog.readTopic(long, { limit: 2 }).map((m) => m.sequence), [seq]);
  });
});

describe('lmdb storage: deleting a topic purges its messages in short commits', function () {
  this.timeout(60000);

  /** Entries of the log and its topic index, read from the folder itself. */
  async function rawCounts(dir: string): Promise<{ log: number; index: number; purgeMarks: number }> {
    const root = open({ path: dir, maxDbs: 8192, noSubdir: false });
    // entries: blocks of the log (one per append here) and chunks of its topic index
    const log = root.openDB(LOG_DB, { encoding: 'binary' }).getStats() as { entryCount: number };
    const index = root.openDB(LOG_INDEX_DB, { keyEncoding: 'binary', encoding: 'binary' }).getStats() as { entryCount: number };
    let purgeMarks = 0;
    for (const { key } of root.openDB<unknown, any>('_catalog', {}).getRange({})) if (Array.isArray(key) && key[0] === 'purge') purgeMarks++;
    await root.close();
    return { log: log.entryCount, index: index.entryCount, purgeMarks };
  }

  async function withTopics(dir: string): Promise<StoragePort> {
    const store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    await store.messageLog.append(Array.from({ length: 5000 }, (_, i): LogAppend => ({ topic: 'big', message: message(i) })));
    await store.messageLog.append([{ topic: 'keep', message: message(1) }]);
    return store;
  }

  it('removes the topic at once and its messages after, leaving the others', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-purge-'));
    const store = await withTopics(dir);
    await store.messageLog.deleteTopic('big');
    assert.equal(store.messageLog.getTopic('big'), undefined);
    assert.deepEqual(store.messageLog.readFrom(0, 10).map((m) => m.topic), ['keep'], 'a deleted topic\'s messages are never read');
    await (store.messageLog as LmdbMessageLog).purged();
    await store.close();
    assert.deepEqual(await rawCounts(dir), { log: 1, index: 1, purgeMarks: 0 });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a purge cut short by a close goes on at the next open', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-purge-'));
    const store = await withTopics(dir);
    await store.messageLog.deleteTopic('big');
    await store.close(); // stops the purge after at most one chunk
    const cut = await rawCounts(dir);
    assert.equal(cut.purgeMarks, 1, 'the mark stays while messages remain');
    assert.ok(cut.log > 1, `messages remain to purge (${cut.log})`);
    const reopened = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    await (reopened.messageLog as LmdbMessageLog).purged();
    assert.deepEqual(reopened.messageLog.readFrom(0, 10).map((m) => m.topic), ['keep']);
    await reopened.close();
    assert.deepEqual(await rawCounts(dir), { log: 1, index: 1, purgeMarks: 0 });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('lmdb storage: the log state store', function () {
  this.timeout(30000);
  let dir: string;
  let store: StoragePort;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-state-'));
    store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const lastTxnId = (log: LmdbMessageLog): number => (log.log.getStats() as { lastTxnId: number }).lastTxnId;

  it('writes state and appends of one turn in one LMDB commit', async () => {
    const log = store.messageLog as LmdbMessageLog;
    await log.append([{ topic: 'warm', message: message(0) }]); // the topic exists: no commit of its own
    const before = lastTxnId(log);
    const writes = [
      log.state.put('session/a', { position: 1 }),
      log.append([{ topic: 'warm', message: message(1) }]),
      log.state.remove('session/b'),
      log.append([{ topic: 'new/topic', message: message(2) }]),
      log.state.put('session/c', 3),
    ];
    await Promise.all(writes);
    assert.equal(lastTxnId(log), before + 1, 'one transaction committed them all');
  });

  it('lmdb-js does not show a queued write before its commit: the store keeps it meanwhile', async () => {
    const log = store.messageLog as LmdbMessageLog;
    const put = log.state.put('k', 'v');
    assert.equal(log.state.db.get('k'), undefined, 'not in LMDB yet');
    assert.equal(log.state.get('k'), 'v');
    await put;
    assert.equal(log.state.db.get('k'), 'v');
  });

  it('refuses a value msgpack cannot encode before queueing anything; the durable value stays', async () => {
    const log = store.messageLog as LmdbMessageLog;
    await log.state.put('k', 'durable');
    await assert.rejects(log.state.put('k', { big: 2n ** 80n }));
    assert.equal(log.state.get('k'), 'durable');
  });
});
