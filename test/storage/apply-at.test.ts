/**
 * The replicated-log seam of the operations port (docs/storage.md, "Operation entries and
 * replay"; docs/cluster.md): `forward` takes the store's entries instead of applying them;
 * `applyAt` applies a record's entries with its position in the same commit, so a record
 * applied again from the stored position after a reopen changes nothing; a trim's record holds
 * back the records after it until it has finished; and records applied back to back give the
 * store they give applied one at a time (schema and topic entries see the writes ahead of them).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import type { MessageInput, StoragePort } from '../../kernel/storage/storage-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import { EngineError } from '../../kernel/errors';
import { readAll } from '../../kernel/storage/stored-values';

/** The time entries carry (every node computes from the entry's own). */
const T = '2024-01-01T00:00:00.000Z';

function message(i: number): MessageInput {
  return {
    createTs: '2024-01-01T00:00:00.000', payload: { type: 'string', value: `m${i}` }, qos: 1, retain: false, contentType: null,
    correlationData: null, responseTopic: null, expirySeconds: null, userProperties: null, payloadFormat: null, publisher: null,
  };
}

const append = (topic: string, from: number, count: number): OperationEntry => ({
  op: 'messages.append', messages: Array.from({ length: count }, (_, i) => ({ topic, message: message(from + i) })),
});

