/**
 * Transform fields are computed from each message alone (docs/storage.md, "Transform fields"):
 * the operation entries of a store that declared fields, appended, changed them and trimmed,
 * applied to a fresh store, give the same fields for every message, the same integration-table
 * rows and the same index order. Entries cross as msgpack, as a replicated log would carry them.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Packr } from 'msgpackr';
import type { MessageInput, StoragePort } from '../../kernel/storage/storage-port';
import type { TransformFieldInput } from '../../kernel/storage/message-log-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { readAll } from '../../kernel/storage/stored-values';

const TOPIC = 'plant/replay';

function message(i: number): MessageInput {
  const payload = i % 10 === 3 ? 'not json' : JSON.stringify(i % 10 === 5 ? { t: 'hot' } : { t: i / 2, line: `L${i % 3}` });
  return {
    createTs: '2026-01-01T00:00:00.000', payload: i % 10 === 3 ? { type: 'string', value: payload } : { type: 'json', value: payload },
    qos: 1, retain: false, contentType: null, correlationData: null, responseTopic: null, expirySeconds: null,
    userProperties: null, payloadFormat: null, publisher: 'replay',
  };
}

async function appendRange(store: StoragePort, from: number, to: number): Promise<void> {
  const batch = [];
  for (let i = from; i < to; i++) batch.push({ topic: TOPIC, message: message(i) });
  await store.messageLog.append(batch);
}

/** Resolves once the topic's back-fill is over (it runs in the background, a chunk per commit). */
async function backfilled(store: StoragePort): Promise<void> {
  while (store.messageLog.transformStatus(TOPIC)?.backfill.state === 'running') await new Promise((resolve) => setImmediate(resolve));
}

/** Every message's fields, the table's rows and the order of the index over `t`. */
function digest(store: StoragePort): unknown {
  const log = store.messageLog;
  const table = log.getTopic(TOPIC)!.table;
  const seqs = log.readTopic(TOPIC, { limit: 100_000 }).map((m) => m.sequence);
  return {
    fields: seqs.map((s) => log.transformValues(TOPIC, s)),
    rows: readAll(store.readRecords('main', table, {})).map((r) => [r.id, ...r.values.slice(2)]),
    byT: readAll(store.readRecords('main', table, { index: 'by_t' })).map((r) => r.id),
    columns: store.getTable('main', table).columns.map((c) => c.name),
  };
}

describe('transform fields: replayed entries give the same fields', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const stores: StoragePort[] = [];
  const open = async (): Promise<StoragePort> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-transform-'));
    dirs.push(dir);
    const store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
    stores.push(store);
    return store;
  };

  after(async () => {
    for (const store of stores) await store.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('declare on a topic with messages, append, change the fields, trim: a fresh store applying the entries agrees', async function () {
    const wire = new Packr({ structuredClone: true });
    const source = await open();
    const recorded: OperationEntry[] = [];
    source.operations.tap((entry) => recorded.push(wire.unpack(wire.pack(entry)) as OperationEntry));
    const fields: TransformFieldInput[] = [
      { recordPath: 'source_payload.t', fieldName: 't', type: 'float', indexName: 'by_t' },
      { recordPath: 'source_payload.line', fieldName: 'line', type: 'varchar', length: 4 },
    ];
    await appendRange(source, 0, 3000);
    await source.messageLog.configureTransform(TOPIC, fields);
    await appendRange(source, 3000, 3500);
    await backfilled(source);
    await source.messageLog.configureTransform(TOPIC, [fields[0], { recordPath: 'source_payload.line', fieldName: 'line2', type: 'char', length: 2 }]);
    await appendRange(source, 3500, 3600);
    await backfilled(source);
    await source.messageLog.trimTopic(TOPIC, 100);

    const expected = digest(source);
    const fresh = await open();
    await fresh.operations.apply(recorded);
    await backfilled(fresh);
    assert.deepEqual(digest(fresh), expected);
    const first = (expected as { fields: Array<{ fields: Record<string, unknown>; error: boolean }> }).fields;
    assert.equal(first.length, 3500, 'the trim removed the first 100');
    assert.deepEqual(first[0], { fields: { t: 50, line2: 'L1' }, error: false, log: null });
  });
});
