/**
 * Adversarial review of the message log's block format (blocks, the topic index written behind
 * the log, trims, purges, the legacy rewrite). Tests marked [bug] fail on the reviewed code;
 * tests marked [pins] pass and pin down behaviour checked during the review.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MessageInput, StoragePort } from '../../kernel/storage/storage-port';
import { closeLogStore, logMessage, openLogStore, openLogStoreIn, tempLogDir } from './log-fixtures';
import type { LogAppend } from '../../kernel/storage/message-log-port';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { open } from 'lmdb';
import { LmdbEnvironment } from '../../plugins/storage-lmdb/environment';
import { ScannedBlock } from '../../plugins/storage-lmdb/log-blocks';
import { migrateLegacyLog } from '../../plugins/storage-lmdb/log-migration';
import { LOG_DB, type LmdbMessageLog } from '../../plugins/storage-lmdb/message-log';
import { readAll } from '../../kernel/storage/stored-values';

const message = logMessage;
const tempDir = (): string => tempLogDir('review');

/** Every sequence of the topic in the on-disk chunks (the index as a reopen after a crash would find it). */
function chunkedSeqs(log: LmdbMessageLog, topicId: number): number[] {
  const out: number[] = [];
  for (const { key, value } of log.topicIndex.db.getRange({})) {
    const k = key as Buffer;
    if (k.readUInt32BE(0) !== topicId) continue;
    const first = k.readUInt32BE(4) * 4294967296 + k.readUInt32BE(8);
    const v = value as Buffer;
    for (let i = 0; i < v.length; i += 4) out.push(first + v.readUInt32LE(i));
  }
  return out;
}

/** Every (sequence, topic id) the raw block database holds. */
function rawEntries(log: LmdbMessageLog): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const { key, value } of log.log.getRange({})) {
    const block = new ScannedBlock(key as number, value as Buffer);
    for (let i = 0; i < block.count; i++) out.push([block.seqs[i], block.topicIds[i]]);
  }
  return out;
}

