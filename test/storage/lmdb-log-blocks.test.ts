/**
 * The message log's storage format: blocks (one LMDB value per append), the per-topic index
 * written behind the log (pending in memory, then chunks), its rebuild after a crash, trims that
 * rewrite blocks shared with other topics, and the rewrite of a legacy (one entry per message) log.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { open } from 'lmdb';
import type { MessageInput, StoragePort } from '../../kernel/storage/storage-port';
import { closeLogStore, logMessage, openLogStore, openLogStoreIn, tempLogDir } from './log-fixtures';
import type { LogAppend } from '../../kernel/storage/message-log-port';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { encodeBlock, inputOf, ScannedBlock, type BlockEntry } from '../../plugins/storage-lmdb/log-blocks';
import { LOG_DB, LOG_INDEX_DB, type LmdbMessageLog } from '../../plugins/storage-lmdb/message-log';
import { chunkKey } from '../../plugins/storage-lmdb/topic-index';

const message = logMessage;
const tempDir = (): string => tempLogDir('blocks');

async function rawCount(dir: string, name: string): Promise<number> {
  const root = open({ path: dir, maxDbs: 8192, noSubdir: false });
  const count = (root.openDB(name, { keyEncoding: name === LOG_DB ? undefined : 'binary', encoding: 'binary' }).getStats() as { entryCount: number }).entryCount;
  await root.close();
  return count;
}

describe('lmdb storage: log blocks', () => {
  it('write every field of every message and read back what was written', () => {
    const messages: MessageInput[] = [
      message(1),
      message(2, { publisher: 'pub' }), // same publisher and timestamp as the one before: not written again
      message(3, { createTs: '2024-01-01T00:00:01.500', publisher: 'ünïcode-pub', retain: true, qos: 0 }),
      message(4, { publisher: null, payload: { type: 'binary', value: Buffer.from([0, 1, 2, 255]) } }),
      message(5, { payload: { type: 'json', value: '{"a":[1,2,"ß"]}' }, publisher: 'pub' }),
      message(6, { payload: { type: 'boolean', value: true } }),
      message(7, { payload: { type: 'boolean', value: false }, qos: 2 }),
      message(8, {
        payload: { type: 'binary', value: Buffer.alloc(0) }, contentType: 'text/plain', correlationData: Buffer.from([9, 8, 7]),
        responseTopic: 'reply/here', expirySeconds: 3600, userProperties: [{ key: 'k', value: 'v' }, { key: 'k', value: 'w' }],
        payloadFormat: 1,
      }),
      message(9, { payload: { type: 'string', value: '' }, publisher: '' }),
    ];
    const entries: BlockEntry[] = messages.map((m, i) => ({ seq: 100 + i * 3, topicId: 7 + (i % 2), message: m }));
    const block = new ScannedBlock(100, encodeBlock(entries, 0, entries.length));
    assert.equal(block.count, messages.length);
    assert.deepEqual(block.seqs, entries.map((e) => e.seq));
    assert.equal(block.lastSeq, 124);
    for (let i = 0; i < messages.length; i++) {
      const values = block.values(i);
      assert.equal(values[0], entries[i].topicId);
      const back = inputOf(values);
      const expected = messages[i];
      assert.deepEqual({ ...back, correlationData: back.correlationData && Buffer.from(back.correlationData) }, {
        ...expected, payload: expected.payload.type === 'binary' ? { type: 'binary', value: Buffer.from(expected.payload.value) } : expected.payload,
        correlationData: expected.correlationData && Buffer.from(expected.correlationData),
      }, `message ${i + 1}`);
    }
    assert.equal(block.indexOf(103), 1);
    assert.equal(block.indexOf(104), -1, 'a sequence of the gap is not there');
    assert.equal(block.firstAtOrAfter(104), 2);
    assert.equal(block.firstAtOrAfter(125), messages.length);
  });

  it('a block keyed below its first entry (its first messages trimmed) reads the same', () => {
    const entries: BlockEntry[] = [{ seq: 50, topicId: 1, message: message(50) }, { seq: 52, topicId: 2, message: message(52) }];
    const block = new ScannedBlock(40, encodeBlock(entries, 0, 2, 40));
    assert.deepEqual(block.seqs, [50, 52]);
    assert.equal(inputOf(block.values(1)).payload.value, 'm52');
  });
});

describe('lmdb storage: the topic index is written behind the log', function () {
  this.timeout(30000);
  let dir: string;
  let store: StoragePort;
  let log: LmdbMessageLog;

  beforeEach(async () => {
    ({ dir, store, log } = await openLogStore('blocks'));
  });

  // The store open now (a test may have reopened it).
  afterEach(() => closeLogStore({ dir, store, log }));

  /** Appends `count` messages round robin over topics a, b, c in appends of `per`. */
  async function fill(count: number, per: number, start = 0): Promise<Map<string, number[]>> {
    const seqs = new Map<string, number[]>([['a', []], ['b', []], ['c', []]]);
    for (let i = start; i < start + count; i += per) {
      const batch: LogAppend[] = [];
      for (let k = i; k < Math.min(start + count, i + per); k++) batch.push({ topic: 'abc'[k % 3], message: message(k) });
      const got = await log.append(batch);
      got.forEach((seq, k) => seqs.get(batch[k].topic)!.push(seq));
    }
    return seqs;
  }

  function checkReads(expected: Map<string, number[]>): void {
    for (const [topic, seqs] of expected) {
      assert.deepEqual(log.readTopic(topic, { limit: 1e6 }).map((m) => m.sequence), seqs, `${topic}: all`);
      assert.deepEqual(log.readTopic(topic, { limit: 1e6, reverse: true }).map((m) => m.sequence), [...seqs].reverse(), `${topic}: reverse`);
      assert.deepEqual(log.readTopic(topic, { limit: 5, skip: 7 }).map((m) => m.sequence), seqs.slice(7, 12), `${topic}: skip`);
      const from = seqs[10];
      const to = seqs[20];
      assert.deepEqual(log.readTopic(topic, { from, to, limit: 1e6 }).map((m) => m.sequence), seqs.slice(10, 21), `${topic}: range`);
      assert.deepEqual(log.readTopic(topic, { from, to, limit: 3, reverse: true }).map((m) => m.sequence), seqs.slice(18, 21).reverse());
      assert.equal(log.countTopic(topic), seqs.length, `${topic}: count`);
      assert.equal(log.countTopic(topic, seqs[5]), seqs.length - 5, `${topic}: count from`);
      for (const m of log.readTopic(topic, { limit: 3 })) assert.equal(m.topic, topic);
    }
  }

  it('reads the same from pending entries, from chunks, and from both', async () => {
    const chunksBefore = log.topicIndex.db.getStats() as { entryCount: number };
    const seqs = await fill(1500, 40);
    assert.equal((log.topicIndex.db.getStats() as { entryCount: number }).entryCount, chunksBefore.entryCount, 'nothing indexed on disk yet');
    checkReads(seqs);
    await log.topicIndex.flush();
    assert.ok((log.topicIndex.db.getStats() as { entryCount: number }).entryCount >= 3, 'chunks written by the flush');
    checkReads(seqs);
    const more = await fill(900, 25, 1500);
    for (const [topic, list] of more) seqs.get(topic)!.push(...list);
    checkReads(seqs);
    // A flush under way: its chunks may be visible while the same sequences are still pending.
    const flushing = log.topicIndex.flush();
    checkReads(seqs);
    await flushing;
    checkReads(seqs);
  });

  it('a sequence both in a chunk and pending (a flush committed, its pending entries not yet dropped) is read once', async () => {
    const seqs = await fill(300, 30);
    const a = seqs.get('a')!;
    const { topicId } = log.getTopic('a')!;
    // What a flush's commit leaves until its continuation drops the pending entries: the first 60 in a chunk too.
    const value = Buffer.alloc(60 * 4);
    for (let i = 0; i < 60; i++) value.writeUInt32LE(a[i] - a[0], i * 4);
    await log.topicIndex.db.put(chunkKey(topicId, a[0]), value);
    checkReads(seqs);
  });

  it('a trim rewrites blocks shared with other topics and keeps what it was told to', async () => {
    const seqs = await fill(600, 60);
    await log.topicIndex.flush();
    const more = await fill(60, 60, 600);
    for (const [topic, list] of more) seqs.get(topic)!.push(...list);
    const a = seqs.get('a')!;
    const keep = a[3];
    const upTo = a[a.length - 5];
    const removed = await log.trimTopic('a', upTo, keep);
    assert.equal(removed, a.length - 5);
    const left = [keep, ...a.slice(a.length - 4)];
    assert.deepEqual(log.readTopic('a', { limit: 1e6 }).map((m) => m.sequence), left);
    assert.equal(log.countTopic('a'), left.length);
    assert.equal(log.read(a[0]), undefined, 'a trimmed message is gone from the log');
    assert.equal(log.read(keep)!.payload.value, `m${3 * 3}`);
    for (const topic of ['b', 'c']) {
      assert.deepEqual(log.readTopic(topic, { limit: 1e6 }).map((m) => m.sequence), seqs.get(topic), `${topic} untouched`);
      for (const seq of seqs.get(topic)!) assert.equal(log.read(seq)?.topic, topic);
    }
    assert.deepEqual(log.readFrom(0, 1e6).map((m) => m.sequence), [...left, ...seqs.get('b')!, ...seqs.get('c')!].sort((x, y) => x - y));
  });

  it('a deleted topic\'s messages are purged from blocks it shared; a block it had alone goes', async () => {
    await log.append(Array.from({ length: 30 }, (_, i): LogAppend => ({ topic: 'only', message: message(i) })));
    const seqs = await fill(300, 30);
    await store.messageLog.deleteTopic('a');
    await log.purged();
    await store.messageLog.deleteTopic('only');
    await log.purged();
    assert.deepEqual(log.readFrom(0, 1e6).map((m) => m.sequence), [...seqs.get('b')!, ...seqs.get('c')!].sort((x, y) => x - y));
    for (const seq of seqs.get('a')!) assert.equal(log.read(seq), undefined);
    await store.close();
    assert.equal(await rawCount(dir, LOG_DB), 10, 'the 10 shared blocks stay, the one of "only" is removed');
    ({ store, log } = await openLogStoreIn(dir));
    assert.deepEqual(log.readTopic('b', { limit: 1e6 }).map((m) => m.sequence), seqs.get('b'));
  });
});

