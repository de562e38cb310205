/**
 * The storage conformance suite: every StoragePort implementation must pass it.
 *
 *   describeStorageConformance('lmdb', (dir) => openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' }));
 *
 * `open` gets a fresh temporary directory per test (and the same one again to test reopening).
 * The default database is whatever a fresh store lists as its only database.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EngineError, type ErrorId } from '../errors';
import type { CompareOp, FilterNode } from './filter-ast';
import type { LoggedMessage } from './message-log-port';
import type { KeyRange, MessageInput, ReadOptions, ReadSlices, StoragePort, StoredRecord, WriteOptions } from './storage-port';
import { readAll, rowOf } from './stored-values';
import type { ColumnInput, RecordId, Row } from './types';
import type { OperationEntry } from './operation-entries';
import { positionalRows } from './positional-rows';

function isError(id: ErrorId): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof EngineError, `expected EngineError ${id}, got ${String(error)}`);
    assert.equal(error.id, id, `expected ${id}, got ${error.id}: ${error.message}`);
    return true;
  };
}

async function rejectsWith(promise: Promise<unknown>, id: ErrorId): Promise<void> {
  await assert.rejects(promise, isError(id));
}

function throwsWith(fn: () => unknown, id: ErrorId): void {
  assert.throws(fn, isError(id));
}

const ids = (records: ReadonlyArray<{ id: RecordId }>): number[] => records.map((r) => r.id);
const col = (records: StoredRecord[], name: string): unknown[] => records.map((r) => r.row[name]);
const seqs = (messages: LoggedMessage[]): number[] => messages.map((m) => m.sequence);

type Direction = 'forward' | 'backward';

/** A cursor whose operations run in one call and answer rows (the suite checks rows). */
interface RowCursor {
  fetch(count: number, direction: Direction): StoredRecord[];
  skip(count: number, direction: Direction): number;
  hasMore(direction: Direction): boolean;
  moveTo(end: 'start' | 'end'): void;
  close(): void;
}

function message(i: number, createTs = `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}.000`): MessageInput {
  return {
    createTs,
    payload: { type: 'json', value: JSON.stringify({ i }) },
    qos: 1,
    retain: false,
    contentType: null,
    correlationData: null,
    responseTopic: null,
    expirySeconds: null,
    userProperties: null,
    payloadFormat: null,
    publisher: 'conformance',
  };
}