describe('storage: applying the records of a replicated log (operations.applyAt, forward)', function () {
  const folders: string[] = [];
  const folder = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'engine-apply-at-'));
    folders.push(dir);
    return dir;
  };
  after(() => { for (const dir of folders) rmSync(dir, { recursive: true, force: true }); });

  it('a record is applied once: applied again from the position stored with it, after a reopen, nothing is doubled', async function () {
    const dataDir = folder();
    const records: OperationEntry[][] = [
      [{ op: 'table.create', database: 'main', table: 't', columns: [{ name: 'a', type: 'integer' }], time: '2024-01-01T00:00:00.000Z' }],
      [{ op: 'records.insert', database: 'main', table: 't', columns: ['a'], ids: [null, null], values: [[1], [2]], time: '2024-01-01T00:00:01.000Z' }, append('x', 0, 3)],
    ];
    let store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    assert.equal(store.operations.appliedPosition(), undefined);
    await Promise.all(store.operations.applyAt(1, records[0]));
    const answers = await Promise.all(store.operations.applyAt(2, records[1]));
    assert.deepEqual(answers, [[1, 2], [1, 2, 3]]);
    assert.deepEqual(store.operations.appliedPosition(), { sequence: 2, applied: 2 });
    await store.close();

    store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    try {
      const position = store.operations.appliedPosition()!;
      assert.deepEqual(position, { sequence: 2, applied: 2 });
      // A restart reads the record at the position again and applies what follows `applied`: nothing.
      assert.deepEqual(store.operations.applyAt(position.sequence, records[1], position.applied), []);
      assert.equal(store.countRecords('main', 't'), 2);
      assert.equal(store.messageLog.countTopic('x'), 3);
    } finally {
      await store.close();
    }
  });

  it('records after a trim wait until it has finished, and the position counts each entry of the trim record', async function () {
    const store = await openLmdbStorage({ dataDir: folder(), defaultDatabase: 'main' });
    try {
      await Promise.all(store.operations.applyAt(1, [append('t', 0, 5)]));
      const trimRecord = store.operations.applyAt(2, [{ op: 'topic.trim', topic: 't', upToSequence: 3 }, append('t', 5, 1)]);
      const after = store.operations.applyAt(3, [append('t', 6, 1)]);
      assert.deepEqual(await Promise.all([...trimRecord, ...after]), [3, [6], [7]]);
      assert.deepEqual(store.messageLog.readTopic('t', { limit: 10 }).map((m) => m.sequence), [4, 5, 6, 7]);
      assert.deepEqual(store.operations.appliedPosition(), { sequence: 3, applied: 1 });
    } finally {
      await store.close();
    }
  });

  it('applyAt calls `applied` once the record is readable: at once without a trim, and only after the trim for a record held back by one, in order', async function () {
    const store = await openLmdbStorage({ dataDir: folder(), defaultDatabase: 'main' });
    try {
      const state = store.messageLog.state;
      const seen: string[] = [];
      const owner = (record: number) => () => seen.push(`${record}: ${String(state.get('session/c'))}`);
      store.operations.applyAt(1, [append('t', 0, 5), { op: 'state.put', key: 'session/c', value: 'v1' }], 0, owner(1));
      // No trim in the way: told before applyAt returns, the record's write readable.
      assert.deepEqual(seen, ['1: v1']);
      const trimRecord = store.operations.applyAt(2, [{ op: 'topic.trim', topic: 't', upToSequence: 3 }, { op: 'state.put', key: 'session/c', value: 'v2' }], 0, owner(2));
      const after = store.operations.applyAt(3, [{ op: 'state.put', key: 'session/c', value: 'v3' }], 0, owner(3));
      // Both wait for the trim: neither is told yet (a claim in record 3, acted on now, would read
      // the session without the writes of the records ahead of it).
      assert.deepEqual(seen, ['1: v1']);
      await Promise.all([...trimRecord, ...after]);
      assert.deepEqual(seen, ['1: v1', '2: v2', '3: v3']);
    } finally {
      await store.close();
    }
  });

  it('while a forwarder is set, writes go to it and are answered by it; nothing is applied', async function () {
    const store = await openLmdbStorage({ dataDir: folder(), defaultDatabase: 'main' });
    try {
      const forwarded: OperationEntry[] = [];
      store.operations.forward((entry) => {
        forwarded.push(entry);
        return Promise.resolve(entry.op === 'messages.append' ? [41] : undefined);
      });
      assert.deepEqual(await store.messageLog.append([{ topic: 'f', message: message(0) }]), [41]);
      await store.createDatabase('other');
      assert.deepEqual(forwarded.map((e) => e.op), ['messages.append', 'database.create']);
      assert.equal(store.messageLog.countTopic('f'), 0);
      assert.equal(store.hasDatabase('other'), false);
      store.operations.forward(null);
      await store.createDatabase('other');
      assert.equal(store.hasDatabase('other'), true);
    } finally {
      await store.close();
    }
  });

  it('a listener told of a state write applied between two appends reads the same assignedSequence wherever the records are applied, before they are durable', async function () {
    // What cluster-shares.ts pins a shared group's membership to: the place of a state write among the messages.
    const records: OperationEntry[][] = [
      [append('x', 0, 2), { op: 'state.put', key: 'share-members/n1/g/t', value: 1 }, append('x', 2, 3)],
      [{ op: 'state.put', key: 'share-members/n2/g/t', value: 2 }, append('y', 0, 1)],
    ];
    const seen: number[][] = [];
    for (let run = 0; run < 2; run++) {
      const store = await openLmdbStorage({ dataDir: folder(), defaultDatabase: 'main' });
      const places: number[] = [];
      try {
        assert.equal(store.messageLog.assignedSequence(), 0);
        store.operations.tap((entry) => { if (entry.op === 'state.put') places.push(store.messageLog.assignedSequence()); });
        const pending = records.flatMap((entries, i) => store.operations.applyAt(i + 1, entries));
        // Numbered when applied, before the commit is durable.
        assert.equal(store.messageLog.assignedSequence(), 6);
        await Promise.all(pending);
        assert.equal(store.messageLog.lastSequence(), 6);
      } finally {
        await store.close();
      }
      seen.push(places);
    }
    assert.deepEqual(seen, [[2, 5], [2, 5]]);
  });

  it('records applied back to back, without waiting, give the answers and the store they give applied one at a time: a schema or topic entry sees the writes still queued ahead of it', async function () {
    const insert = (table: string, k: string, database = 'main'): OperationEntry => ({ op: 'records.insert', database, table, columns: ['k'], ids: [null], values: [[k]], time: T });
    const records: OperationEntry[][] = [
      [{ op: 'table.create', database: 'main', table: 'claims', columns: [{ name: 'k', type: 'varchar', length: 20 }], time: T }],
      // An index on the table of the record before, then two inserts of one key: one wins.
      [{ op: 'index.create', database: 'main', table: 'claims', index: 'by_k', definition: { fields: [{ name: 'k', ascending: true }], unique: true } }],
      [insert('claims', 'k0')],
      [insert('claims', 'k0'), insert('claims', 'k1')],
      // A column added, and an index on it.
      [{ op: 'columns.add', database: 'main', table: 'claims', columns: [{ name: 'c', type: 'integer' }] }],
      [{ op: 'index.create', database: 'main', table: 'claims', index: 'by_c', definition: { fields: [{ name: 'c', ascending: true }] } }],
      // A table deleted and created again under its name, in one record.
      [{ op: 'table.delete', database: 'main', tables: ['claims'] }, { op: 'table.create', database: 'main', table: 'claims', columns: [{ name: 'k', type: 'varchar', length: 20 }], time: T }],
      [insert('claims', 'k0')],
      // A database and a table in it, then an index deleted the record after it was made.
      [{ op: 'database.create', name: 'other', time: T }, { op: 'table.create', database: 'other', table: 'u', columns: [{ name: 'k', type: 'varchar', length: 20 }], time: T }],
      [{ op: 'index.create', database: 'other', table: 'u', index: 'by_k', definition: { fields: [{ name: 'k', ascending: true }] } }, insert('u', 'x', 'other')],
      [{ op: 'index.delete', database: 'other', table: 'u', indexes: ['by_k'] }],
      // A topic made by a message, deleted, and made again by the next message.
      [append('x', 0, 2)],
      [{ op: 'topic.delete', topic: 'x' }],
      [append('x', 2, 1)],
      [{ op: 'topic.create', topic: 'y', time: T }],
      [{ op: 'topic.delete', topic: 'y' }, append('y', 3, 1)],
      // A topic made by a message, then, right before its delete, an append refused at once and
      // an empty one (neither queues a write to wait for).
      [append('z', 4, 1)],
      [{ op: 'messages.append', messages: [{ topic: 'z', message: { ...message(5), createTs: 'not a time' } }] }, { op: 'messages.append', messages: [] }],
      [{ op: 'topic.delete', topic: 'z' }],
    ];
    const outcome = async (answer: Promise<unknown>): Promise<unknown> => {
      try {
        return await answer;
      } catch (error) {
        if (error instanceof EngineError) return error.id;
        throw error;
      }
    };
    const contents = (store: StoragePort): unknown => ({
      databases: store.listDatabases(),
      tables: store.listDatabases().map((database) => store.listTables(database).map((table) => ({
        def: store.getTable(database, table), rows: readAll(store.readRecords(database, table, {})),
      }))),
      topics: store.messageLog.listTopics().map((t) => ({ ...t, sequences: store.messageLog.readTopic(t.topic, { limit: 100 }).map((m) => m.sequence) })),
    });
    const runs: Array<{ answers: unknown[]; contents: unknown }> = [];
    for (const backToBack of [false, true]) {
      const store = await openLmdbStorage({ dataDir: folder(), defaultDatabase: 'main' });
      try {
        const answers: unknown[] = [];
        if (backToBack) {
          // As a node applies what it reads in one turn: every record handed over before any is applied.
          const pending = records.map((entries, i) => store.operations.applyAt(i + 1, entries));
          for (const record of pending) answers.push(await Promise.all(record.map(outcome)));
        } else {
          for (let i = 0; i < records.length; i++) answers.push(await Promise.all(store.operations.applyAt(i + 1, records[i]).map(outcome)));
        }
        assert.deepEqual(store.operations.appliedPosition(), { sequence: records.length, applied: records[records.length - 1].length });
        runs.push({ answers, contents: JSON.parse(JSON.stringify(contents(store))) });
      } finally {
        await store.close();
      }
    }
    // One at a time, each entry sees all before it: the unique index exists and refuses the second k0.
    assert.deepEqual(runs[0].answers.slice(1, 4).map((a) => (a as unknown[]).map((x) => (typeof x === 'string' ? x : 'ok'))), [['ok'], ['ok'], ['DUPLICATE_KEY', 'ok']]);
    assert.deepEqual(runs[1].answers, runs[0].answers);
    assert.deepEqual(runs[1].contents, runs[0].contents);
  });

  it('a refused entry held back behind one applied alone leaves no unhandled rejection when its answer is kept unread (as a node keeps other nodes\' answers)', async function () {
    const store = await openLmdbStorage({ dataDir: folder(), defaultDatabase: 'main' });
    const unhandled: unknown[] = [];
    const note = (reason: unknown): void => { unhandled.push(reason); };
    process.on('unhandledRejection', note);
    try {
      const create: OperationEntry = { op: 'table.create', database: 'main', table: 't', columns: [{ name: 'k', type: 'integer' }], time: T };
      // The second create (TABLE_EXISTS) and the insert into a table that is not there wait behind the first create.
      const kept = [
        ...store.operations.applyAt(1, [create]),
        ...store.operations.applyAt(2, [create]),
        ...store.operations.applyAt(3, [{ op: 'records.insert', database: 'main', table: 'none', columns: ['k'], ids: [null], values: [[1]], time: T }]),
      ];
      await store.operations.applyAt(4, [{ op: 'state.put', key: 'last', value: 1 }])[0];
      // Node reports an unhandled rejection once the microtasks of the turn it happened in have run.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
      const outcomes = await Promise.allSettled(kept);
      assert.deepEqual(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as EngineError).id : 'ok')), ['ok', 'TABLE_EXISTS', 'TABLE_NOT_FOUND']);
    } finally {
      process.off('unhandledRejection', note);
      await store.close();
    }
  });
});