describe('lmdb message log review', function () {
  this.timeout(60000);
  let dir: string;
  let store: StoragePort;
  let log: LmdbMessageLog;

  beforeEach(async () => {
    ({ dir, store, log } = await openLogStore('review'));
  });

  // The store open now (a test may have reopened it).
  afterEach(() => closeLogStore({ dir, store, log }));

  it('[fixed] a flush taken while a trim is queued behind an append in flight does not write the trimmed sequences back into chunks', async () => {
    for (let round = 0; round < 12; round++) {
      const topic = `trim/${round}`;
      const seqs = await log.append(Array.from({ length: 100 }, (_, i): LogAppend => ({ topic, message: message(i) })));
      const { topicId } = log.getTopic(topic)!;
      // All 100 are pending (not yet in a chunk). An append of another topic is in flight, the trim's
      // transaction callback is queued behind it, and the periodic flush fires before that callback runs:
      // it encodes all 100 pending sequences, and its puts land after the callback removed 50 of them.
      const other = log.append([{ topic: 'other', message: message(0) }]);
      const trimmed = log.trimTopic(topic, seqs[49]);
      const flushed = new Promise<void>((resolve, reject) => setImmediate(() => log.topicIndex.flush().then(resolve, reject)));
      await other;
      assert.equal(await trimmed, 50);
      await flushed;
      const left = seqs.slice(50);
      assert.deepEqual(log.readTopic(topic, { limit: 1000 }).map((m) => m.sequence), left, `round ${round}: readTopic`);
      assert.equal(log.countTopic(topic), 50, `round ${round}: countTopic counts trimmed messages`);
      assert.deepEqual(log.readTopic(topic, { limit: 5, skip: 10 }).map((m) => m.sequence), left.slice(10, 15), `round ${round}: skip passes over trimmed messages`);
      assert.deepEqual(chunkedSeqs(log, topicId), left, `round ${round}: chunks hold trimmed sequences`);
    }
  });

  /**
   * An append that creates a topic is numbered inside its transaction callback, which lmdb-js runs
   * after the event loop's next phase: a plain-put append issued in between (setImmediate) is
   * numbered first but commits in the next batch, so the higher sequences become durable first.
   * Resolves with [the plain append's sequence (lower), the callback append's sequences] once a
   * round showed that inversion, with a flush issued in between (as the 5 s timer may).
   */
  async function invertedRound(flushBetween: boolean): Promise<{ low: number; high: number[] } | undefined> {
    for (let round = 0; round < 50; round++) {
      let lowDone = false;
      let highFirst = false;
      let flush: Promise<void> = Promise.resolve();
      const high = log.append([{ topic: `new/${round}`, message: message(1) }, { topic: 'y', message: message(2) }]).then((seqs) => {
        highFirst = !lowDone;
        if (flushBetween && highFirst) flush = log.topicIndex.flush();
        return seqs;
      });
      const low = new Promise<number[]>((resolve, reject) => setImmediate(() => {
        log.append([{ topic: 'y', message: message(3) }]).then((seqs) => { lowDone = true; resolve(seqs); }, reject);
      }));
      const [h, l] = await Promise.all([high, low]);
      await flush;
      if (highFirst && l[0] < h[0]) return { low: l[0], high: h };
    }
    return undefined;
  }

  it('[fixed] a plain-put append numbered before a topic-creating append but durable after it is read once the flush between them is done', async () => {
    await log.append([{ topic: 'y', message: message(0) }]);
    await log.topicIndex.flush();
    const expected = log.readTopic('y', { limit: 1e6 }).map((m) => m.sequence);
    let inverted = false;
    for (let attempt = 0; attempt < 20 && !inverted; attempt++) {
      const got = await invertedRound(true);
      if (got === undefined) continue;
      inverted = true;
      expected.push(got.low, got.high[1]);
    }
    // Fixed: appends are numbered in call order on both paths, so no inversion happens any more;
    // the reads below must hold either way.
    assert.ok(!inverted, 'a later call got an earlier sequence');
    expected.sort((a, b) => a - b);
    // Also the ones of rounds without an inversion, which are all fine.
    const all = log.readTopic('y', { limit: 1e6 }).map((m) => m.sequence);
    for (const seq of expected) assert.ok(all.includes(seq), `message ${seq} of "y" is missing from readTopic (got ${all.slice(-6).join(',')})`);
    assert.equal(log.countTopic('y'), all.length);
    const { topicId } = log.getTopic('y')!;
    const before = rawEntries(log).filter(([, t]) => t === topicId).map(([s]) => s);
    assert.deepEqual(all, before, 'readTopic differs from the blocks');
  });

  it('[fixed] the watermark never passes a durable sequence that is not in a chunk (else a crash loses it from the index)', async () => {
    await log.append([{ topic: 'y', message: message(0) }]);
    await log.topicIndex.flush();
    for (let attempt = 0; attempt < 5; attempt++) {
      // Fixed: no inversion happens any more (sequences in call order); the watermark must hold either way.
      assert.equal(await invertedRound(true), undefined, 'a later call got an earlier sequence');
    }
    const watermark = log.topicIndex.watermark();
    const { topicId } = log.getTopic('y')!;
    const chunked = new Set(chunkedSeqs(log, topicId));
    // What a reopen would index: chunks, plus the blocks past the watermark.
    for (const [seq, t] of rawEntries(log)) {
      if (t !== topicId) continue;
      assert.ok(seq > watermark || chunked.has(seq), `message ${seq} is at or below the watermark ${watermark} but in no chunk`);
    }
  });
  it('[fixed] appends resolve in the order they are called: a plain put issued after topic-creating appends does not resolve first', async () => {
    await log.append([{ topic: 'known', message: message(0) }]);
    const big = (i: number): MessageInput => message(i, { payload: { type: 'binary', value: Buffer.alloc(8192, i & 0xff) } });
    for (let round = 0; round < 10; round++) {
      const resolved: number[] = [];
      const appends: Array<Promise<number[]>> = [];
      // Turn N: a topic is created (a child transaction) with 1 MB of messages; turns N+1 and
      // N+2 append to it while its creation is in flight (child transactions too); turn N+3, once
      // nothing is pending, a plain put to a known topic.
      const fresh = `fresh/${round}`;
      appends.push(log.append(Array.from({ length: 128 }, (_, i): LogAppend => ({ topic: fresh, message: big(i) }))));
      for (let turn = 0; turn < 3; turn++) {
        await new Promise((resolve) => setImmediate(resolve));
        appends.push(log.append(turn < 2
          ? Array.from({ length: 64 }, (_, i): LogAppend => ({ topic: fresh, message: big(i) }))
          : [{ topic: 'known', message: message(turn) }]));
      }
      appends.forEach((append, index) => { void append.then(() => resolved.push(index)); });
      const sequences = await Promise.all(appends);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(resolved, [0, 1, 2, 3], `round ${round}: resolved out of call order (sequences ${sequences.map((seqs) => seqs[0]).join(', ')})`);
    }
  });

  it('[fixed] appends get sequences in the order they are called, also when the first one creates a topic', async () => {
    await log.append([{ topic: 'order', message: message(0) }]);
    // The broker's publish batch: turn N has a publish to a new topic (appended in a transaction
    // callback), turn N+1 (the next setImmediate) only known topics (plain puts).
    for (let round = 0; round < 10; round++) {
      const first = log.append([{ topic: `fresh/${round}`, message: message(1) }, { topic: 'order', message: message(2) }]);
      const second = new Promise<number[]>((resolve, reject) => setImmediate(() => {
        log.append([{ topic: 'order', message: message(3) }]).then(resolve, reject);
      }));
      const [a, b] = await Promise.all([first, second]);
      assert.ok(a[1] < b[0], `round ${round}: a message appended later got an earlier sequence (${b[0]} before ${a[1]}): a publisher's messages to one topic swap places in the log`);
    }
  });

  it('[pins] edge values come back as written, through readTopic (both ways), readFrom, read and after a reopen', async () => {
    const bigBinary = Buffer.alloc(300 * 1024, 7);
    const bigText = 'ß€'.repeat(100 * 1024); // 500 KB of UTF-8, 200 K UTF-16 units
    const inputs: MessageInput[] = [
      message(0, { payload: { type: 'string', value: '' } }),
      message(1, { payload: { type: 'binary', value: Buffer.alloc(0) }, publisher: null }),
      message(2, { payload: { type: 'boolean', value: false }, publisher: 'ünï-😀' }),
      message(3, { payload: { type: 'boolean', value: true }, publisher: 'ünï-😀', retain: true, qos: 2 }),
      message(4, { payload: { type: 'binary', value: bigBinary } }),
      message(5, { payload: { type: 'string', value: bigText }, createTs: '2024-01-01T00:00:01.000' }),
      message(6, {
        createTs: '2024-01-01T00:00:01.000', payload: { type: 'json', value: '{"k":"v"}' }, contentType: 'application/json', correlationData: Buffer.from([1, 2]),
        responseTopic: 'r/é', expirySeconds: 0, userProperties: [{ key: 'é', value: '' }], payloadFormat: 1, publisher: '',
      }),
    ];
    const topic = 'edge/' + 'é'.repeat(300);
    const seqs = await log.append(inputs.map((m) => ({ topic, message: m })));
    const check = (l: LmdbMessageLog, when: string): void => {
      const forward = l.readTopic(topic, { limit: 100 });
      assert.deepEqual(forward.map((m) => m.sequence), seqs, when);
      assert.deepEqual(l.readTopic(topic, { limit: 100, reverse: true }).map((m) => m.sequence), [...seqs].reverse(), when);
      assert.deepEqual(l.readFrom(0, 100).map((m) => m.sequence), seqs, when);
      for (let i = 0; i < inputs.length; i++) {
        const got = l.read(seqs[i])!;
        const want = inputs[i];
        assert.equal(got.topic, topic);
        assert.equal(got.publisher, want.publisher ?? null, `${when} publisher ${i}`);
        assert.equal(got.retain, want.retain, `${when} retain ${i}`);
        assert.equal(got.qos, want.qos, `${when} qos ${i}`);
        assert.equal(got.payload.type, want.payload.type);
        if (want.payload.type === 'binary') assert.ok(Buffer.from(want.payload.value).equals(Buffer.from(got.payload.value as Uint8Array)), `${when} payload ${i}`);
        else assert.equal(got.payload.value, want.payload.value, `${when} payload ${i}`);
        assert.equal(got.createTs, want.createTs);
      }
      const props = l.read(seqs[6])!;
      assert.equal(props.contentType, 'application/json');
      assert.deepEqual(Buffer.from(props.correlationData!), Buffer.from([1, 2]));
      assert.equal(props.responseTopic, 'r/é');
      assert.equal(props.expirySeconds, 0);
      assert.deepEqual(props.userProperties, [{ key: 'é', value: '' }]);
      assert.equal(props.payloadFormat, 1);
    };
    check(log, 'pending');
    await log.topicIndex.flush();
    check(log, 'chunked');
    await store.close();
    ({ store, log } = await openLogStoreIn(dir));
    check(log, 'reopened');
  });

  it('[pins] a 65,500-byte topic (the longest allowed) takes messages', async () => {
    const topic = 'x'.repeat(65_500);
    const [seq] = await log.append([{ topic, message: message(1) }]);
    assert.equal(log.readTopic(topic, { limit: 5 })[0].sequence, seq);
  });

  it('[pins] create_ts never goes back along the log; the create_ts index of the integration table reads in order', async () => {
    const ts = ['2024-01-01T00:00:05.000', '2024-01-01T00:00:01.000', '2024-01-01T00:00:09.000', '2024-01-01T00:00:02.000'];
    for (const createTs of ts) await log.append([{ topic: 'ts', message: message(0, { createTs }) }]);
    const got = log.readTopic('ts', { limit: 10 }).map((m) => m.createTs);
    assert.deepEqual(got, ['2024-01-01T00:00:05.000', '2024-01-01T00:00:05.000', '2024-01-01T00:00:09.000', '2024-01-01T00:00:09.000']);
    const info = log.getTopic('ts')!;
    const byIndex = readAll(store.readRecords('main', info.table, { index: 'create_ts_idx', reverse: true })).map((r) => r.id);
    const ids = log.readTopic('ts', { limit: 10 }).map((m) => m.sequence);
    assert.deepEqual(byIndex, [...ids].reverse());
    const since = readAll(store.readRecords('main', info.table, { index: 'create_ts_idx', range: { lower: { values: ['2024-01-01T00:00:06.000'], inclusive: true } } })).map((r) => r.id);
    assert.deepEqual(since, ids.slice(2));
  });

  it('[pins] no sequence is handed out twice after a reopen, when the newest messages were trimmed or their topic deleted', async () => {
    await log.append([{ topic: 'old', message: message(0) }]);
    const trimmed = await log.append(Array.from({ length: 5 }, (_, i): LogAppend => ({ topic: 'newest', message: message(i) })));
    assert.equal(await log.trimTopic('newest', Number.MAX_SAFE_INTEGER), 5);
    await store.close();
    ({ store, log } = await openLogStoreIn(dir));
    const [next] = await log.append([{ topic: 'old', message: message(1) }]);
    assert.ok(next > trimmed[4], `sequence ${next} reused`);
    const doomed = await log.append(Array.from({ length: 5 }, (_, i): LogAppend => ({ topic: 'doomed2', message: message(i) })));
    await log.deleteTopic('doomed2');
    await log.purged();
    await store.close();
    ({ store, log } = await openLogStoreIn(dir));
    const [after] = await log.append([{ topic: 'old', message: message(2) }]);
    assert.ok(after > doomed[4], `sequence ${after} reused`);
  });

  it('[pins] a trim keeps `keep` (also when it is pending and the rest is chunked), and countTopic / reads agree', async () => {
    const first = await log.append(Array.from({ length: 30 }, (_, i): LogAppend => ({ topic: 'k', message: message(i) })));
    await log.topicIndex.flush();
    const second = await log.append(Array.from({ length: 30 }, (_, i): LogAppend => ({ topic: 'k', message: message(i) })));
    const keep = second[3];
    assert.equal(await log.trimTopic('k', second[10], keep), 40);
    const left = [keep, ...second.slice(11)];
    assert.deepEqual(log.readTopic('k', { limit: 100 }).map((m) => m.sequence), left);
    assert.equal(log.countTopic('k'), left.length);
    assert.equal(log.countTopic('k', second[12]), left.length - 2);
    assert.equal(store.countRecords('main', log.getTopic('k')!.table), left.length);
    assert.equal(first.every((q) => log.read(q) === undefined), true);
  });

  it('[fixed] a message appended to a topic in the turn it is deleted is purged from the blocks too', async () => {
    await log.append(Array.from({ length: 10 }, (_, i): LogAppend => ({ topic: 'doomed', message: message(i) })));
    const { topicId } = log.getTopic('doomed')!;
    // The append (a plain put, numbered now) and the delete (a transaction callback) share a commit.
    const appended = log.append([{ topic: 'doomed', message: message(99) }, { topic: 'kept', message: message(98) }]);
    const deleted = log.deleteTopic('doomed');
    const [seq] = await appended;
    await deleted;
    await log.purged();
    assert.equal(log.read(seq), undefined);
    const left = rawEntries(log).filter(([, t]) => t === topicId).map(([s]) => s);
    assert.deepEqual(left, [], 'messages of the deleted topic left in the blocks for ever (the purge goes by the index, which never had them)');
  });
});