export function describeStorageConformance(label: string, open: (dataDir: string) => Promise<StoragePort>): void {
  describe(`storage conformance: ${label}`, function () {
    this.timeout(30000);
    let dir: string;
    let store: StoragePort;
    let main: string;

    beforeEach(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-storage-'));
      store = await open(dir);
      main = store.listDatabases()[0];
    });

    afterEach(async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    /** Rows by column name as positional rows decoded against the table's current definition (values trusted). */
    async function insert(database: string, table: string, rows: Row[], options?: WriteOptions): Promise<number[]> {
      return store.insertValues(database, table, positionalRows(store.getTable(database, table), rows), options);
    }

    /**
     * The same, decoded against a definition that is not the table's current one (with a column for
     * every name the rows use): the store checks every value in full.
     */
    async function insertChecked(database: string, table: string, rows: Row[], options?: WriteOptions): Promise<number[]> {
      const def = store.getTable(database, table);
      const known = new Set(def.columns.map((c) => c.name));
      const extra = [...new Set(rows.flatMap((row) => Object.keys(row)))].filter((name) => !known.has(name))
        .map((name) => ({ ...def.columns[1], name }));
      return store.insertValues(database, table, positionalRows({ ...def, columns: [...def.columns, ...extra] }, rows), options);
    }

    async function reopen(): Promise<void> {
      await store.close();
      store = await open(dir);
    }

    // The port reads stored values; the checks read rows built from them (rowOf).

    /** StoragePort.getRecords, as rows. */
    function getRows(database: string, table: string, recordIds: RecordId[], transactionId?: string): Array<Row | undefined> {
      const got = store.getRecords(database, table, recordIds, transactionId);
      const def = store.getTable(database, table);
      return got.map((values, i) => (values === undefined ? undefined : rowOf(def, recordIds[i], values)));
    }

    /** StoragePort.readRecords run to its end, as rows. */
    function readRows(database: string, table: string, options: ReadOptions): StoredRecord[] {
      const got = readAll(store.readRecords(database, table, options));
      const def = store.getTable(database, table);
      return got.map(({ id, values }) => ({ id, row: rowOf(def, id, values) }));
    }

    /** StoragePort.openCursor, its operations run to their end, as rows. */
    function openRows(database: string, table: string, options: ReadOptions): RowCursor {
      const cursor = store.openCursor(database, table, options);
      const def = store.getTable(database, table);
      return {
        fetch: (count, direction) => readAll(cursor.fetch(count, direction)).map(({ id, values }) => ({ id, row: rowOf(def, id, values) })),
        skip: (count, direction) => readAll(cursor.skip(count, direction)),
        hasMore: (direction) => readAll(cursor.hasMore(direction)),
        moveTo: (end) => cursor.moveTo(end),
        close: () => cursor.close(),
      };
    }

    /** Appends messages of one topic to the message log. */
    function appendTo(topic: string, messages: MessageInput[]): Promise<number[]> {
      return store.messageLog.append(messages.map((m) => ({ topic, message: m })));
    }

    const PEOPLE: ColumnInput[] = [
      { name: 'Name', type: 'varchar', length: 32 },
      { name: 'age', type: 'integer' },
      { name: 'city', type: 'varchar', length: 16, defaultValue: 'Paris' },
    ];

    async function people(rows: Row[] = []): Promise<number[]> {
      await store.createTable(main, 'people', PEOPLE);
      return rows.length ? insert(main, 'people', rows) : [];
    }

    // ---- databases ------------------------------------------------------------------------

    describe('databases', () => {
      it('starts with exactly the default database', () => {
        assert.equal(store.listDatabases().length, 1);
        assert.ok(store.hasDatabase(main));
        assert.deepEqual(store.listTables(main), []);
      });

      it('creates, lists and deletes databases (names are case-insensitive)', async () => {
        await store.createDatabase('Other');
        assert.ok(store.hasDatabase('other'));
        assert.ok(store.hasDatabase('OTHER'));
        assert.deepEqual(store.listDatabases(), [main, 'other'].sort());
        await rejectsWith(store.createDatabase('other'), 'DATABASE_EXISTS');
        await store.createTable('other', 't', [{ name: 'a', type: 'integer' }]);
        await insert('other', 't', [{ a: 1 }]);
        await store.deleteDatabase('other');
        assert.equal(store.hasDatabase('other'), false);
        throwsWith(() => store.listTables('other'), 'DATABASE_NOT_FOUND');
        await store.createDatabase('other');
        assert.deepEqual(store.listTables('other'), []);
      });

      it('refuses to delete the default database and unknown ones', async () => {
        await rejectsWith(store.deleteDatabase(main), 'DATABASE_IN_USE');
        await rejectsWith(store.deleteDatabase('nope'), 'DATABASE_NOT_FOUND');
      });
    });

    // ---- tables ---------------------------------------------------------------------------

    describe('tables', () => {
      it('creates a table with the record-ID column first and the automatic id_pk index', async () => {
        const def = await store.createTable(main, 'People', PEOPLE);
        assert.equal(def.name, 'people');
        assert.equal(def.database, main);
        assert.deepEqual(def.columns.map((c) => c.name), ['id', 'name', 'age', 'city']);
        const id = def.columns[0];
        assert.equal(id.type, 'bigint');
        assert.equal(id.primaryKey, 1);
        assert.equal(id.nullable, false);
        assert.equal(id.autoValue, 'incrementOnInsert');
        assert.equal(def.idDeclared, false);
        assert.equal(def.topic, null);
        assert.deepEqual(def.indexes.map((i) => [i.name, i.unique, i.automatic]), [['id_pk', true, true]]);
        assert.deepEqual(store.getTable(main, 'PEOPLE'), def);
        assert.deepEqual(store.listTables(main), ['people']);
      });

      it('reports errors for existing, missing and invalid tables', async () => {
        await people();
        await rejectsWith(store.createTable(main, 'people', PEOPLE), 'TABLE_EXISTS');
        await rejectsWith(store.createTable('nodb', 'x', PEOPLE), 'DATABASE_NOT_FOUND');
        throwsWith(() => store.getTable(main, 'nothing'), 'TABLE_NOT_FOUND');
        throwsWith(() => store.getTable('nodb', 'people'), 'DATABASE_NOT_FOUND');
        await rejectsWith(store.createTable(main, 'bad', [{ name: 'x', type: 'nosuchtype' as never }]), 'INVALID_TABLE_DEFINITION');
        await rejectsWith(store.createTable(main, 'bad', [{ name: 'x', type: 'integer' }, { name: 'X', type: 'integer' }]), 'INVALID_TABLE_DEFINITION');
        await rejectsWith(store.createTable(main, 'bad', [{ name: 'id', type: 'varchar' }]), 'INVALID_TABLE_DEFINITION');
        assert.deepEqual(store.listTables(main), ['people']);
      });

      it('lists tables sorted and deletes several in one call, all or none', async () => {
        for (const name of ['b', 'a', 'c']) await store.createTable(main, name, [{ name: 'x', type: 'integer' }]);
        await insert(main, 'a', [{ x: 1 }]);
        assert.deepEqual(store.listTables(main), ['a', 'b', 'c']);
        await rejectsWith(store.deleteTables(main, ['a', 'missing']), 'TABLE_NOT_FOUND');
        assert.deepEqual(store.listTables(main), ['a', 'b', 'c']);
        await store.deleteTables(main, ['a', 'B']);
        assert.deepEqual(store.listTables(main), ['c']);
        await store.createTable(main, 'a', [{ name: 'x', type: 'integer' }]);
        assert.equal(store.countRecords(main, 'a'), 0);
      });

      it('adds columns: existing rows read the default or null', async () => {
        await people([{ name: 'ann', age: 30 }]);
        const def = await store.addColumns(main, 'people', [
          { name: 'score', type: 'integer', defaultValue: 7 },
          { name: 'note', type: 'varchar', length: 10 },
        ]);
        assert.deepEqual(def.columns.map((c) => c.name), ['id', 'name', 'age', 'city', 'score', 'note']);
        assert.deepEqual(getRows(main, 'people', [1])[0], { id: 1, name: 'ann', age: 30, city: 'Paris', score: 7, note: null });
        await rejectsWith(store.addColumns(main, 'people', [{ name: 'age', type: 'integer' }]), 'INVALID_TABLE_DEFINITION');
        await store.patchRecords(main, 'people', [{ id: 1, row: { note: 'hi' } }]);
        assert.equal(getRows(main, 'people', [1])[0]!.note, 'hi');
      });
    });

    // ---- records --------------------------------------------------------------------------

    describe('records', () => {
      it('inserts with defaults and nulls and returns increasing ids', async () => {
        const got = await people([{ name: 'ann', age: 30 }, { name: 'bob' }, { name: 'cy', age: 5, city: 'Rome' }]);
        assert.deepEqual(got, [1, 2, 3]);
        assert.deepEqual(getRows(main, 'people', [1, 2, 3, 4]), [
          { id: 1, name: 'ann', age: 30, city: 'Paris' },
          { id: 2, name: 'bob', age: null, city: 'Paris' },
          { id: 3, name: 'cy', age: 5, city: 'Rome' },
          undefined,
        ]);
        assert.deepEqual(await insert(main, 'people', [{ name: 'dee' }]), [4]);
        assert.equal(store.countRecords(main, 'people'), 4);
      });

      it('rows decoded against another version of the table are checked in full: unknown columns, wrong types, missing non-nullable values', async () => {
        await store.createTable(main, 'strict', [
          { name: 'a', type: 'integer', nullable: false },
          { name: 'b', type: 'varchar', length: 8 },
        ]);
        await rejectsWith(insertChecked(main, 'strict', [{ a: 1, nope: 2 }]), 'COLUMN_NOT_FOUND');
        await rejectsWith(insertChecked(main, 'strict', [{ a: 'x' }]), 'INVALID_COLUMN_VALUE');
        await rejectsWith(insertChecked(main, 'strict', [{ b: 'x' }]), 'INVALID_COLUMN_VALUE');
        await rejectsWith(insertChecked(main, 'strict', [{ a: null }]), 'INVALID_COLUMN_VALUE');
        await rejectsWith(insert(main, 'strict', [{ b: 'x' }]), 'INVALID_COLUMN_VALUE'); // the default (null) of `a` is checked either way
        await rejectsWith(insert(main, 'nothing', [{ a: 1 }]), 'TABLE_NOT_FOUND');
        assert.equal(store.countRecords(main, 'strict'), 0);
      });

      it('inserts an array all-or-nothing', async () => {
        await people([{ name: 'ann' }]);
        await rejectsWith(insertChecked(main, 'people', [{ name: 'x' }, { name: 'y', age: 'old' }]), 'INVALID_COLUMN_VALUE');
        await store.createIndex(main, 'people', 'by_name', { unique: true, fields: [{ name: 'name', ascending: true }] });
        await rejectsWith(insert(main, 'people', [{ name: 'new1' }, { name: 'ann' }]), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'people', [{ name: 'dup' }, { name: 'dup' }]), 'DUPLICATE_KEY');
        assert.equal(store.countRecords(main, 'people'), 1);
        assert.deepEqual(ids(readRows(main, 'people', { index: 'by_name' })), [1]);
      });

      it('a unique index never compares a key with a null segment (a missing JSON property is null)', async () => {
        await store.createTable(main, 'docs', [{ name: 'n', type: 'integer' }, { name: 'doc', type: 'json' }]);
        await insert(main, 'docs', [{ n: 1, doc: {} }, { n: 1, doc: { code: null } }, { doc: { code: 'a' } }]);
        await store.createIndex(main, 'docs', 'by_code', { unique: true, fields: [{ name: 'doc', ascending: true, key: 'code', type: 'varchar', size: 8 }] });
        await store.createIndex(main, 'docs', 'by_n_code', { unique: true, fields: [{ name: 'n', ascending: true }, { name: 'doc', ascending: false, key: 'code', type: 'varchar', size: 8 }] });
        await insert(main, 'docs', [{ n: 1, doc: { other: true } }, { n: 2, doc: { code: 'b' } }]);
        await rejectsWith(insert(main, 'docs', [{ doc: { code: 'a' } }]), 'DUPLICATE_KEY');
        await store.patchRecords(main, 'docs', [{ id: 3, row: { doc: {} } }]);
        await insert(main, 'docs', [{ doc: { code: 'a' } }]);
        const tx = store.beginTransaction();
        await insert(main, 'docs', [{ n: 1, doc: {} }], { transactionId: tx });
        await store.commitTransaction(tx);
        assert.equal(store.countRecords(main, 'docs'), 7);
      });

      it('uses declared record IDs and assigns max+1 to rows without one', async () => {
        const def = await store.createTable(main, 'loaded', [{ name: 'id', type: 'bigint', primaryKey: 1 }, { name: 'v', type: 'varchar', length: 8 }]);
        assert.equal(def.idDeclared, true);
        assert.deepEqual(def.columns.map((c) => c.name), ['id', 'v']);
        assert.deepEqual(await insert(main, 'loaded', [{ id: 10, v: 'a' }, { id: 5, v: 'b' }]), [10, 5]);
        assert.deepEqual(await insert(main, 'loaded', [{ v: 'c' }]), [11]);
        await rejectsWith(insert(main, 'loaded', [{ id: 5, v: 'again' }]), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'loaded', [{ id: 20 }, { id: 20 }]), 'DUPLICATE_KEY');
        for (const bad of [0, -3, 1.5, 'x']) {
          await rejectsWith(insert(main, 'loaded', [{ id: bad as number }]), 'INVALID_COLUMN_VALUE');
        }
        assert.deepEqual(ids(readRows(main, 'loaded', {})), [5, 10, 11]);
        assert.deepEqual(getRows(main, 'loaded', [5])[0], { id: 5, v: 'b' });
      });

      it('keeps another primary-key column as metadata only', async () => {
        const def = await store.createTable(main, 'pk', [{ name: 'code', type: 'varchar', length: 8, primaryKey: 1 }]);
        assert.equal(def.columns[0].name, 'id');
        assert.equal(def.columns[1].primaryKey, 1);
        assert.deepEqual(await insert(main, 'pk', [{ code: 'a' }]), [1]);
      });

      it('checks declared record IDs of a batch all-or-nothing: consecutive, sparse, unordered and repeated', async () => {
        await store.createTable(main, 'loaded', [{ name: 'id', type: 'bigint', primaryKey: 1 }, { name: 'v', type: 'integer' }]);
        const rows = (list: number[]): Row[] => list.map((id) => ({ id, v: id }));
        assert.deepEqual(await insert(main, 'loaded', rows([100, 101, 102])), [100, 101, 102]);
        assert.deepEqual(await insert(main, 'loaded', rows([10, 20, 30])), [10, 20, 30]);
        // consecutive ids overlapping a stored one (at either end or inside)
        await rejectsWith(insert(main, 'loaded', rows([97, 98, 99, 100])), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'loaded', rows([102, 103, 104])), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'loaded', rows([18, 19, 20, 21])), 'DUPLICATE_KEY');
        // sparse ascending ids: between stored ones is fine, on one is not
        assert.deepEqual(await insert(main, 'loaded', rows([11, 25, 99])), [11, 25, 99]);
        await rejectsWith(insert(main, 'loaded', rows([12, 26, 30, 40])), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'loaded', rows([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 102])), 'DUPLICATE_KEY');
        // unordered ids, and ids repeated within the batch
        await rejectsWith(insert(main, 'loaded', rows([50, 40, 30])), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'loaded', rows([60, 61, 60])), 'DUPLICATE_KEY');
        assert.deepEqual(await insert(main, 'loaded', [{ id: 70, v: 1 }, { v: 2 }, { id: 65, v: 3 }]), [70, 103, 65]);
        assert.deepEqual(ids(readRows(main, 'loaded', {})), [10, 11, 20, 25, 30, 65, 70, 99, 100, 101, 102, 103]);
        // a long sparse batch over many stored keys
        const many = await insert(main, 'loaded', rows(Array.from({ length: 200 }, (_, i) => 1000 + i)));
        assert.equal(many.length, 200);
        await rejectsWith(insert(main, 'loaded', rows([500, 1199, 5000])), 'DUPLICATE_KEY');
        await rejectsWith(insert(main, 'loaded', rows([999, 1200, 1201, 5000, 1198].sort((a, b) => a - b))), 'DUPLICATE_KEY');
        assert.deepEqual(await insert(main, 'loaded', rows([999, 1200, 1201, 5000])), [999, 1200, 1201, 5000]);
        assert.equal(store.countRecords(main, 'loaded'), 216);
      });

      it('insertValues: positional rows, defaults, automatic values, same errors', async function () {
        const insertValues = store.insertValues.bind(store);
        const def = await store.createTable(main, 'pos', [
          { name: 'id', type: 'bigint', primaryKey: 1 },
          { name: 'name', type: 'varchar', length: 8 },
          { name: 'city', type: 'varchar', length: 8, defaultValue: 'Paris' },
          { name: 'made', type: 'timestamp', autoValue: 'timestampOnInsert' },
          { name: 'n', type: 'integer', nullable: false, defaultValue: 7 },
        ]);
        const got = await insertValues(main, 'pos', {
          table: def,
          ids: [5, null, 9],
          values: [['a', undefined, undefined, undefined], ['b', 'Rome', '2024-01-02T03:04:05.006', 1], [null, null, undefined, 2]],
        });
        assert.deepEqual(got, [5, 10, 9]);
        const rows = getRows(main, 'pos', [5, 10, 9]) as Row[];
        assert.equal(rows[0].name, 'a');
        assert.equal(rows[0].city, 'Paris');
        assert.match(String(rows[0].made), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
        assert.equal(rows[0].n, 7);
        assert.deepEqual(rows[1], { id: 10, name: 'b', city: 'Rome', made: '2024-01-02T03:04:05.006', n: 1 });
        assert.equal(rows[2].city, null);
        assert.deepEqual(await insertValues(main, 'pos', { table: def, ids: [null], values: [[]] }), [11]);
        // duplicates anywhere reject the whole batch
        await rejectsWith(insertValues(main, 'pos', { table: def, ids: [11, 12, 9], values: [[], [], []] }), 'DUPLICATE_KEY');
        await rejectsWith(insertValues(main, 'pos', { table: def, ids: [20, 21, 20], values: [[], [], []] }), 'DUPLICATE_KEY');
        await rejectsWith(insertValues(main, 'pos', { table: def, ids: [1, 2], values: [[]] }), 'INVALID_PARAMETER');
        await rejectsWith(insertValues(main, 'nothing', { table: def, ids: [1], values: [[]] }), 'TABLE_NOT_FOUND');
        assert.equal(store.countRecords(main, 'pos'), 4);
        // rows decoded against an older definition go through the full checks
        const newer = await store.addColumns(main, 'pos', [{ name: 'extra', type: 'integer', defaultValue: 3 }]);
        assert.notEqual(newer, def);
        assert.deepEqual(await insertValues(main, 'pos', { table: def, ids: [30], values: [['old', undefined, undefined, 4]] }), [30]);
        assert.deepEqual((getRows(main, 'pos', [30]) as Row[])[0].extra, 3);
        await rejectsWith(insertValues(main, 'pos', { table: def, ids: [31], values: [['old', undefined, undefined, 'x']] }), 'INVALID_COLUMN_VALUE');
        // in a transaction
        const tx = store.beginTransaction();
        assert.deepEqual(await insertValues(main, 'pos', { table: newer, ids: [40], values: [['tx', undefined, undefined, 1, undefined]] }, { transactionId: tx }), [40]);
        assert.deepEqual(getRows(main, 'pos', [40]), [undefined]);
        await store.commitTransaction(tx);
        assert.equal((getRows(main, 'pos', [40]) as Row[])[0].extra, 3);
      });

      it('getRecords: the stored values, column order, short arrays for added columns', async () => {
        await people([{ name: 'ann', age: 30 }]);
        await store.addColumns(main, 'people', [{ name: 'zip', type: 'varchar', length: 5, defaultValue: '75001' }]);
        await insert(main, 'people', [{ name: 'bob', zip: '00100' }]);
        const got = store.getRecords(main, 'people', [1, 2, 3, 0]);
        assert.equal(got.length, 4);
        assert.deepEqual(got[0]!.slice(0, 3), ['ann', 30, 'Paris']);
        assert.ok(got[0]!.length === 3 || got[0]![3] === '75001');
        assert.deepEqual(got[1], ['bob', null, 'Paris', '00100']);
        assert.equal(got[2], undefined);
        assert.equal(got[3], undefined);
        const tx = store.beginTransaction();
        await insert(main, 'people', [{ name: 'cy' }], { transactionId: tx });
        assert.deepEqual(store.getRecords(main, 'people', [3], tx), [['cy', null, 'Paris', '75001']]);
        assert.deepEqual(store.getRecords(main, 'people', [3]), [undefined]);
        store.rollbackTransaction(tx);
      });

      it('round-trips every kind of canonical value', async () => {
        await store.createTable(main, 'kinds', [
          { name: 'b', type: 'bit' }, { name: 'i', type: 'integer' }, { name: 'big', type: 'bigint' },
          { name: 'f', type: 'float' }, { name: 'd', type: 'date' }, { name: 't', type: 'time' },
          { name: 'ts', type: 'timestamp' }, { name: 's', type: 'varchar', length: 20 },
          { name: 'bin', type: 'varbinary', length: 8 }, { name: 'j', type: 'json' }, { name: 'v', type: 'variant' },
        ]);
        const row: Row = {
          b: true, i: -5, big: 2n ** 62n, f: 1.25, d: '2024-07-11', t: '21:18:01.000', ts: '2024-07-11T21:18:01.000',
          s: 'héllo', bin: new Uint8Array([1, 2, 255]), j: { a: [1, 'x', null], b: { c: true } },
          v: { type: 'binary', value: new Uint8Array([9, 8]) },
        };
        const [id] = await insert(main, 'kinds', [row, { big: 42n }]);
        const got = getRows(main, 'kinds', [id, id + 1]);
        assert.deepEqual({ ...got[0]!, bin: [...(got[0]!.bin as Uint8Array)], v: null },
          { ...row, id, bin: [1, 2, 255], v: null });
        const variant = got[0]!.v as { type: string; value: Uint8Array };
        assert.equal(variant.type, 'binary');
        assert.deepEqual([...variant.value], [9, 8]);
        assert.equal(got[1]!.big, 42, 'a safe bigint reads back as a number');
      });

      it('fills timestampOnInsert / timestampOnUpdate columns', async () => {
        await store.createTable(main, 'stamped', [
          { name: 'v', type: 'integer' },
          { name: 'created', type: 'timestamp', autoValue: 'timestampOnInsert' },
          { name: 'changed', type: 'timestamp', autoValue: 'timestampOnUpdate' },
        ]);
        const [id] = await insert(main, 'stamped', [{ v: 1 }]);
        const before = getRows(main, 'stamped', [id])[0]!;
        assert.match(String(before.created), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
        assert.equal(before.changed, null);
        await store.patchRecords(main, 'stamped', [{ id, row: { v: 2 } }]);
        const after = getRows(main, 'stamped', [id])[0]!;
        assert.equal(after.created, before.created);
        assert.match(String(after.changed), /^\d{4}-/);
      });

      it('replaces whole records (omitted columns become null or default)', async () => {
        await people([{ name: 'ann', age: 30, city: 'Rome' }]);
        await store.replaceRecords(main, 'people', [{ id: 1, row: { name: 'anne' } }]);
        assert.deepEqual(getRows(main, 'people', [1])[0], { id: 1, name: 'anne', age: null, city: 'Paris' });
        await rejectsWith(store.replaceRecords(main, 'people', [{ id: 99, row: { name: 'x' } }]), 'RECORD_NOT_FOUND');
        await rejectsWith(store.replaceRecords(main, 'people', [{ id: 1, row: { nope: 1 } }]), 'COLUMN_NOT_FOUND');
      });

      it('patches only the supplied columns', async () => {
        await people([{ name: 'ann', age: 30, city: 'Rome' }, { name: 'bob', age: 40 }]);
        await store.patchRecords(main, 'people', [{ id: 1, row: { age: 31 } }, { id: 2, row: { city: 'Oslo' } }]);
        assert.deepEqual(getRows(main, 'people', [1, 2]), [
          { id: 1, name: 'ann', age: 31, city: 'Rome' },
          { id: 2, name: 'bob', age: 40, city: 'Oslo' },
        ]);
        await rejectsWith(store.patchRecords(main, 'people', [{ id: 1, row: { age: 1 } }, { id: 77, row: { age: 2 } }]), 'RECORD_NOT_FOUND');
        assert.equal(getRows(main, 'people', [1])[0]!.age, 31, 'nothing applied');
      });

      it('deletes records and counts them', async () => {
        await people([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
        assert.equal(await store.deleteRecords(main, 'people', [1, 3, 9]), 2);
        assert.deepEqual(ids(readRows(main, 'people', {})), [2]);
        await rejectsWith(store.deleteRecords(main, 'people', [2, 9], { mustExist: true }), 'RECORD_NOT_FOUND');
        assert.equal(store.countRecords(main, 'people'), 1);
      });
    });

    // ---- indexes --------------------------------------------------------------------------

    describe('indexes', () => {
      it('enforces unique indexes on insert, replace and patch; non-unique allow duplicates', async () => {
        await people([{ name: 'ann', age: 1 }, { name: 'bob', age: 1 }]);
        const def = await store.createIndex(main, 'people', 'By_Name', { unique: true, fields: [{ name: 'NAME', ascending: true }] });
        assert.deepEqual(def, { name: 'by_name', unique: true, fields: [{ name: 'name', ascending: true }], automatic: false });
        await store.createIndex(main, 'people', 'by_age', { fields: [{ name: 'age', ascending: true }] });
        assert.deepEqual(store.getTable(main, 'people').indexes.map((i) => i.name), ['id_pk', 'by_name', 'by_age']);
        await rejectsWith(insert(main, 'people', [{ name: 'ann' }]), 'DUPLICATE_KEY');
        await rejectsWith(store.replaceRecords(main, 'people', [{ id: 2, row: { name: 'ann' } }]), 'DUPLICATE_KEY');
        await rejectsWith(store.patchRecords(main, 'people', [{ id: 2, row: { name: 'ann' } }]), 'DUPLICATE_KEY');
        await insert(main, 'people', [{ name: 'cy', age: 1 }]);
        assert.deepEqual(ids(readRows(main, 'people', { index: 'by_age', range: { prefix: { values: [1] } } })), [1, 2, 3]);
        // swapping unique values in one call is fine
        await store.patchRecords(main, 'people', [{ id: 1, row: { name: 'bob' } }, { id: 2, row: { name: 'ann' } }]);
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'id'), [2, 1, 3]);
        // the old key is free again after a change or a delete
        await store.patchRecords(main, 'people', [{ id: 3, row: { name: 'dee' } }]);
        await insert(main, 'people', [{ name: 'cy' }]);
        await store.deleteRecords(main, 'people', [1]);
        await insert(main, 'people', [{ name: 'bob' }]);
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'name'), ['ann', 'bob', 'cy', 'dee']);
      });

      it('builds an index from existing rows', async () => {
        await people([{ name: 'c', age: 3 }, { name: 'a', age: 1 }, { name: 'b', age: 2 }]);
        await store.createIndex(main, 'people', 'by_name', { unique: true, fields: [{ name: 'name', ascending: true }] });
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'name'), ['a', 'b', 'c']);
      });

      it('fails a unique index over duplicate rows and leaves nothing behind', async () => {
        await people([{ name: 'a' }, { name: 'b' }, { name: 'a' }]);
        await rejectsWith(store.createIndex(main, 'people', 'by_name', { unique: true, fields: [{ name: 'name', ascending: true }] }), 'DUPLICATE_KEY');
        assert.deepEqual(store.getTable(main, 'people').indexes.map((i) => i.name), ['id_pk']);
        throwsWith(() => readRows(main, 'people', { index: 'by_name' }), 'INDEX_NOT_FOUND');
        await store.deleteRecords(main, 'people', [3]);
        await store.createIndex(main, 'people', 'by_name', { unique: true, fields: [{ name: 'name', ascending: true }] });
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'name'), ['a', 'b']);
        await reopen();
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'name'), ['a', 'b']);
      });

      it('reports index errors and deletes indexes', async () => {
        await people([{ name: 'a' }]);
        await store.createIndex(main, 'people', 'by_name', { fields: [{ name: 'name', ascending: true }] });
        await rejectsWith(store.createIndex(main, 'people', 'by_name', { fields: [{ name: 'age', ascending: true }] }), 'INDEX_EXISTS');
        await rejectsWith(store.createIndex(main, 'people', 'id_pk', { fields: [{ name: 'age', ascending: true }] }), 'INDEX_EXISTS');
        await rejectsWith(store.createIndex(main, 'people', 'by_x', { fields: [{ name: 'nope', ascending: true }] }), 'COLUMN_NOT_FOUND');
        await rejectsWith(store.createIndex(main, 'people', 'by_y', { fields: [] }), 'INVALID_INDEX_DEFINITION');
        await rejectsWith(store.deleteIndexes(main, 'people', ['nope']), 'INDEX_NOT_FOUND');
        await rejectsWith(store.deleteIndexes(main, 'people', ['id_pk']), 'INVALID_INDEX_DEFINITION');
        await store.deleteIndexes(main, 'people', ['BY_NAME']);
        assert.deepEqual(store.getTable(main, 'people').indexes.map((i) => i.name), ['id_pk']);
        await insert(main, 'people', [{ name: 'a' }]);
        await store.createIndex(main, 'people', 'by_name', { fields: [{ name: 'name', ascending: true }] });
        assert.deepEqual(ids(readRows(main, 'people', { index: 'by_name' })), [1, 2]);
      });

      it('tells an index\'s key layout: each segment\'s typed column, a JSON property\'s of its segment type, and the key\'s user-visible bytes', async () => {
        await store.createTable(main, 'docs', [{ name: 'n', type: 'integer' }, { name: 'doc', type: 'json' }]);
        const index = await store.createIndex(main, 'docs', 'by_n_code', { fields: [{ name: 'n', ascending: true }, { name: 'doc', ascending: false, key: 'code', type: 'varchar', size: 8 }] });
        const layout = store.indexKeyLayout(store.getTable(main, 'docs'), index);
        assert.deepEqual(layout.columns.map((c) => [c.type, c.length]), [['integer', null], ['varchar', null]]);
        assert.equal(layout.columns[0].name, 'n');
        assert.equal(layout.byteLength, 4 + 8);
      });
    });

    // ---- range reads ----------------------------------------------------------------------

    describe('range reads', () => {
      beforeEach(async () => {
        await store.createTable(main, 'nums', [
          { name: 'n', type: 'integer' }, { name: 'grp', type: 'varchar', length: 8 }, { name: 'word', type: 'varchar', length: 12 },
        ]);
        const rows: Row[] = [];
        const words = ['apple', 'apricot', 'avocado', 'banana', 'blueberry', 'cherry'];
        for (let n = 1; n <= 20; n++) rows.push({ n, grp: n % 2 === 0 ? 'even' : 'odd', word: words[n % words.length] });
        // inserted in shuffled order so id order differs from n order
        rows.sort((a, b) => ((a.n as number) * 7) % 20 - ((b.n as number) * 7) % 20);
        await insert(main, 'nums', rows);
        await store.createIndex(main, 'nums', 'by_n', { unique: true, fields: [{ name: 'n', ascending: true }] });
        await store.createIndex(main, 'nums', 'by_grp_n', { fields: [{ name: 'grp', ascending: true }, { name: 'n', ascending: false }] });
        await store.createIndex(main, 'nums', 'by_word', { fields: [{ name: 'word', ascending: true }] });
      });

      const ns = (options: Parameters<StoragePort['readRecords']>[2]): unknown[] => col(readRows(main, 'nums', options), 'n');

      it('reads the whole index in order, and id order without an index', () => {
        assert.deepEqual(ns({ index: 'by_n' }), Array.from({ length: 20 }, (_, i) => i + 1));
        assert.deepEqual(ids(readRows(main, 'nums', {})), Array.from({ length: 20 }, (_, i) => i + 1));
        assert.deepEqual(ids(readRows(main, 'nums', { index: 'id_pk', reverse: true, limit: 3 })), [20, 19, 18]);
      });

      it('honours every bound form', () => {
        assert.deepEqual(ns({ index: 'by_n', range: { lower: { values: [5], inclusive: true }, upper: { values: [8], inclusive: true } } }), [5, 6, 7, 8]);
        assert.deepEqual(ns({ index: 'by_n', range: { lower: { values: [5], inclusive: false }, upper: { values: [8], inclusive: false } } }), [6, 7]);
        assert.deepEqual(ns({ index: 'by_n', range: { lower: { values: [18], inclusive: true } } }), [18, 19, 20]);
        assert.deepEqual(ns({ index: 'by_n', range: { upper: { values: [3], inclusive: false } } }), [1, 2]);
        assert.deepEqual(ns({ index: 'by_n', range: { upper: { values: [3], inclusive: true } } }), [1, 2, 3]);
        assert.deepEqual(ns({ index: 'by_n', range: { lower: { values: [9], inclusive: true }, upper: { values: [4], inclusive: true } } }), []);
        assert.deepEqual(ns({ index: 'by_n', range: { prefix: { values: [7] } } }), [7]);
        assert.deepEqual(ns({ index: 'by_n', range: { lower: { values: [25], inclusive: true } } }), []);
      });

      it('treats fewer values than segments as a prefix bound, honouring descending segments', () => {
        assert.deepEqual(ns({ index: 'by_grp_n', range: { prefix: { values: ['odd'] } }, limit: 3 }), [19, 17, 15]);
        assert.deepEqual(ns({ index: 'by_grp_n', range: { lower: { values: ['odd'], inclusive: true } }, limit: 2 }), [19, 17]);
        assert.deepEqual(ns({ index: 'by_grp_n', range: { upper: { values: ['odd'], inclusive: false } } }).length, 10);
        assert.deepEqual(ns({ index: 'by_grp_n', range: { lower: { values: ['even'], inclusive: false } } }).length, 10);
        // descending second segment: lower bound (even, 6) inclusive starts at 6 and goes down, then odd
        assert.deepEqual(ns({ index: 'by_grp_n', range: { lower: { values: ['even', 6], inclusive: true }, upper: { values: ['even'], inclusive: true } } }), [6, 4, 2]);
        assert.deepEqual(ns({ index: 'by_grp_n', range: { lower: { values: ['even', 6], inclusive: false }, upper: { values: ['even'], inclusive: true } } }), [4, 2]);
      });

      it('never matches a null key: a bound leaves out the first segment\'s nulls, and keys reaching a null undecided', async () => {
        await store.createTable(main, 'gaps', [{ name: 'a', type: 'integer' }, { name: 'b', type: 'varchar', length: 4 }]);
        // ids 1..5: (null, x), (1, a), (2, null), (2, b), (3, c)
        await insert(main, 'gaps', [{ b: 'x' }, { a: 1, b: 'a' }, { a: 2 }, { a: 2, b: 'b' }, { a: 3, b: 'c' }]);
        await store.createIndex(main, 'gaps', 'by_a', { fields: [{ name: 'a', ascending: true }] });
        await store.createIndex(main, 'gaps', 'by_a_desc', { fields: [{ name: 'a', ascending: false }] });
        await store.createIndex(main, 'gaps', 'by_a_b', { fields: [{ name: 'a', ascending: true }, { name: 'b', ascending: false }] });
        const read = (index: string, range: KeyRange, transactionId?: string): number[] =>
          ids(readRows(main, 'gaps', { index, range, ...(transactionId ? { transactionId } : {}) }));
        assert.deepEqual(read('by_a', { upper: { values: [2], inclusive: true } }), [2, 3, 4]);
        assert.deepEqual(read('by_a_desc', { lower: { values: [2], inclusive: true } }), [3, 4, 2]); // key order: 2, 2, 1; the null sorts last
        // (2, null) >= (2, "b") reaches the null undecided: out. (3, "c") is decided by its first segment.
        const lower: KeyRange = { lower: { values: [2, 'b'], inclusive: true } };
        assert.deepEqual(read('by_a_b', lower), [4, 5]);
        const cursor = openRows(main, 'gaps', { index: 'by_a_b', range: lower });
        assert.deepEqual(ids(cursor.fetch(10, 'forward')), [4, 5]);
        cursor.close();
        const tx = store.beginTransaction();
        await insert(main, 'gaps', [{ a: 2 }, { a: 2, b: 'a' }], { transactionId: tx });
        assert.deepEqual(read('by_a_b', lower, tx), [4, 7, 5]);
        store.rollbackTransaction(tx);
        throwsWith(() => read('by_a', { upper: { values: [null], inclusive: true } }), 'INVALID_QUERY');
        throwsWith(() => read('by_a_b', { lower: { values: [2, null], inclusive: true } }), 'INVALID_QUERY');
      });

      it('matches a byte prefix of a key (find_set length)', () => {
        const words = (byteLength: number, value: string): unknown[] =>
          [...new Set(col(readRows(main, 'nums', { index: 'by_word', range: { prefix: { values: [value], byteLength } } }), 'word'))];
        assert.deepEqual(words(2, 'apXXX'), ['apple', 'apricot']);
        assert.deepEqual(words(1, 'a'), ['apple', 'apricot', 'avocado']);
        assert.deepEqual(words(12, 'banana'), ['banana']);
        assert.deepEqual(words(3, 'bzz'), []);
      });

      it('applies reverse, then skip, then limit; skip counts only rows passing the filter', () => {
        assert.deepEqual(ns({ index: 'by_n', reverse: true, skip: 2, limit: 3 }), [18, 17, 16]);
        assert.deepEqual(ns({ index: 'by_n', range: { lower: { values: [10], inclusive: true } }, reverse: true, limit: 2 }), [20, 19]);
        assert.deepEqual(ns({ index: 'by_n', range: { upper: { values: [10], inclusive: true } }, reverse: true, limit: 2 }), [10, 9]);
        const even = compare('grp', '==', 'even');
        assert.deepEqual(ns({ index: 'by_n', filter: even, skip: 2, limit: 3 }), [6, 8, 10]);
        assert.deepEqual(ns({ index: 'by_n', filter: { kind: 'and', operands: [compare('n', '>', 15), compare('grp', '==', 'odd')], position: 1 } }), [17, 19]);
        assert.deepEqual(ns({ index: 'by_n', limit: 0 }), []);
        assert.deepEqual(ids(readRows(main, 'nums', { range: { lower: { values: [5], inclusive: false }, upper: { values: [8], inclusive: true } } })), [6, 7, 8]);
      });

      it('readRecords answers each record\'s stored values as getRecords does', () => {
        const even = compare('grp', '==', 'even');
        const cases: Array<Parameters<StoragePort['readRecords']>[2]> = [
          {}, { reverse: true, skip: 3, limit: 4 }, { index: 'by_n' }, { index: 'by_n', reverse: true, skip: 2, limit: 3 },
          { index: 'by_n', range: { lower: { values: [5], inclusive: false }, upper: { values: [8], inclusive: true } } },
          { index: 'by_grp_n', range: { prefix: { values: ['odd'] } }, limit: 3 },
          { index: 'by_grp_n', range: { lower: { values: ['even', 6], inclusive: true } }, reverse: true },
          { index: 'by_word', range: { prefix: { values: ['apXX'], byteLength: 2 } } },
          { index: 'by_n', filter: even, skip: 2, limit: 3 }, { filter: even, reverse: true, limit: 2 },
          { index: 'by_n', limit: 0 }, { index: 'by_n', range: { lower: { values: [25], inclusive: true } } },
        ];
        for (const options of cases) {
          const values = readAll(store.readRecords(main, 'nums', options));
          const recordIds = values.map((v) => v.id);
          assert.deepEqual(values.map((v) => v.values), store.getRecords(main, 'nums', recordIds), JSON.stringify(options));
          const rows = getRows(main, 'nums', recordIds) as Row[];
          assert.deepEqual(values.map((v) => v.values.slice(0, 3)), rows.map((r) => [r.n, r.grp, r.word]), JSON.stringify(options));
        }
        throwsWith(() => store.readRecords(main, 'nums', { index: 'nope' }), 'INDEX_NOT_FOUND');
      });

      it('readRecords in slices returns what it returns in one call, whatever the slice size', () => {
        const even = compare('grp', '==', 'even');
        const cases: Array<Parameters<StoragePort['readRecords']>[2]> = [
          {}, { reverse: true, skip: 3, limit: 4 }, { index: 'by_n', reverse: true, skip: 2, limit: 3 },
          { index: 'by_grp_n', range: { prefix: { values: ['odd'] } }, limit: 3 },
          { index: 'by_n', filter: even, skip: 2, limit: 3 }, { filter: even, reverse: true, limit: 2 },
          { filter: compare('grp', '==', 'none') }, { index: 'by_n', limit: 0 }, { index: 'by_n', skip: 100 },
        ];
        for (const options of cases) {
          const expected = readAll(store.readRecords(main, 'nums', options)).map((r) => r.id);
          for (const sliceSize of [1, 2, 7, 1000]) {
            const scan = store.readRecords(main, 'nums', options);
            let step = scan.next(sliceSize);
            for (let slices = 1; !step.done; slices++) {
              assert.ok(slices <= 40 / sliceSize + 2, 'a slice visits at most maxVisits entries');
              step = scan.next(sliceSize);
            }
            assert.deepEqual(step.value.map((r) => r.id), expected, `${JSON.stringify(options)} in slices of ${sliceSize}`);
            assert.deepEqual(scan.next(sliceSize), step, 'done stays done, with the same result');
          }
        }
        const scan = store.readRecords(main, 'nums', { filter: compare('grp', '==', 'none') });
        assert.equal(scan.next(3).done, false, 'three visits do not walk twenty rows');
      });

      it('rejects unknown indexes and too many values', () => {
        throwsWith(() => readRows(main, 'nums', { index: 'nope' }), 'INDEX_NOT_FOUND');
        throwsWith(() => readRows(main, 'nums', { index: 'by_n', range: { prefix: { values: [1, 2] } } }), 'INVALID_QUERY');
      });

      it('tells whether records remain in each direction and moves to either end', () => {
        const cursor = openRows(main, 'nums', { index: 'by_n' });
        assert.equal(cursor.hasMore('backward'), false, 'a fresh cursor stands before the first record');
        assert.equal(cursor.hasMore('forward'), true);
        assert.deepEqual(col(cursor.fetch(2, 'backward'), 'n'), []);
        cursor.moveTo('end');
        assert.equal(cursor.hasMore('forward'), false);
        assert.deepEqual(col(cursor.fetch(3, 'backward'), 'n'), [20, 19, 18]);
        assert.equal(cursor.hasMore('forward'), true);
        cursor.moveTo('start');
        assert.deepEqual(col(cursor.fetch(2, 'forward'), 'n'), [1, 2]);
        assert.equal(cursor.hasMore('backward'), true);
        cursor.close();
      });

      it('walks cursors forward, backward and skipping', () => {
        const cursor = openRows(main, 'nums', { index: 'by_n' });
        assert.equal(cursor.hasMore('forward'), true);
        assert.deepEqual(col(cursor.fetch(3, 'forward'), 'n'), [1, 2, 3]);
        assert.deepEqual(col(cursor.fetch(3, 'forward'), 'n'), [4, 5, 6]);
        assert.deepEqual(col(cursor.fetch(2, 'backward'), 'n'), [5, 4]);
        assert.equal(cursor.skip(10, 'forward'), 10);
        assert.deepEqual(col(cursor.fetch(100, 'forward'), 'n'), [15, 16, 17, 18, 19, 20]);
        assert.equal(cursor.hasMore('forward'), false);
        assert.deepEqual(cursor.fetch(5, 'forward'), []);
        assert.equal(cursor.skip(100, 'backward'), 19);
        assert.deepEqual(col(cursor.fetch(2, 'forward'), 'n'), [2, 3]);
        cursor.close();

        const odd = openRows(main, 'nums', { index: 'by_n', reverse: true, filter: compare('grp', '==', 'odd'), skip: 1 });
        assert.deepEqual(col(odd.fetch(3, 'forward'), 'n'), [17, 15, 13]);
        assert.deepEqual(col(odd.fetch(1, 'backward'), 'n'), [15]);
        odd.close();

        const byId = openRows(main, 'nums', {});
        assert.deepEqual(ids(byId.fetch(2, 'forward')), [1, 2]);
        assert.deepEqual(byId.fetch(2, 'backward').length, 1);
        byId.close();
      });

      it('cursor operations in slices give what they give in one call, whatever the slice size', async () => {
        const even = compare('grp', '==', 'even');
        const none = compare('grp', '==', 'none');
        type Step = ['fetch' | 'skip', number, 'forward' | 'backward'] | ['hasMore', 'forward' | 'backward'] | ['moveTo', 'start' | 'end'];
        const script: Step[] = [
          ['hasMore', 'backward'], ['fetch', 3, 'forward'], ['fetch', 2, 'backward'], ['hasMore', 'backward'], ['skip', 4, 'forward'],
          ['fetch', 0, 'forward'], ['fetch', 2, 'forward'], ['hasMore', 'forward'], ['skip', 100, 'backward'], ['fetch', 1, 'backward'],
          ['fetch', 3, 'forward'], ['moveTo', 'end'], ['hasMore', 'forward'], ['fetch', 3, 'backward'], ['skip', 2, 'backward'],
          ['fetch', 100, 'forward'], ['hasMore', 'forward'], ['fetch', 2, 'backward'], ['moveTo', 'start'], ['skip', 3, 'forward'],
          ['fetch', 100, 'backward'], ['fetch', 100, 'forward'], ['fetch', 5, 'forward'], ['hasMore', 'backward'],
        ];
        const tx = store.beginTransaction();
        await insert(main, 'nums', [{ n: 30, grp: 'even', word: 'tx' }, { n: 0, grp: 'even', word: 'tx' }], { transactionId: tx });
        await store.patchRecords(main, 'nums', [{ id: 4, row: { grp: 'odd' } }], { transactionId: tx });
        const cases: Array<Parameters<StoragePort['openCursor']>[2]> = [
          {}, { filter: even }, { filter: none }, { index: 'by_n', filter: even, skip: 2 }, { index: 'by_n', reverse: true, filter: even },
          { index: 'by_n', reverse: true, skip: 25 }, { index: 'by_grp_n', range: { prefix: { values: ['odd'] } }, filter: compare('n', '>', 6) },
          { index: 'by_n', filter: even, transactionId: tx }, { filter: even, reverse: true, skip: 1, transactionId: tx },
        ];
        /** Runs a sliced operation to its end; checks that no slice visits more than asked. */
        const finish = <T>(operation: ReadSlices<T>, sliceSize: number): T => {
          for (let slices = 0; ; slices++) {
            const step = operation.next(sliceSize);
            assert.ok(slices <= 60 / sliceSize + 2, 'a slice visits at most maxVisits entries');
            if (step.done) {
              assert.deepEqual(operation.next(sliceSize), step, 'done stays done, with the same result');
              return step.value;
            }
          }
        };
        for (const options of cases) {
          for (const sliceSize of [1, 2, 7, 1000]) {
            const plain = openRows(main, 'nums', options);
            const sliced = store.openCursor(main, 'nums', options);
            for (const step of script) {
              const what = `${JSON.stringify(options, (key, value) => (key === 'filter' ? `${value.left.name} ${value.op} ${value.right.text}` : value))} in slices of ${sliceSize}: ${step.join(' ')}`;
              if (step[0] === 'moveTo') {
                plain.moveTo(step[1]);
                sliced.moveTo(step[1]);
              } else if (step[0] === 'hasMore') {
                assert.equal(finish(sliced.hasMore(step[1]), sliceSize), plain.hasMore(step[1]), what);
              } else if (step[0] === 'skip') {
                assert.equal(finish(sliced.skip(step[1], step[2]), sliceSize), plain.skip(step[1], step[2]), what);
              } else {
                assert.deepEqual(finish(sliced.fetch(step[1], step[2]), sliceSize).map((r) => r.id), ids(plain.fetch(step[1], step[2])), what);
              }
            }
            assert.equal(finish(sliced.hasMore('forward'), sliceSize), plain.hasMore('forward'));
            plain.close();
            sliced.close();
          }
        }
        store.rollbackTransaction(tx);

        // An unfinished operation keeps its resume key to itself: the position moves when it finishes.
        const cursor = store.openCursor(main, 'nums', { index: 'by_n', filter: compare('n', '>', 17) });
        const nOf = (operation: ReadSlices<Array<{ values: readonly unknown[] }>>): unknown[] => readAll(operation).map((r) => r.values[0]);
        const skipping = cursor.skip(2, 'forward');
        assert.equal(skipping.next(3).done, false, 'three visits do not reach n = 18');
        assert.equal(readAll(cursor.hasMore('backward')), false, 'mid-slice, the cursor still stands before its first record');
        assert.deepEqual(skipping.next(100), { done: true, value: 2 });
        assert.deepEqual(nOf(cursor.fetch(5, 'backward')), [18]);
        // Another operation moving the cursor meanwhile: the unfinished one refuses to go on.
        cursor.moveTo('start');
        const fetching = cursor.fetch(1, 'forward');
        assert.equal(fetching.next(1).done, false, 'n = 1 does not match');
        cursor.moveTo('end');
        assert.throws(() => fetching.next(100), /another operation/);
        assert.deepEqual(nOf(cursor.fetch(1, 'backward')), [20], 'the refused operation moved nothing');
        // Closed or dropped between slices.
        const pending = cursor.fetch(1, 'backward');
        const peeking = cursor.hasMore('backward');
        cursor.close();
        throwsWith(() => pending.next(100), 'CURSOR_NOT_FOUND');
        assert.deepEqual(peeking.next(100), { done: true, value: false });
        throwsWith(() => cursor.fetch(1, 'forward'), 'CURSOR_NOT_FOUND');
        const onIndex = store.openCursor(main, 'nums', { index: 'by_n', filter: none });
        const walking = onIndex.fetch(1, 'forward');
        assert.equal(walking.next(2).done, false);
        await store.deleteIndexes(main, 'nums', ['by_n']);
        throwsWith(() => walking.next(100), 'INDEX_NOT_FOUND');
        onIndex.close();
      });

      it('sees writes committed between cursor fetches', async () => {
        const cursor = openRows(main, 'nums', { index: 'by_n', range: { lower: { values: [19], inclusive: true } } });
        assert.deepEqual(col(cursor.fetch(1, 'forward'), 'n'), [19]);
        await insert(main, 'nums', [{ n: 21, grp: 'odd', word: 'x' }]);
        assert.deepEqual(col(cursor.fetch(5, 'forward'), 'n'), [20, 21]);
        cursor.close();
      });
    });

    // ---- transactions ---------------------------------------------------------------------

    describe('transactions', () => {
      it('buffers writes: visible to the transaction, invisible to others until commit', async () => {
        await people([{ name: 'ann', age: 1 }, { name: 'bob', age: 2 }]);
        const tx = store.beginTransaction();
        const [id] = await insert(main, 'people', [{ name: 'cy' }], { transactionId: tx });
        await store.patchRecords(main, 'people', [{ id: 1, row: { age: 10 } }], { transactionId: tx });
        assert.equal(await store.deleteRecords(main, 'people', [2], { transactionId: tx }), 1);
        const ages = (rows: Array<Row | undefined>): unknown[] => rows.map((r) => (r === undefined ? 'absent' : r.age));
        assert.deepEqual(ages(getRows(main, 'people', [1, 2, id], tx)), [10, 'absent', null]);
        assert.deepEqual(getRows(main, 'people', [1, 2, id]).map((r) => r?.name), ['ann', 'bob', undefined]);
        await store.commitTransaction(tx);
        assert.deepEqual(ages(getRows(main, 'people', [1, 2, id])), [10, 'absent', null]);
        await rejectsWith(store.commitTransaction(tx), 'TRANSACTION_NOT_FOUND');
      });

      it('rolls back', async () => {
        await people([{ name: 'ann' }]);
        const tx = store.beginTransaction();
        await insert(main, 'people', [{ name: 'x' }], { transactionId: tx });
        await store.replaceRecords(main, 'people', [{ id: 1, row: { name: 'changed' } }], { transactionId: tx });
        store.rollbackTransaction(tx);
        assert.equal(store.countRecords(main, 'people'), 1);
        assert.equal(getRows(main, 'people', [1])[0]!.name, 'ann');
        throwsWith(() => store.rollbackTransaction(tx), 'TRANSACTION_NOT_FOUND');
      });

      it('rolls back to a savepoint: the writes after it are undone, those before it kept, and the commit applies those only', async () => {
        await people([{ name: 'ann', age: 1 }, { name: 'bob', age: 2 }]);
        await store.createIndex(main, 'people', 'by_name_u', { unique: true, fields: [{ name: 'name', ascending: true }] });
        const tx = store.beginTransaction();
        await store.patchRecords(main, 'people', [{ id: 1, row: { age: 10 } }], { transactionId: tx });
        const mark = store.savepointTransaction(tx);
        const [added] = await insert(main, 'people', [{ name: 'cy' }], { transactionId: tx });
        await store.patchRecords(main, 'people', [{ id: 1, row: { age: 11 } }], { transactionId: tx });
        await store.patchRecords(main, 'people', [{ id: 1, row: { age: 12 } }], { transactionId: tx });
        assert.equal(await store.deleteRecords(main, 'people', [2], { transactionId: tx }), 1);
        store.rollbackTransactionTo(tx, mark);
        const ages = (rows: Array<Row | undefined>): unknown[] => rows.map((r) => (r === undefined ? 'absent' : r.age));
        assert.deepEqual(ages(getRows(main, 'people', [1, 2, added], tx)), [10, 2, 'absent']);
        // the undone insert's unique key is free again in the transaction
        await insert(main, 'people', [{ name: 'cy', age: 3 }], { transactionId: tx });
        await store.commitTransaction(tx);
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name_u' }), 'name'), ['ann', 'bob', 'cy']);
        assert.deepEqual(ages(getRows(main, 'people', [1, 2])), [10, 2]);
        throwsWith(() => store.savepointTransaction(tx), 'TRANSACTION_NOT_FOUND');
      });

      it('range reads and cursors in a transaction merge its own writes in index order', async () => {
        await people([{ name: 'bob', age: 20 }, { name: 'dee', age: 40 }, { name: 'eve', age: 50 }]);
        await store.createIndex(main, 'people', 'by_name', { fields: [{ name: 'name', ascending: true }] });
        const tx = store.beginTransaction();
        await insert(main, 'people', [{ name: 'ann', age: 10 }, { name: 'cy', age: 30 }], { transactionId: tx });
        await store.patchRecords(main, 'people', [{ id: 3, row: { name: 'aaron' } }], { transactionId: tx });
        await store.deleteRecords(main, 'people', [2], { transactionId: tx });
        const names = (options: Parameters<StoragePort['readRecords']>[2]): unknown[] => col(readRows(main, 'people', options), 'name');
        assert.deepEqual(names({ index: 'by_name', transactionId: tx }), ['aaron', 'ann', 'bob', 'cy']);
        assert.deepEqual(names({ index: 'by_name', transactionId: tx, reverse: true, skip: 1, limit: 2 }), ['bob', 'ann']);
        assert.deepEqual(names({ index: 'by_name', transactionId: tx, range: { lower: { values: ['b'], inclusive: true } } }), ['bob', 'cy']);
        assert.deepEqual(names({ transactionId: tx }), ['bob', 'aaron', 'ann', 'cy'], 'record-ID order');
        assert.deepEqual(names({ index: 'by_name' }), ['bob', 'dee', 'eve'], 'others see committed data only');
        assert.deepEqual(readAll(store.readRecords(main, 'people', { index: 'by_name', transactionId: tx })).map((v) => v.values[0]), ['aaron', 'ann', 'bob', 'cy']);
        const cursor = openRows(main, 'people', { index: 'by_name', transactionId: tx });
        assert.deepEqual(col(cursor.fetch(2, 'forward'), 'name'), ['aaron', 'ann']);
        await insert(main, 'people', [{ name: 'bz' }], { transactionId: tx });
        assert.deepEqual(col(cursor.fetch(5, 'forward'), 'name'), ['bob', 'bz', 'cy'], 'a cursor sees later writes of its transaction');
        cursor.close();
        store.rollbackTransaction(tx);
      });

      it('rejects unknown transaction ids', async () => {
        await people();
        await rejectsWith(insert(main, 'people', [{ name: 'x' }], { transactionId: 'nope' }), 'TRANSACTION_NOT_FOUND');
        await rejectsWith(store.commitTransaction('nope'), 'TRANSACTION_NOT_FOUND');
        throwsWith(() => store.rollbackTransaction('nope'), 'TRANSACTION_NOT_FOUND');
        throwsWith(() => getRows(main, 'people', [1], 'nope'), 'TRANSACTION_NOT_FOUND');
      });

      it('validates when writes are made and again at commit (all or nothing)', async () => {
        await people([{ name: 'ann' }]);
        await store.createIndex(main, 'people', 'by_name', { unique: true, fields: [{ name: 'name', ascending: true }] });
        const tx = store.beginTransaction();
        await rejectsWith(insert(main, 'people', [{ name: 'ann' }], { transactionId: tx }), 'DUPLICATE_KEY');
        await rejectsWith(store.patchRecords(main, 'people', [{ id: 42, row: { name: 'z' } }], { transactionId: tx }), 'RECORD_NOT_FOUND');
        await store.patchRecords(main, 'people', [{ id: 1, row: { age: 5 } }], { transactionId: tx });
        await insert(main, 'people', [{ name: 'bob' }], { transactionId: tx });
        await rejectsWith(insert(main, 'people', [{ name: 'bob' }], { transactionId: tx }), 'DUPLICATE_KEY');
        // someone else takes 'bob' first
        await insert(main, 'people', [{ name: 'bob' }]);
        await rejectsWith(store.commitTransaction(tx), 'DUPLICATE_KEY');
        assert.equal(getRows(main, 'people', [1])[0]!.age, null, 'the patch was not applied');
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'name'), ['ann', 'bob']);
      });
    });

    // ---- integration tables ---------------------------------------------------------------

    describe('topics and integration tables', () => {
      it('names the table after the topic and creates it once', async () => {
        const info = await store.messageLog.ensureTopic('Sensors/Room 1/temp');
        assert.equal(info.table, 'mqtt_msg_sensors_room_1_temp');
        assert.equal(info.database, main);
        assert.equal(info.topic, 'Sensors/Room 1/temp');
        assert.deepEqual(await store.messageLog.ensureTopic('Sensors/Room 1/temp'), info);
        assert.deepEqual(store.messageLog.getTopic('Sensors/Room 1/temp'), info);
        assert.equal(store.messageLog.getTopic('other'), undefined);
        const def = store.getTable(main, info.table);
        assert.equal(def.topic, 'Sensors/Room 1/temp');
        assert.deepEqual(def.columns.map((c) => c.name), [
          'id', 'create_ts', 'source_payload', 'error', 'log', 'mqtt_qos', 'mqtt_retain', 'mqtt_content_type',
          'mqtt_correlation_data', 'mqtt_response_topic', 'mqtt_expiry_seconds', 'mqtt_user_properties',
          'mqtt_payload_format', 'mqtt_publisher',
        ]);
        assert.ok(def.indexes.some((i) => i.fields[0].name === 'create_ts'));
        const [a, b] = await Promise.all([store.messageLog.ensureTopic('x/y'), store.messageLog.ensureTopic('x/y')]);
        assert.deepEqual(a, b);
        assert.deepEqual(store.messageLog.listTopics().map((t) => t.topic), ['Sensors/Room 1/temp', 'x/y']);
      });

      it('shortens long names and avoids names already taken', async () => {
        const long = `${'verylongtopicsegment/'.repeat(6)}end`;
        const info = await store.messageLog.ensureTopic(long);
        assert.ok(Buffer.byteLength(info.table) <= 64, info.table);
        assert.ok(info.table.startsWith('mqtt_msg_verylongtopicsegment_'));
        await store.createTable(main, 'mqtt_msg_a_b', [{ name: 'x', type: 'integer' }]);
        const taken = await store.messageLog.ensureTopic('a/b');
        assert.notEqual(taken.table, 'mqtt_msg_a_b');
        assert.ok(taken.table.startsWith('mqtt_msg_a_b_'));
        const clash = await store.messageLog.ensureTopic('a_b');
        assert.notEqual(clash.table, taken.table);
      });

      it('is read-only to ordinary writes', async () => {
        const info = await store.messageLog.ensureTopic('ro');
        const row: Row = { create_ts: '2024-01-01T00:00:00.000', source_payload: { type: 'string', value: 'x' } };
        await rejectsWith(insert(main, info.table, [row]), 'TABLE_READ_ONLY');
        const [id] = await insert(main, info.table, [row], { allowIntegrationTables: true });
        await rejectsWith(store.patchRecords(main, info.table, [{ id, row: { error: true } }]), 'TABLE_READ_ONLY');
        await rejectsWith(store.replaceRecords(main, info.table, [{ id, row }]), 'TABLE_READ_ONLY');
        await rejectsWith(store.deleteRecords(main, info.table, [id]), 'TABLE_READ_ONLY');
        assert.equal(readRows(main, info.table, {}).length, 1, 'readable like any table');
      });

      it('appends messages with increasing ids and reads head, tail, from an id and since a time', async () => {
        const first = await appendTo('m/t', Array.from({ length: 5 }, (_, i) => message(i)));
        assert.deepEqual(first, [1, 2, 3, 4, 5]);
        const concurrent = await Promise.all(Array.from({ length: 5 }, (_, i) => appendTo('m/t', [message(5 + i)])));
        const all = [...first, ...concurrent.flat()];
        for (let i = 1; i < all.length; i++) assert.ok(all[i] > all[i - 1]);
        const info = store.messageLog.getTopic('m/t')!;
        const row = getRows(main, info.table, [1])[0]!;
        assert.deepEqual(row.source_payload, { type: 'json', value: '{"i":0}' });
        assert.equal(row.mqtt_qos, 1);
        assert.equal(row.mqtt_publisher, 'conformance');
        assert.equal(row.error, false);
        const log = store.messageLog;
        assert.deepEqual(seqs(log.readTopic('m/t', { limit: 3 })), [1, 2, 3]);
        assert.deepEqual(seqs(log.readTopic('m/t', { limit: 3, reverse: true })), [10, 9, 8]);
        assert.deepEqual(seqs(log.readTopic('m/t', { from: 4, limit: 2 })), [4, 5]);
        const since = (createTs: string, reverse: boolean): number[] =>
          ids(readRows(main, info.table, { index: 'create_ts_idx', range: { lower: { values: [createTs], inclusive: true } }, reverse, limit: 10 }));
        assert.deepEqual(since('2024-01-01T00:00:07.000', false), [8, 9, 10]);
        assert.deepEqual(since('2024-01-01T00:00:08.500', true), [10]);
        assert.deepEqual(log.readTopic('no/such', { limit: 3 }), []);
      });

      it('deletes a topic with its table', async () => {
        const info = await store.messageLog.ensureTopic('gone');
        await appendTo('gone', [message(1)]);
        await store.messageLog.deleteTopic('gone');
        assert.equal(store.messageLog.getTopic('gone'), undefined);
        assert.ok(!store.listTables(main).includes(info.table));
        const again = await store.messageLog.ensureTopic('gone');
        assert.deepEqual(seqs(store.messageLog.readTopic('gone', { limit: 5 })), []);
        assert.equal(again.table, info.table);
      });

      it('reads the log from a global position, in append order across topics', async () => {
        const log = store.messageLog;
        assert.equal(log.lastSequence(), 0);
        await rejectsWith(log.append([{ topic: 'ok/x', message: message(1) }, { topic: 'bad/#', message: message(2) }]), 'INVALID_TOPIC');
        await rejectsWith(log.append([{ topic: 'ok/x', message: { ...message(1), payload: null as never } }]), 'INVALID_PARAMETER');
        assert.equal(log.getTopic('ok/x'), undefined, 'nothing written');
        const a = log.append([{ topic: 'g/a', message: message(1) }, { topic: 'g/b', message: message(2) }]);
        const b = appendTo('g/c', [message(3)]);
        const c = log.append([{ topic: 'g/a', message: message(4) }]);
        assert.deepEqual([...await a, ...await b, ...await c], [1, 2, 3, 4], 'one turn, sequences in issue order');
        assert.equal(log.lastSequence(), 4);
        const all = log.readFrom(0, 10);
        assert.deepEqual(all.map((m) => [m.sequence, m.topic]), [[1, 'g/a'], [2, 'g/b'], [3, 'g/c'], [4, 'g/a']]);
        assert.deepEqual(all[1].payload, { type: 'json', value: '{"i":2}' });
        assert.equal(all[1].publisher, 'conformance');
        assert.deepEqual(log.readFrom(2, 1).map((m) => m.sequence), [3]);
        assert.deepEqual(log.readFrom(4, 10), []);
        await log.append([{ topic: 'g/b', message: message(9, '2023-12-31T00:00:00.000') }]);
        assert.equal(log.readFrom(4, 1)[0].createTs, all[3].createTs, 'create_ts never goes back along the log');
        const info = store.messageLog.getTopic('g/a')!;
        assert.deepEqual(ids(readRows(main, info.table, {})), [1, 4], 'the table is the topic\'s slice of the log');
        assert.deepEqual(getRows(main, info.table, [1, 2, 3, 4]).map((r) => r === undefined), [false, true, true, false]);
      });

      it('refuses a call whole: a message storage cannot encode leaves no message, topic or sequence behind', async () => {
        const log = store.messageLog;
        const before = log.lastSequence();
        const bad = { ...message(2), payload: { type: 'json', value: 2n ** 80n } as never };
        await assert.rejects(log.append([{ topic: 'whole/a', message: message(1) }, { topic: 'whole/b', message: bad }]));
        assert.equal(log.getTopic('whole/a'), undefined, 'the first message\'s topic is not created');
        assert.equal(log.lastSequence(), before, 'no sequence is used');
        await rejectsWith(log.append([{ topic: 'whole/c', message: message(1, 'zzzz') }]), 'INVALID_PARAMETER');
        await rejectsWith(log.append([{ topic: 'whole/\ud800', message: message(1) }]), 'INVALID_TOPIC');
        const seqs = await log.append([{ topic: 'whole/a', message: message(3) }]);
        assert.deepEqual(seqs, [before + 1]);
        assert.equal(log.countTopic('whole/a'), 1);
        await log.deleteTopic('whole/a');
      });

      it('appendEach refuses only the offending entries: a topic over the rule\'s 65,500 bytes, a wildcard, a bad message; the others are stored in order', async () => {
        const log = store.messageLog;
        const before = log.lastSequence();
        const tooLong = `long/${'é'.repeat(32_748)}`; // 32,753 characters, 5 + 2 × 32,748 = 65,501 bytes
        const results = await log.appendEach([
          { topic: 'each/a', message: message(1) },
          { topic: tooLong, message: message(2) },
          { topic: 'each/b', message: message(3) },
          { topic: 'each/#', message: message(4) },
          { topic: 'each/a', message: { ...message(5), payload: null as never } },
          { topic: 'each/a', message: message(6) },
        ]);
        assert.deepEqual(results.map((r) => (typeof r === 'number' ? r - before : r.id)), [
          1, 'INVALID_TOPIC', 2, 'INVALID_TOPIC', 'INVALID_PARAMETER', 3,
        ]);
        assert.equal(log.getTopic(tooLong), undefined);
        assert.deepEqual(log.readTopic('each/a', { limit: 5 }).map((m) => m.payload), [message(1).payload, message(6).payload]);
        assert.equal(log.countTopic('each/b'), 1);
        const [onlyRefused] = await log.appendEach([{ topic: 'each/#', message: message(7) }]);
        assert.equal(typeof onlyRefused === 'number' ? onlyRefused : onlyRefused.id, 'INVALID_TOPIC', 'a call of only refused entries answers each');
        assert.equal(log.lastSequence(), before + 3);
        await log.deleteTopic('each/a');
        await log.deleteTopic('each/b');
      });

      it('lastSequence moves only when the append is durable (a position no crash can hand out again)', async () => {
        const log = store.messageLog;
        const before = log.lastSequence();
        let resolved = false;
        const appended = log.append([{ topic: 'durable/a', message: message(1) }]).then((seqs) => { resolved = true; return seqs; });
        // Look at every turn while the commit is on its way to disk (the write runs, then syncs).
        const seen = new Set<number>();
        while (!resolved) {
          seen.add(log.lastSequence());
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        assert.deepEqual([...seen], [before], 'not before the append resolves');
        const [seq] = await appended;
        assert.equal(log.lastSequence(), seq);
        await log.deleteTopic('durable/a');
      });

      it('stores a topic of any length MQTT allows (65,500 bytes)', async () => {
        const log = store.messageLog;
        const long = `long/${'x'.repeat(65_000)}`;
        const [seq] = await log.append([{ topic: long, message: message(1) }]);
        assert.equal(log.getTopic(long)?.topic, long);
        assert.deepEqual(log.readTopic(long, { limit: 5 }).map((m) => m.sequence), [seq]);
        await log.deleteTopic(long);
        assert.equal(log.getTopic(long), undefined);
      });

      it('topicsVersion changes with every topic created or deleted, never back to an earlier value (same count, new topic)', async () => {
        const log = store.messageLog;
        const seen = [log.topicsVersion()];
        await log.append([{ topic: 'version/a', message: message(1) }]);
        seen.push(log.topicsVersion());
        const count = log.topicCount();
        await log.deleteTopic('version/a');
        seen.push(log.topicsVersion());
        await log.append([{ topic: 'version/b', message: message(2) }]);
        seen.push(log.topicsVersion());
        assert.equal(log.topicCount(), count, 'one topic deleted, one created: the count is as it was');
        assert.equal(new Set(seen).size, seen.length, `a version came back: ${seen.join(', ')}`);
        await log.append([{ topic: 'version/b', message: message(3) }]);
        assert.equal(log.topicsVersion(), seen[seen.length - 1], 'a message to a known topic leaves it');
      });

      it('reads one topic by sequence range, forward and reverse, with a limit', async () => {
        const log = store.messageLog;
        for (let i = 1; i <= 10; i++) await log.append([{ topic: i % 2 ? 'odd' : 'even', message: message(i) }]);
        const seqs = (topic: string, o: Parameters<typeof log.readTopic>[1]): number[] => log.readTopic(topic, o).map((m) => m.sequence);
        assert.deepEqual(seqs('odd', { limit: 10 }), [1, 3, 5, 7, 9]);
        assert.deepEqual(seqs('odd', { limit: 2, reverse: true }), [9, 7]);
        assert.deepEqual(seqs('odd', { from: 3, to: 7, limit: 10 }), [3, 5, 7]);
        assert.deepEqual(seqs('odd', { from: 4, to: 8, limit: 10, reverse: true }), [7, 5]);
        assert.deepEqual(seqs('even', { from: 5, limit: 2 }), [6, 8]);
        assert.deepEqual(seqs('none', { limit: 2 }), []);
        assert.equal(log.countTopic('odd'), 5);
        assert.equal(log.readTopic('even', { limit: 1 })[0].topic, 'even');
        // skip passes over messages of the range first, either way.
        assert.deepEqual(seqs('odd', { limit: 2, skip: 1 }), [3, 5]);
        assert.deepEqual(seqs('odd', { limit: 10, reverse: true, skip: 3 }), [3, 1]);
        assert.deepEqual(seqs('odd', { from: 3, limit: 10, skip: 10 }), []);
        assert.equal(log.topicCount(), log.listTopics().length);
      });

      it('serves the integration table like any table: list, count, get, reads by id and create_ts_idx, cursors, scans', async () => {
        const ts = (i: number): string => `2024-01-01T00:00:${String(i).padStart(2, '0')}.000`;
        await appendTo('other', [message(0, ts(0))]);
        await appendTo('v/t', Array.from({ length: 6 }, (_, i) => message(i + 1, ts(10 + i))));
        await appendTo('other', [message(0, ts(30))]);
        const info = store.messageLog.getTopic('v/t')!;
        assert.ok(store.listTables(main).includes(info.table));
        assert.ok(store.listTables(main).includes(store.messageLog.getTopic('other')!.table));
        const def = store.getTable(main, info.table);
        assert.equal(def.idDeclared, false);
        assert.deepEqual(def.indexes.map((x) => x.name), ['id_pk', 'create_ts_idx']);
        assert.equal(store.countRecords(main, info.table), 6);
        assert.deepEqual(ids(readRows(main, info.table, {})), [2, 3, 4, 5, 6, 7]);
        assert.deepEqual(ids(readRows(main, info.table, { reverse: true, skip: 1, limit: 2 })), [6, 5]);
        assert.deepEqual(ids(readRows(main, info.table, { range: { lower: { values: [3], inclusive: false }, upper: { values: [6], inclusive: true } } })), [4, 5, 6]);
        const byTs = (range: KeyRange, reverse = false): number[] => ids(readRows(main, info.table, { index: 'create_ts_idx', range, reverse }));
        assert.deepEqual(byTs({}), [2, 3, 4, 5, 6, 7]);
        assert.deepEqual(byTs({ lower: { values: [ts(12)], inclusive: true } }), [4, 5, 6, 7]);
        assert.deepEqual(byTs({ lower: { values: [ts(12)], inclusive: false }, upper: { values: [ts(14)], inclusive: false } }), [5]);
        assert.deepEqual(byTs({ lower: { values: [ts(11)], inclusive: true }, upper: { values: [ts(14)], inclusive: true } }, true), [6, 5, 4, 3]);
        assert.deepEqual(byTs({ upper: { values: [ts(9)], inclusive: true } }), []);
        assert.deepEqual(byTs({ lower: { values: [ts(40)], inclusive: true } }), []);
        assert.deepEqual(ids(readRows(main, info.table, { filter: compare('mqtt_qos', '==', 1), limit: 2 })), [2, 3]);
        const values = readAll(store.readRecords(main, info.table, { index: 'create_ts_idx', reverse: true, limit: 2 }));
        assert.deepEqual(values.map((v) => v.id), [7, 6]);
        assert.equal(values[0].values[0], ts(15));
        const scan = store.readRecords(main, info.table, { index: 'create_ts_idx' });
        let step = scan.next(2);
        for (let slices = 1; !step.done; slices++) {
          assert.ok(slices <= 7, 'a slice visits at most maxVisits entries');
          step = scan.next(2);
        }
        assert.deepEqual(step.value.map((v) => v.id), [2, 3, 4, 5, 6, 7]);
        const cursor = openRows(main, info.table, { index: 'create_ts_idx' });
        assert.deepEqual(ids(cursor.fetch(2, 'forward')), [2, 3]);
        await appendTo('v/t', [message(9, ts(20))]);
        assert.deepEqual(ids(cursor.fetch(10, 'forward')), [4, 5, 6, 7, 9]);
        assert.deepEqual(ids(cursor.fetch(2, 'backward')), [7, 6]);
        cursor.close();
        const tx = store.beginTransaction();
        assert.equal(getRows(main, info.table, [4], tx)[0]!.id, 4);
        assert.deepEqual(ids(readRows(main, info.table, { transactionId: tx, limit: 2 })), [2, 3]);
        store.rollbackTransaction(tx);
      });

      it('refuses writes, schema changes and indexes on integration tables; deleteTables deletes the topic', async () => {
        await appendTo('w/t', [message(1), message(2)]);
        const info = store.messageLog.getTopic('w/t')!;
        const row: Row = { create_ts: '2024-01-01T00:00:00.000', source_payload: { type: 'string', value: 'x' } };
        const tx = store.beginTransaction();
        await rejectsWith(insert(main, info.table, [row], { transactionId: tx, allowIntegrationTables: true }), 'TABLE_READ_ONLY');
        store.rollbackTransaction(tx);
        await rejectsWith(store.deleteRecords(main, info.table, [1], { allowIntegrationTables: true }), 'TABLE_READ_ONLY');
        await rejectsWith(store.createIndex(main, info.table, 'by_qos', { fields: [{ name: 'mqtt_qos', ascending: true }] }), 'INVALID_INDEX_DEFINITION');
        await rejectsWith(store.deleteIndexes(main, info.table, ['create_ts_idx']), 'INVALID_INDEX_DEFINITION');
        await rejectsWith(store.addColumns(main, info.table, [{ name: 'extra', type: 'integer' }]), 'INVALID_TABLE_DEFINITION');
        await rejectsWith(store.createTable(main, info.table, [{ name: 'x', type: 'integer' }]), 'TABLE_EXISTS');
        await appendTo('w/keep', [message(3)]);
        const cursor = openRows(main, info.table, {});
        assert.deepEqual(ids(cursor.fetch(1, 'forward')), [1]);
        await store.deleteTables(main, [info.table]);
        throwsWith(() => cursor.fetch(1, 'forward'), 'TABLE_NOT_FOUND');
        assert.equal(store.messageLog.getTopic('w/t'), undefined);
        throwsWith(() => store.getTable(main, info.table), 'TABLE_NOT_FOUND');
        assert.deepEqual(store.messageLog.readFrom(0, 10).map((m) => m.sequence), [3], 'its messages left the log');
        assert.deepEqual(await appendTo('w/t', [message(4)]), [4], 'sequences are never reused');
        await reopen();
        assert.deepEqual(await appendTo('w/t', [message(5)]), [5]);
        assert.deepEqual(store.messageLog.readFrom(0, 10).map((m) => [m.sequence, m.topic]), [[3, 'w/keep'], [4, 'w/t'], [5, 'w/t']]);
        await store.messageLog.deleteTopic('w/t');
        await reopen();
        assert.deepEqual(await appendTo('w/x', [message(6)]), [6], 'not even when the newest messages were deleted');
      });
    });

    // ---- the message log: read by sequence, the state store --------------------------------

    describe('message log: read by sequence and state', () => {
      it('reads one message by sequence like readFrom, and nothing absent or of a deleted topic', async () => {
        const log = store.messageLog;
        const [a, b] = await log.append([{ topic: 'r/a', message: message(1) }, { topic: 'r/b', message: message(2) }]);
        assert.deepEqual(log.read(a), log.readFrom(a - 1, 1)[0]);
        assert.deepEqual(log.read(b), log.readFrom(a, 1)[0]);
        assert.equal(log.read(b)!.topic, 'r/b');
        assert.deepEqual(log.read(b)!.payload, { type: 'json', value: '{"i":2}' });
        for (const absent of [0, -1, 1.5, b + 1, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) assert.equal(log.read(absent), undefined, String(absent));
        await log.deleteTopic('r/a');
        assert.equal(log.read(a), undefined, 'a deleted topic\'s message is gone at once (before its purge)');
        assert.equal(log.read(b)!.sequence, b);
        await reopen();
        assert.equal(store.messageLog.read(a), undefined);
        assert.equal(store.messageLog.read(b)!.topic, 'r/b');
      });

      it('trimTopic removes a topic\'s oldest messages up to a sequence, and only that topic\'s', async () => {
        const log = store.messageLog;
        const appends = [];
        for (let i = 1; i <= 10; i++) appends.push({ topic: i % 2 === 0 ? 'tr/even' : 'tr/odd', message: message(i) });
        const seqs = await log.append(appends);
        const even = seqs.filter((_, i) => i % 2 === 1);
        const odd = seqs.filter((_, i) => i % 2 === 0);
        assert.equal(await log.trimTopic('tr/even', even[2]), 3, 'the count removed');
        assert.deepEqual(log.readTopic('tr/even', { limit: 10 }).map((m) => m.sequence), even.slice(3));
        assert.equal(log.countTopic('tr/even'), 2);
        assert.equal(log.read(even[0]), undefined, 'gone from the log too');
        assert.deepEqual(log.readFrom(0, 20).map((m) => m.sequence), [...odd, ...even.slice(3)].sort((a, b) => a - b));
        assert.deepEqual(log.readTopic('tr/odd', { limit: 10 }).map((m) => m.sequence), odd, 'another topic is untouched');
        assert.equal(await log.trimTopic('tr/even', even[2]), 0, 'nothing left to trim');
        assert.equal(await log.trimTopic('tr/none', 100), 0, 'an unknown topic trims nothing');
        assert.equal(await log.trimTopic('tr/odd', 0), 0);
        assert.equal(await log.trimTopic('tr/odd', odd[2], odd[1]), 2, 'keep: one sequence left in place');
        assert.deepEqual(log.readTopic('tr/odd', { limit: 10 }).map((m) => m.sequence), [odd[1], ...odd.slice(3)]);
        // The newest messages trimmed: their sequences are still never handed out again.
        assert.equal(await log.trimTopic('tr/odd', Number.MAX_SAFE_INTEGER), 3);
        assert.equal(await log.trimTopic('tr/even', Number.MAX_SAFE_INTEGER), 2);
        assert.ok(log.getTopic('tr/even'), 'the topic stays');
        assert.equal(log.countTopic('tr/even'), 0);
        await reopen();
        const [next] = await store.messageLog.append([{ topic: 'tr/even', message: message(11) }]);
        assert.equal(next, seqs[9] + 1);
        assert.deepEqual(store.messageLog.readTopic('tr/even', { limit: 10 }).map((m) => m.sequence), [next]);
      });

      it('trimTopic removes more than one commit\'s worth', async () => {
        const log = store.messageLog;
        const batch = [];
        for (let i = 0; i < 4500; i++) batch.push({ topic: 'tr/big', message: message(i) });
        const seqs = await log.append(batch);
        assert.equal(await log.trimTopic('tr/big', seqs[4399], seqs[2500]), 4399, 'the kept one stays over several commits');
        assert.equal(log.read(seqs[2500])!.sequence, seqs[2500]);
        assert.deepEqual(log.readTopic('tr/big', { limit: 1000 }).map((m) => m.sequence), [seqs[2500], ...seqs.slice(4400)]);
      });

      it('puts, gets, lists by prefix in key order and removes state, seen by reads before it is durable', async () => {
        const state = store.messageLog.state;
        assert.equal(state.get('s/none'), undefined);
        const value = { position: 3, inflight: { 7: 1 }, bytes: Buffer.from([1, 2]) };
        const writes = [
          state.put('s/b', value), state.put('s/a', 1), state.put('s/\u{1F600}', 'astral'), state.put('s/\uFFFD', 'bmp'),
          state.put('t/a', 'other prefix'),
        ];
        value.position = 4; // stored as it was when put
        const expected: [string, unknown][] = [
          ['s/a', 1], ['s/b', { position: 3, inflight: { 7: 1 }, bytes: Buffer.from([1, 2]) }], ['s/\uFFFD', 'bmp'], ['s/\u{1F600}', 'astral'],
        ];
        assert.deepEqual(state.get('s/b'), expected[1][1], 'seen before the commit');
        assert.deepEqual([...state.entries('s/')], expected, 'key order is code point order');
        await Promise.all(writes);
        assert.deepEqual(state.get('s/b'), expected[1][1]);
        assert.deepEqual([...state.entries('s/')], expected, 'the same once durable');
        assert.deepEqual([...state.entries('')].map(([k]) => k), [...expected.map(([k]) => k), 't/a']);
        assert.deepEqual([...state.entries('s/a')], [['s/a', 1]]);
        assert.deepEqual([...state.entries('u/')], []);
        const removed = state.remove('s/a');
        const replaced = state.put('s/b', 'new');
        assert.equal(state.get('s/a'), undefined, 'a removal is seen before the commit');
        assert.deepEqual([...state.entries('s/')].map(([k, v]) => [k, v]).slice(0, 1), [['s/b', 'new']]);
        await Promise.all([removed, replaced, state.remove('s/never')]);
        assert.equal(state.get('s/a'), undefined);
        assert.deepEqual([...state.entries('s/')].map(([k]) => k), ['s/b', 's/\uFFFD', 's/\u{1F600}']);
        const last = state.put('s/b', 'last');
        assert.equal(state.get('s/b'), 'last', 'the newest write of a key wins');
        await last;
        await reopen();
        const again = store.messageLog.state;
        assert.deepEqual([...again.entries('s/')], [['s/b', 'last'], ['s/\uFFFD', 'bmp'], ['s/\u{1F600}', 'astral']]);
        assert.equal(again.get('t/a'), 'other prefix');
        await rejectsWith(again.put('', 1), 'INVALID_PARAMETER');
      });

      it('keeps keys of any length (a retained topic of 65,000 bytes)', async () => {
        const state = store.messageLog.state;
        const long = `l/${'x'.repeat(65_000)}`;
        const keys = [`${long}b`, 'l/a', `${long}a`, `${long.slice(0, 998)}\u00e9`, `${long}`];
        await Promise.all(keys.map((k, i) => state.put(k, i)));
        const sortedKeys = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        assert.deepEqual([...state.entries('l/')].map(([k]) => k), sortedKeys);
        await reopen();
        const again = store.messageLog.state;
        assert.deepEqual([...again.entries('l/')].map(([k]) => k), sortedKeys);
        assert.deepEqual([...again.entries(long)].map(([k, v]) => [k.length, v]), [[long.length, 4], [long.length + 1, 2], [long.length + 1, 0]]);
        assert.equal(again.get(`${long}a`), 2);
        assert.equal(again.get(`${long}c`), undefined);
        await again.remove(`${long}a`);
        assert.equal(again.get(`${long}a`), undefined);
        assert.equal(again.get(`${long}b`), 0);
        assert.equal([...again.entries('l/')].length, 4);
      });

      it('commits a state write with the appends of its turn', async () => {
        const log = store.messageLog;
        const before = log.lastSequence();
        // The state write issued after the append: once it is durable, so is the append.
        const appended = log.append([{ topic: 'c/t', message: message(1) }]);
        await log.state.put('c/position', 1);
        assert.deepEqual(log.readFrom(before, 10).map((m) => m.topic), ['c/t'], 'the append is durable with the state write');
        const [seq] = await appended;
        // Issued before the append: the same.
        const put = log.state.put('c/position', seq);
        const next = log.append([{ topic: 'c/t', message: message(2) }]);
        await put;
        assert.deepEqual(log.readFrom(seq, 10).map((m) => m.topic), ['c/t']);
        await next;
        // A write not awaited before a close is committed by it.
        void log.state.put('c/closing', true);
        await reopen();
        assert.equal(store.messageLog.state.get('c/position'), seq);
        assert.equal(store.messageLog.state.get('c/closing'), true);
      });
    });

    // ---- internal stores ------------------------------------------------------------------

    describe('internal stores', () => {
      it('stores, lists and removes entries durably, apart from tables', async () => {
        const accounts = store.internal<{ name: string; roles: string[] }>('accounts');
        await accounts.put('admin', { name: 'admin', roles: ['admin'] });
        await accounts.put('bob', { name: 'bob', roles: [] });
        assert.deepEqual(accounts.get('admin'), { name: 'admin', roles: ['admin'] });
        assert.equal(await accounts.remove('bob'), true);
        assert.equal(await accounts.remove('bob'), false);
        assert.deepEqual([...accounts.entries()].map(([k]) => k), ['admin']);
        assert.deepEqual(store.internal('roles').get('admin'), undefined);
        assert.deepEqual(store.listTables(main), []);
        await reopen();
        assert.deepEqual([...store.internal('accounts').entries()], [['admin', { name: 'admin', roles: ['admin'] }]]);
      });
    });

    // ---- operation entries ----------------------------------------------------------------

    describe('operation entries (replay)', () => {
      /** Records the entries of `work` as a log would carry them (a copy at once: the store keeps using the objects). */
      async function recording(work: () => Promise<void>): Promise<OperationEntry[]> {
        const entries: OperationEntry[] = [];
        const stop = store.operations.tap((entry) => entries.push(structuredClone(entry)));
        try {
          await work();
        } finally {
          stop();
        }
        return entries;
      }

      /** Applies entries to a fresh store; `check` reads it; then it is closed and removed. */
      async function replayed(entries: OperationEntry[], check: (fresh: StoragePort) => Promise<void> | void): Promise<void> {
        const other = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-storage-replay-'));
        const fresh = await open(other);
        try {
          await fresh.operations.apply(entries);
          await check(fresh);
        } finally {
          await fresh.close();
          fs.rmSync(other, { recursive: true, force: true });
        }
      }

      it('tells each write once, in order, and the entries applied to a fresh store give the same definitions, ids, times and messages', async () => {
        const entries = await recording(async () => {
          await store.createTable(main, 'stamped', [{ name: 'n', type: 'integer' }, { name: 'at', type: 'timestamp', autoValue: 'timestampOnInsert' }]);
          await store.createIndex(main, 'stamped', 'by_n', { fields: [{ name: 'n', ascending: false }] });
          await insert(main, 'stamped', [{ n: 1 }, { n: 2 }, { n: 3 }]);
          await store.patchRecords(main, 'stamped', [{ id: 2, row: { n: 20 } }]);
          await store.deleteRecords(main, 'stamped', [1]);
          await store.messageLog.append([{ topic: 'replay/a', message: message(1) }, { topic: 'replay/b', message: message(2) }]);
          await store.messageLog.state.put('s/one', { position: 2 });
          await store.internal('accounts').put('ann', { name: 'ann' });
        });
        assert.deepEqual(entries.map((entry) => entry.op), [
          'table.create', 'index.create', 'records.insert', 'records.patch', 'records.delete', 'messages.append', 'state.put', 'internal.put',
        ]);
        const rows = readAll(store.readRecords(main, 'stamped', { index: 'by_n' }));
        await replayed(entries, (fresh) => {
          assert.deepEqual(fresh.getTable(main, 'stamped'), store.getTable(main, 'stamped'), 'the same definition, createdAt included');
          assert.deepEqual(readAll(fresh.readRecords(main, 'stamped', { index: 'by_n' })), rows, 'the same ids, values and automatic times');
          assert.deepEqual(fresh.messageLog.listTopics(), store.messageLog.listTopics(), 'the same topic ids and createdAt');
          assert.deepEqual(fresh.messageLog.readFrom(0, 10), store.messageLog.readFrom(0, 10), 'the same sequences');
          assert.deepEqual(fresh.messageLog.state.get('s/one'), { position: 2 });
          assert.deepEqual(fresh.internal('accounts').get('ann'), { name: 'ann' });
        });
      });

      it('a transaction reserves its automatic ids through an entry: an insert made meanwhile gets the next ones, replayed too', async () => {
        await people();
        const entries = await recording(async () => {
          const tx = store.beginTransaction();
          assert.deepEqual(await insert(main, 'people', [{ name: 'in' }, { name: 'tx' }], { transactionId: tx }), [1, 2]);
          assert.deepEqual(await insert(main, 'people', [{ name: 'outside' }]), [3]);
          const abandoned = store.beginTransaction();
          assert.deepEqual(await insert(main, 'people', [{ name: 'never' }], { transactionId: abandoned }), [4]);
          store.rollbackTransaction(abandoned);
          await store.commitTransaction(tx);
        });
        assert.deepEqual(entries.map((entry) => entry.op), ['ids.reserve', 'records.insert', 'ids.reserve', 'transaction.commit']);
        const expected = readAll(store.readRecords(main, 'people', {}));
        assert.deepEqual(ids(expected), [1, 2, 3]);
        await replayed([{ op: 'table.create', database: main, table: 'people', columns: PEOPLE, time: store.getTable(main, 'people').createdAt }, ...entries], async (fresh) => {
          assert.deepEqual(readAll(fresh.readRecords(main, 'people', {})), expected);
          assert.deepEqual(await fresh.insertValues(main, 'people', positionalRows(fresh.getTable(main, 'people'), [{ name: 'next' }])), [5], 'the rolled-back reservation is not handed out again');
        });
      });

      it('an entry refused where it was recorded (a duplicate key) is passed over by apply', async () => {
        await store.createTable(main, 'u', [{ name: 'k', type: 'integer' }]);
        await store.createIndex(main, 'u', 'by_k', { unique: true, fields: [{ name: 'k', ascending: true }] });
        const entries = await recording(async () => {
          const first = insert(main, 'u', [{ k: 1 }]);
          const second = insert(main, 'u', [{ k: 1 }]); // same turn: refused when applied
          await first;
          await rejectsWith(second, 'DUPLICATE_KEY');
          await insert(main, 'u', [{ k: 2 }]);
        });
        assert.equal(entries.length, 3);
        await replayed([
          { op: 'table.create', database: main, table: 'u', columns: [{ name: 'k', type: 'integer' }], time: store.getTable(main, 'u').createdAt },
          { op: 'index.create', database: main, table: 'u', index: 'by_k', definition: { unique: true, fields: [{ name: 'k', ascending: true }] } },
          ...entries,
        ], (fresh) => {
          assert.deepEqual(readAll(fresh.readRecords(main, 'u', {})), readAll(store.readRecords(main, 'u', {})));
        });
      });

      it('a call refused by its own checks makes no entry', async () => {
        await people();
        const entries = await recording(async () => {
          await rejectsWith(store.createTable(main, 'people', PEOPLE), 'TABLE_EXISTS');
          await rejectsWith(store.addColumns(main, 'people', [{ name: 'age', type: 'integer' }]), 'INVALID_TABLE_DEFINITION');
          await rejectsWith(store.createIndex(main, 'people', 'bad', { fields: [{ name: 'nope', ascending: true }] }), 'COLUMN_NOT_FOUND');
          await rejectsWith(store.messageLog.deleteTopic('never/was'), 'INVALID_TOPIC');
          await rejectsWith(store.messageLog.append([{ topic: 'a/#', message: message(1) }]), 'INVALID_TOPIC');
          await rejectsWith(store.messageLog.state.put('', 1), 'INVALID_PARAMETER');
        });
        assert.deepEqual(entries, []);
      });

      it('localState is kept apart from state: its writes are no entries and are not replayed', async () => {
        const log = store.messageLog;
        const entries = await recording(async () => {
          await log.localState.put('checkpoint', 7);
          await log.state.put('shared', 1);
        });
        assert.deepEqual(entries.map((entry) => entry.op), ['state.put']);
        assert.equal(log.localState.get('checkpoint'), 7);
        assert.equal(log.state.get('checkpoint'), undefined);
        assert.deepEqual([...log.localState.entries('')], [['checkpoint', 7]]);
        await reopen();
        assert.equal(store.messageLog.localState.get('checkpoint'), 7, 'durable');
        await replayed(entries, (fresh) => {
          assert.equal(fresh.messageLog.state.get('shared'), 1);
          assert.equal(fresh.messageLog.localState.get('checkpoint'), undefined);
        });
      });
    });

    // ---- persistence ----------------------------------------------------------------------

    describe('persistence', () => {
      it('keeps data, catalog, indexes and topics across a reopen', async () => {
        await store.createDatabase('second');
        await people([{ name: 'ann', age: 1 }, { name: 'bob', age: 2 }]);
        await store.createIndex(main, 'people', 'by_name', { unique: true, fields: [{ name: 'name', ascending: false }] });
        await store.createTable('second', 'loaded', [{ name: 'id', type: 'integer' }, { name: 'v', type: 'varchar', length: 4 }]);
        await insert('second', 'loaded', [{ id: 100, v: 'x' }]);
        await appendTo('keep/me', [message(1), message(2)]);
        const tableBefore = store.getTable(main, 'people');
        await reopen();
        assert.deepEqual(store.listDatabases(), [main, 'second'].sort());
        assert.deepEqual(store.getTable(main, 'people'), tableBefore);
        assert.equal(store.getTable('second', 'loaded').idDeclared, true);
        assert.deepEqual(col(readRows(main, 'people', { index: 'by_name' }), 'name'), ['bob', 'ann']);
        await rejectsWith(insert(main, 'people', [{ name: 'ann' }]), 'DUPLICATE_KEY');
        assert.deepEqual(await insert(main, 'people', [{ name: 'cy' }]), [3]);
        assert.deepEqual(await insert('second', 'loaded', [{ v: 'y' }]), [101]);
        assert.deepEqual(store.messageLog.getTopic('keep/me')?.topic, 'keep/me');
        assert.deepEqual(await appendTo('keep/me', [message(3)]), [3]);
        assert.deepEqual(seqs(store.messageLog.readTopic('keep/me', { limit: 10 })), [1, 2, 3]);
      });
    });
  });
}

/** A `column op literal` filter node (the suite builds trees directly: parsing is plugins/data's job). */
function compare(column: string, op: CompareOp, value: string | number): FilterNode {
  return {
    kind: 'compare',
    op,
    left: { kind: 'column', name: column, text: column, position: 1 },
    right: { kind: 'literal', type: typeof value === 'number' ? 'number' : 'string', value, text: String(value), position: 1 },
    position: 1,
  };
}