const CHILD = `
const { openLmdbStorage } = require(process.argv[2]);
(async () => {
  const store = await openLmdbStorage({ dataDir: process.argv[3], defaultDatabase: 'main' });
  const message = (i) => ({ createTs: '2024-01-01T00:00:00.000', payload: { type: 'string', value: 'm' + i }, qos: 1,
    retain: false, contentType: null, correlationData: null, responseTopic: null, expirySeconds: null,
    userProperties: null, payloadFormat: null, publisher: null });
  for (let i = 0; i < 40; i++) {
    const batch = [];
    for (let k = 0; k < 25; k++) batch.push({ topic: 't/' + ((i * 25 + k) % 50), message: message(i * 25 + k) });
    const seqs = await store.messageLog.append(batch);
    process.stdout.write(seqs.map((s, k) => batch[k].topic + ' ' + s).join('\\n') + '\\n');
    if (i === 19) await store.messageLog.topicIndex.flush(); // half of it indexed on disk, half only in memory
  }
  process.kill(process.pid, 'SIGKILL');
})();
`;

describe('lmdb storage: the topic index after a crash', function () {
  this.timeout(60000);

  it('indexes again, at the next open, what was durable but not yet indexed', async () => {
    const dir = tempDir();
    const script = path.join(dir, 'child.js');
    const dataDir = path.join(dir, 'data');
    fs.writeFileSync(script, CHILD);
    const modulePath = path.resolve(__dirname, '../../plugins/storage-lmdb/lmdb-storage.js');
    const child = spawn(process.execPath, [script, modulePath, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    assert.equal(signal, 'SIGKILL');
    const acked = new Map<string, number[]>();
    for (const line of out.trim().split('\n')) {
      const [topic, seq] = line.split(' ');
      if (!acked.has(topic)) acked.set(topic, []);
      acked.get(topic)!.push(Number(seq));
    }
    assert.equal(acked.size, 50);
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      for (const [topic, seqs] of acked) {
        assert.deepEqual(store.messageLog.readTopic(topic, { limit: 1000 }).map((m) => m.sequence), seqs, topic);
        assert.equal(store.messageLog.countTopic(topic), seqs.length);
      }
      await (store.messageLog as LmdbMessageLog).topicIndex.flush();
      for (const [topic, seqs] of acked) assert.equal(store.messageLog.countTopic(topic), seqs.length, `${topic} after the flush`);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('lmdb storage: a log written one entry per message (before blocks)', function () {
  this.timeout(30000);

  it('is rewritten as blocks at open, under the same sequences, and its old databases go', async () => {
    const dir = tempDir();
    let store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    const a = await store.messageLog.ensureTopic('legacy/a');
    const b = await store.messageLog.ensureTopic('legacy/b');
    await store.close();
    // What the previous version wrote: msgpack positional values per sequence, and an index entry per message.
    const root = open({ path: dir, maxDbs: 8192, noSubdir: false });
    const legacy = root.openDB<unknown[], number>('log', {});
    const legacyIndex = root.openDB<Buffer, Buffer>('log:topic', { keyEncoding: 'binary', encoding: 'binary' });
    const written: Array<[number, number]> = [];
    await root.transaction(() => {
      for (let seq = 1; seq <= 25_000; seq += (seq % 7 === 0 ? 3 : 1)) {
        const topicId = seq % 2 === 0 ? a.topicId : b.topicId;
        legacy.put(seq, [topicId, '2023-05-06T07:08:09.010', { type: 'string', value: `old ${seq}` }, 1, false, null, null, null, null, null, null, 'old-pub']);
        const key = Buffer.alloc(12);
        key.writeUInt32BE(topicId, 0);
        key.writeUInt32BE(seq, 8);
        legacyIndex.put(key, Buffer.alloc(0));
        written.push([seq, topicId]);
      }
    });
    await root.close();
    store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    try {
      const log = store.messageLog;
      const last = written[written.length - 1][0];
      assert.equal(log.lastSequence(), last);
      const aSeqs = written.filter(([, t]) => t === a.topicId).map(([s]) => s);
      assert.deepEqual(log.readTopic('legacy/a', { limit: 1e6 }).map((m) => m.sequence), aSeqs);
      const m = log.read(written[100][0])!;
      assert.equal(m.payload.value, `old ${written[100][0]}`);
      assert.equal(m.publisher, 'old-pub');
      assert.equal(m.createTs, '2023-05-06T07:08:09.010');
      const [next] = await log.append([{ topic: 'legacy/b', message: message(1) }]);
      assert.equal(next, last + 1, 'sequences go on after the legacy ones');
    } finally {
      await store.close();
    }
    const raw = open({ path: dir, maxDbs: 8192, noSubdir: false });
    const names = [...raw.getKeys({})];
    await raw.close();
    assert.ok(!names.includes('log') && !names.includes('log:topic'), `old databases dropped: ${names.join(', ')}`);
    assert.ok(names.includes(LOG_DB) && names.includes(LOG_INDEX_DB));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