/** Runs `body` (JS, with `store`, `log`, `message`, `out(line)` in scope) in a child that SIGKILLs itself after it; returns its output lines. */
async function runChildThenKill(dataDir: string, body: string): Promise<string[]> {
  const script = path.join(path.dirname(dataDir), 'child.js');
  fs.writeFileSync(script, `
const { openLmdbStorage } = require(process.argv[2]);
(async () => {
  const store = await openLmdbStorage({ dataDir: process.argv[3], defaultDatabase: 'main' });
  const log = store.messageLog;
  const message = (i) => ({ createTs: '2024-01-01T00:00:00.000', payload: { type: 'string', value: 'm' + i }, qos: 1,
    retain: false, contentType: null, correlationData: null, responseTopic: null, expirySeconds: null,
    userProperties: null, payloadFormat: null, publisher: null });
  const lines = [];
  const out = (line) => lines.push(line);
  ${body}
  require('fs').writeSync(1, lines.join('\\n') + '\\n');
  process.kill(process.pid, 'SIGKILL');
})();
`);
  const modulePath = path.resolve(__dirname, '../../plugins/storage-lmdb/lmdb-storage.js');
  const child = spawn(process.execPath, [script, modulePath, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => { text += chunk.toString(); });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
  assert.equal(signal, 'SIGKILL');
  return text.trim().split('\n').filter((l) => l.length > 0);
}

describe('lmdb message log review: after SIGKILL', function () {
  this.timeout(60000);
  let dir: string;

  beforeEach(() => { dir = tempDir(); });
  afterEach(() => { fs.rmSync(dir, { recursive: true, force: true }); });

  it('[fixed] an acknowledged message numbered before a topic-creating append but durable after it survives a crash right after the flush between them', async () => {
    const dataDir = path.join(dir, 'data');
    const lines = await runChildThenKill(dataDir, `
      const [first] = await log.append([{ topic: 'y', message: message(0) }]);
      out('y ' + first);
      await log.topicIndex.flush();
      for (let round = 0; round < 50; round++) {
        let lowDone = false;
        let flush = Promise.resolve();
        const high = log.append([{ topic: 'new/' + round, message: message(1) }, { topic: 'y', message: message(2) }]).then((s) => {
          if (!lowDone) flush = log.topicIndex.flush();
          return s;
        });
        const low = new Promise((resolve) => setImmediate(() => log.append([{ topic: 'y', message: message(3) }]).then((s) => { lowDone = true; resolve(s); })));
        const [h, l] = await Promise.all([high, low]);
        await flush;
        out('y ' + h[1]);
        out('y ' + l[0]);
      }
    `);
    const acked = lines.filter((l) => l.startsWith('y ')).map((l) => Number(l.slice(2))).sort((a, b) => a - b);
    assert.ok(acked.length > 50);
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      const read = store.messageLog.readTopic('y', { limit: 1e6 }).map((m) => m.sequence);
      const lost = acked.filter((s) => !read.includes(s));
      assert.deepEqual(lost, [], `${lost.length} acknowledged messages of "y" no longer readable after the crash`);
      assert.equal(store.messageLog.countTopic('y'), acked.length);
    } finally {
      await store.close();
    }
  });

  it('[fixed] a topic deleted just before a crash has all its messages purged at the next open', async () => {
    const dataDir = path.join(dir, 'data');
    const lines = await runChildThenKill(dataDir, `
      await log.append([{ topic: 'z', message: message(0) }]);
      const seqs = await log.append(Array.from({ length: 50 }, (_, i) => ({ topic: 'gone', message: message(i) })));
      out('id ' + log.getTopic('gone').topicId);
      out('seqs ' + seqs.join(','));
      log.purge = () => Promise.resolve(); // the crash comes before the purge's first commit
      await log.deleteTopic('gone'); // its messages are still pending in the index: never flushed
    `);
    const topicId = Number(lines.find((l) => l.startsWith('id '))!.slice(3));
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      const log = store.messageLog as LmdbMessageLog;
      await log.purged();
      assert.equal(log.getTopic('gone'), undefined);
      const left = rawEntries(log).filter(([, t]) => t === topicId).map(([s]) => s);
      assert.deepEqual(left, [], 'messages of the deleted topic left in the blocks for ever');
    } finally {
      await store.close();
    }
  });

  it('[pins] a trim cut by SIGKILL between its commits leaves index, blocks and the sequence counter consistent', async () => {
    const dataDir = path.join(dir, 'data');
    const lines = await runChildThenKill(dataDir, `
      const all = [];
      for (let b = 0; b < 10; b++) {
        const batch = [];
        for (let k = 0; k < 1000; k++) batch.push({ topic: k % 2 ? 'big' : 'other', message: message(b * 1000 + k) });
        const seqs = await log.append(batch);
        seqs.forEach((s, k) => all.push(batch[k].topic + ' ' + s));
        if (b === 4) await log.topicIndex.flush(); // half in chunks, half pending
      }
      for (const l of all) out(l);
      const upTo = Number(all[all.length - 1].split(' ')[1]);
      // The trim removes 2,000 per commit: killed after its first commit.
      const writes = [];
      const original = log.env.write.bind(log.env);
      let n = 0;
      log.env.write = (action) => { const p = original(action); if (++n === 1) p.then(() => { require('fs').writeSync(1, lines.join('\\n') + '\\n'); process.kill(process.pid, 'SIGKILL'); }); return p; };
      log.trimTopic('big', upTo);
      await new Promise(() => {});
    `);
    const big = lines.filter((l) => l.startsWith('big ')).map((l) => Number(l.slice(4)));
    const other = lines.filter((l) => l.startsWith('other ')).map((l) => Number(l.slice(6)));
    assert.equal(big.length, 5000);
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      const log = store.messageLog as LmdbMessageLog;
      const left = log.readTopic('big', { limit: 1e6 }).map((m) => m.sequence);
      assert.deepEqual(left, big.slice(2000), 'the first commit of the trim (2,000 removed) and nothing else');
      assert.equal(log.countTopic('big'), left.length);
      assert.deepEqual(log.readTopic('other', { limit: 1e6 }).map((m) => m.sequence), other);
      const inBlocks = rawEntries(log).filter(([, t]) => t === log.getTopic('big')!.topicId).map(([s]) => s);
      assert.deepEqual(inBlocks, left, 'blocks and index agree');
      const [next] = await log.append([{ topic: 'other', message: message(0) }]);
      assert.ok(next > Math.max(...big, ...other));
    } finally {
      await store.close();
    }
  });

  it('[pins] a legacy rewrite cut short (its later batches never committed) is finished at the next open, nothing lost or doubled', async () => {
    const dataDir = path.join(dir, 'data');
    let store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    const a = await store.messageLog.ensureTopic('legacy/a');
    await store.close();
    const root = open({ path: dataDir, maxDbs: 8192, noSubdir: false });
    const legacy = root.openDB<unknown[], number>('log', {});
    const written: number[] = [];
    await root.transaction(() => {
      for (let seq = 1; seq <= 35_000; seq += (seq % 11 === 0 ? 5 : 1)) {
        legacy.put(seq, [a.topicId, '2023-05-06T07:08:09.010', { type: 'string', value: `old ${seq}` }, 1, false, null, null, null, null, null, null, null]);
        written.push(seq);
      }
    });
    await root.close();
    // The first run: killed during its third batch (the throw aborts that batch's transaction, as a crash would).
    const env = new LmdbEnvironment(dataDir);
    const blocks = env.root.openDB<Buffer, number>(LOG_DB, { encoding: 'binary' });
    let puts = 0;
    let crashed: unknown;
    let moved = -1;
    try {
      moved = migrateLegacyLog(env, (key, block) => {
        if (++puts === 15) throw new Error('crash');
        void blocks.put(key, block);
      });
    } catch (error) {
      crashed = error;
    }
    assert.ok(crashed instanceof Error && crashed.message === 'crash', `no crash: moved ${moved} in ${puts} puts`);
    await env.close();
    store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      assert.deepEqual(store.messageLog.readTopic('legacy/a', { limit: 1e6 }).map((m) => m.sequence), written);
      assert.equal(store.messageLog.countTopic('legacy/a'), written.length);
      assert.deepEqual(store.messageLog.readFrom(0, 1e6).map((m) => m.sequence), written);
      assert.equal(store.messageLog.read(written[20_000])!.payload.value, `old ${written[20_000]}`);
    } finally {
      await store.close();
    }
  });
});
