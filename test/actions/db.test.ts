/** The db api over real storage (plugins/actions/apis/db.ts → plugins/data commands). */
import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { ManualClock } from '../helpers/manual-clock';
import { admin, db, fails, login, ok, startActionServer } from './action-client';

describe('actions: db api', function () {
  this.timeout(30_000);
  let server: TestServer;
  let token: string;
  // expiry is tested by advancing the engine's clock, not by sleeping
  const clock = new ManualClock();

  before(async function () {
    const plugins = ['storage-lmdb', 'data', 'http', 'rest', 'actions'];
    server = await startActionServer({ plugins }, true, { clock });
    token = await login(server);
  });
  after(async function () {
    await server?.close();
  });

  const people = (tableName: string) => ({
    tableName,
    fields: [
      { name: 'name', type: 'varchar', length: 20 },
      { name: 'age', type: 'integer' },
      { name: 'photo', type: 'binary', length: 4 },
      { name: 'doc', type: 'json' },
      { name: 'born', type: 'timestamp' },
    ],
  });

  async function count(tableName: string): Promise<number> {
    const r = await ok(server, db('getRecordsByTable', token, { tableName, maxRecords: 1 }));
    return r.totalRecordCount;
  }

  describe('databases', function () {
    it('createDatabase, listDatabases, deleteDatabase', async function () {
      assert.deepEqual(await ok(server, db('createDatabase', token, { databaseName: 'Extra' })), { databaseName: 'extra' });
      const listed = await ok(server, db('listDatabases', token));
      assert.deepEqual(listed.data.map((d: any) => d.databaseName).sort(), ['extra', 'main']);
      await fails(server, db('createDatabase', token, { databaseName: 'extra' }), 4093);
      await ok(server, db('createTable', token, { databaseName: 'extra', tableName: 'x', fields: [{ name: 'a', type: 'integer' }] }));
      await ok(server, db('deleteDatabase', token, { databaseName: 'extra' }));
      await fails(server, db('listTables', token, { databaseName: 'extra' }), 4094);
    });

    it('rejects missing and empty names', async function () {
      await fails(server, db('createDatabase', token, {}), 12025);
      await fails(server, db('createDatabase', token, { databaseName: '' }), 12012);
      await fails(server, db('createDatabase', token, { databaseName: 5 }), 12012);
      await fails(server, db('createDatabase', token, { databaseName: 'd'.repeat(65) }), 12012);
      await fails(server, db('deleteDatabase', token, { databaseName: 'nope' }), 4094);
    });

    it('refuses names a resource pattern, a URL or a page could misread (/ .. * < > spaces), creating nothing', async function () {
      for (const databaseName of ['main/x', '..', 'a..b', 'x*', '*', '<b>x</b>', 'a b', '-lead', 'a\u0001b', 'é']) {
        const answer = await fails(server, db('createDatabase', token, { databaseName }), 12012);
        assert.match(answer.errorMessage, /databaseName/, databaseName);
      }
      const listed = await ok(server, db('listDatabases', token));
      assert.deepEqual(listed.data.map((d: any) => d.databaseName).sort(), ['main']);
      assert.deepEqual(await ok(server, db('createDatabase', token, { databaseName: 'Sales_2024-eu' })), { databaseName: 'sales_2024-eu' });
      await ok(server, db('deleteDatabase', token, { databaseName: 'sales_2024-eu' }));
    });

    it('keeps serving a database an older release created under a name now refused', async function () {
      await server.engine.need('storage').createDatabase('legacy/x');
      await ok(server, db('createTable', token, { databaseName: 'legacy/x', tableName: 't', fields: [{ name: 'a', type: 'integer' }] }));
      await ok(server, db('insertRecords', token, { databaseName: 'legacy/x', tableName: 't', sourceData: [{ a: 1 }] }));
      assert.equal((await ok(server, db('getRecordsByTable', token, { databaseName: 'legacy/x', tableName: 't' }))).returnedRecordCount, 1);
      await ok(server, db('deleteDatabase', token, { databaseName: 'legacy/x' }));
    });
  });

  describe('tables', function () {
    it('createTable adds the automatic id column and returns the description', async function () {
      const r = await ok(server, db('createTable', token, people('people')));
      assert.equal(r.tableName, 'people');
      assert.equal(r.databaseName, 'main');
      assert.equal(r.ownerName, 'admin');
      assert.deepEqual(r.fields[0], { name: 'id', type: 'bigint', length: null, scale: null, autoTimestamp: 'none', defaultValue: null, nullable: false, primaryKey: 1, autoValue: 'incrementOnInsert' });
      assert.deepEqual(r.fields.map((f: any) => f.name), ['id', 'name', 'age', 'photo', 'doc', 'born']);
      assert.deepEqual(r.fields[1], { name: 'name', type: 'varchar', length: 20, scale: null, autoTimestamp: 'none', defaultValue: null, nullable: true, primaryKey: 0, autoValue: 'none' });
      assert.ok(r.indexes.some((i: any) => i.indexName === 'id_pk'));
    });

    it('rejects bad table input', async function () {
      await fails(server, db('createTable', token, people('people')), 4022);
      await fails(server, db('createTable', token, { fields: [] }), 12025);
      await fails(server, db('createTable', token, { tableName: 't' }), 12025);
      await fails(server, db('createTable', token, { tableName: '', fields: [] }), 12012);
      await fails(server, db('createTable', token, { tableName: 't', fields: 'name' }), 12012);
      await fails(server, db('createTable', token, { ...people('t2'), databaseName: '' }), 12012);
      await fails(server, db('createTable', token, { ...people('t2'), ownerName: '' }), 12012);
      await fails(server, db('createTable', token, { ...people('t2'), databaseName: 'nope' }), 4094);
      const bad = await send4026(server, token);
      assert.ok(bad === 4026 || bad === 12012, `bad column type answered ${bad}`);
    });

    it('listTables, describeTables, alterTable, deleteTables', async function () {
      await ok(server, db('createTable', token, { tableName: 'alpha', fields: [{ name: 'a', type: 'integer' }] }));
      await ok(server, db('createTable', token, { tableName: 'alps', fields: [{ name: 'a', type: 'integer' }] }));
      const listed = await ok(server, db('listTables', token));
      assert.ok(listed.data.some((t: any) => t.tableName === 'alpha' && t.databaseName === 'main' && t.ownerName === 'admin'));
      const partial = await ok(server, db('listTables', token, { partialTableName: 'alp' }));
      assert.deepEqual(partial.data.map((t: any) => t.tableName).sort(), ['alpha', 'alps']);
      const described = await ok(server, db('describeTables', token, { tableNames: ['alpha'] }));
      assert.equal(described.data[0].tableName, 'alpha');
      assert.deepEqual(described.data[0].fields.map((f: any) => f.name), ['id', 'a']);
      await fails(server, db('describeTables', token, { tableNames: ['nope'] }), 4023);
      // no tableNames: every table of the database
      const every = await ok(server, db('describeTables', token, {}));
      assert.deepEqual(every.data.map((t: any) => t.tableName).filter((name: string) => name.startsWith('alp')).sort(), ['alpha', 'alps']);
      const altered = await ok(server, db('alterTable', token, { tableName: 'alpha', addFields: [{ name: 'b', type: 'varchar', length: 10 }] }));
      assert.deepEqual(altered.fields.map((f: any) => f.name), ['id', 'a', 'b']);
      await fails(server, db('alterTable', token, { tableName: 'alpha', addFields: [{ name: 'c', type: 'integer' }], deleteFields: ['a'] }), 12012);
      await fails(server, db('alterTable', token, { tableName: 'alpha' }), 12025);
      await ok(server, db('deleteTables', token, { tableNames: ['alpha', 'alps'] }));
      await fails(server, db('describeTables', token, { tableNames: ['alpha'] }), 4023);
      await ok(server, db('createTable', token, { tableName: 'keep', fields: [{ name: 'a', type: 'integer' }] }));
      await fails(server, db('deleteTables', token, { tableNames: ['keep', 'nope'] }), 4023);
      await ok(server, db('describeTables', token, { tableNames: ['keep'] }));
    });
  });

  describe('records', function () {
    before(async function () {
      await ok(server, db('createTable', token, people('rec')));
    });

    it('insertRecords with objects, arrays and autoDetect; getRecordsByIds', async function () {
      const a = await ok(server, db('insertRecords', token, {
        tableName: 'rec', dataFormat: 'objects',
        sourceData: [{ name: 'Ann', age: 30, photo: '01020304', doc: { a: { b: 1, c: 2 }, d: 3 }, born: '1994-02-03T04:05:06.007' }],
      }));
      assert.equal(a.dataFormat, 'objects');
      assert.equal(a.ids.length, 1);
      const b = await ok(server, db('insertRecords', token, { tableName: 'rec', dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData: [['Bob', 40], ['Cy', 50]] }));
      assert.equal(b.dataFormat, 'arrays');
      assert.equal(b.insertedRecordCount, 2);
      const c = await ok(server, db('insertRecords', token, { tableName: 'rec', fieldNames: ['name'], sourceData: [['Di']] }));
      assert.equal(c.dataFormat, 'arrays');
      const d = await ok(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ name: 'Ed', age: 60 }] }));
      assert.equal(d.dataFormat, 'objects');
      const got = await ok(server, db('getRecordsByIds', token, { tableName: 'rec', ids: [a.ids[0], 999999] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(got.returnedRecordCount, 1);
      assert.deepEqual(got.data[0], { id: a.ids[0], name: 'Ann', age: 30, photo: '01020304', doc: { a: { b: 1, c: 2 }, d: 3 }, born: '1994-02-03T04:05:06.007' });
      const arrays = await ok(server, db('getRecordsByIds', token, { tableName: 'rec', ids: [b.ids[0]] }));
      assert.equal(arrays.dataFormat, 'arrays');
      assert.deepEqual(arrays.data[0], [b.ids[0], 'Bob', 40, null, null, null]);
      assert.deepEqual(arrays.fields.map((f: any) => f.name), ['id', 'name', 'age', 'photo', 'doc', 'born']);
    });

    it('rejects bad record input and stores nothing', async function () {
      const before = await count('rec');
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [] }), 12012);
      await fails(server, db('insertRecords', token, { tableName: 'rec' }), 12025);
      await fails(server, db('insertRecords', token, { sourceData: [{ name: 'x' }] }), 12025);
      await fails(server, db('insertRecords', token, { tableName: 'rec', dataFormat: 'arrays', sourceData: [['x']] }), 12025);
      await fails(server, db('insertRecords', token, { tableName: 'rec', dataFormat: 'arrays', fieldNames: ['name', 'age'], sourceData: [['x']] }), 12012);
      await fails(server, db('insertRecords', token, { tableName: 'rec', dataFormat: 'objects', sourceData: [['x']] }), 12012);
      await fails(server, db('insertRecords', token, { tableName: 'rec', dataFormat: 'tables', sourceData: [{ name: 'x' }] }), 12012);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: 'x' }), 12012);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ name: 'x'.repeat(21) }] }), 4031);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ age: 'old' }] }), 4031);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ age: 2 ** 31 }] }), 4031);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ photo: '0102030405' }] }), 4031);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ born: 'yesterday' }] }), 4031);
      await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ nosuch: 1 }] }), 4014);
      await fails(server, db('insertRecords', token, { tableName: 'nope', sourceData: [{ name: 'x' }] }), 4023);
      assert.equal(await count('rec'), before);
    });

    it('a wrong type inside a 5,000-row insert stores nothing', async function () {
      const before = await count('rec');
      const rows = Array.from({ length: 5000 }, (_, i) => ({ name: `n${i}`, age: i }));
      rows[4321] = { name: 'bad', age: 'not a number' as unknown as number };
      const response = await fails(server, db('insertRecords', token, { tableName: 'rec', sourceData: rows }), 4031);
      assert.match(response.errorMessage, /age/);
      assert.equal(await count('rec'), before);
      const good = await ok(server, db('insertRecords', token, { tableName: 'rec', sourceData: rows.slice(0, 4321) }));
      assert.equal(good.ids.length, 4321);
      assert.equal(await count('rec'), before + 4321);
    });

    it('updateRecords merges by id; deleteRecords', async function () {
      const { ids } = await ok(server, db('insertRecords', token, { tableName: 'rec', sourceData: [{ name: 'Upd', age: 1 }, { name: 'Del', age: 2 }] }));
      const updated = await ok(server, db('updateRecords', token, { tableName: 'rec', sourceData: [{ id: ids[0], age: 11 }] }));
      assert.equal(updated.updatedRecordCount, 1);
      const arrays = await ok(server, db('updateRecords', token, { tableName: 'rec', dataFormat: 'arrays', fieldNames: ['id', 'name'], sourceData: [[String(ids[1]), 'Del2']] }));
      assert.equal(arrays.updatedRecordCount, 1);
      const got = await ok(server, db('getRecordsByIds', token, { tableName: 'rec', ids }, { responseOptions: { dataFormat: 'objects', includeFields: ['name', 'age'] } }));
      assert.deepEqual(got.data, [{ name: 'Upd', age: 11 }, { name: 'Del2', age: 2 }]);
      await fails(server, db('updateRecords', token, { tableName: 'rec', sourceData: [{ age: 3 }] }), 12025);
      await fails(server, db('updateRecords', token, { tableName: 'rec', sourceData: [{ id: 'abc', age: 3 }] }), 12012);
      await fails(server, db('updateRecords', token, { tableName: 'rec', sourceData: [{ id: 987654321, age: 3 }] }), 101);
      await fails(server, db('updateRecords', token, { tableName: 'rec', sourceData: [{ id: ids[0], age: 'x' }] }), 4031);
      const deleted = await ok(server, db('deleteRecords', token, { tableName: 'rec', ids: [ids[1]] }));
      assert.equal(deleted.deletedRecordCount, 1);
      const after = await ok(server, db('getRecordsByIds', token, { tableName: 'rec', ids: [ids[1]] }));
      assert.equal(after.returnedRecordCount, 0);
      await fails(server, db('deleteRecords', token, { tableName: 'rec', ids: [] }), 12012);
      await fails(server, db('deleteRecords', token, { tableName: 'rec', ids: [0] }), 12012);
      await fails(server, db('deleteRecords', token, { tableName: 'rec' }), 12025);
      await fails(server, db('getRecordsByIds', token, { tableName: 'rec', ids: ['x'] }), 12012);
    });

    it('takes binaryFormat and variantFormat in params for the values it is sent', async function () {
      await ok(server, db('createTable', token, { tableName: 'bin', fields: [{ name: 'b', type: 'varbinary', length: 8 }, { name: 'v', type: 'variant' }] }));
      const { ids } = await ok(server, db('insertRecords', token, { tableName: 'bin', binaryFormat: 'base64', sourceData: [{ b: 'AQID' }] }));
      const { ids: more } = await ok(server, db('insertRecords', token, { tableName: 'bin', sourceData: [{ b: [4, 5], v: { k: [1, 'two'] } }] }));
      await ok(server, db('insertRecords', token, { tableName: 'bin', variantFormat: 'string', sourceData: [{ v: 'plain text' }] }));
      await fails(server, db('insertRecords', token, { tableName: 'bin', binaryFormat: 'octal', sourceData: [{ b: '01' }] }), 12012);
      await fails(server, db('insertRecords', token, { tableName: 'bin', sourceData: [{ b: 'zz' }] }), 4031);
      const hex = await ok(server, db('getRecordsByIds', token, { tableName: 'bin', ids: [ids[0], more[0]] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.equal(hex.binaryFormat, 'hex');
      assert.equal(hex.data[0].b, '010203');
      assert.deepEqual(hex.data[1].v, { k: [1, 'two'] });
      const bytes = await ok(server, db('getRecordsByIds', token, { tableName: 'bin', ids: [ids[0]] }, { responseOptions: { dataFormat: 'objects', binaryFormat: 'byteArray' } }));
      assert.equal(bytes.binaryFormat, 'byteArray');
      assert.deepEqual(bytes.data[0].b, [1, 2, 3]);
      const variant = await ok(server, db('getRecordsByIds', token, { tableName: 'bin', ids: [more[0]] }, { responseOptions: { dataFormat: 'objects', variantFormat: 'variantObject' } }));
      assert.equal(variant.data[0].v.type, 'json');
      assert.deepEqual(variant.data[0].v.value, { k: [1, 'two'] });
    });
  });

  describe('queries', function () {
    before(async function () {
      await ok(server, db('createTable', token, { tableName: 'q', fields: [{ name: 'k', type: 'integer' }, { name: 'g', type: 'varchar', length: 8 }, { name: 's', type: 'integer' }] }));
      const sourceData = Array.from({ length: 30 }, (_, i) => [i + 1, i % 2 === 0 ? 'even' : 'odd', 100 - i]);
      await ok(server, db('insertRecords', token, { tableName: 'q', fieldNames: ['k', 'g', 's'], sourceData }));
      await ok(server, db('createIndex', token, { tableName: 'q', indexName: 'by_s', fields: [{ name: 's' }] }));
      await ok(server, db('createIndex', token, { tableName: 'q', indexName: 'by_g_k', fields: [{ name: 'g' }, { name: 'k', sortDescending: true }] }));
    });

    const ks = (result: any) => result.data.map((row: any) => row.k);
    const objects = { responseOptions: { dataFormat: 'objects' } };

    it('getRecordsByTable: default 20, moreRecords, counts, skip, reverse, filter', async function () {
      const page = await ok(server, db('getRecordsByTable', token, { tableName: 'q' }, objects));
      assert.equal(page.returnedRecordCount, 20);
      assert.equal(page.requestedRecordCount, 20);
      assert.equal(page.moreRecords, true);
      assert.equal(page.totalRecordCount, 30);
      assert.deepEqual(ks(page), Array.from({ length: 20 }, (_, i) => i + 1));
      const tail = await ok(server, db('getRecordsByTable', token, { tableName: 'q', skipRecords: 25, maxRecords: 10 }, objects));
      assert.deepEqual(ks(tail), [26, 27, 28, 29, 30]);
      assert.equal(tail.moreRecords, false);
      const reversed = await ok(server, db('getRecordsByTable', token, { tableName: 'q', reverseOrder: true, maxRecords: 3 }, objects));
      assert.deepEqual(ks(reversed), [30, 29, 28]);
      const filtered = await ok(server, db('getRecordsByTable', token, { tableName: 'q', tableFilter: 'g == "odd" && k > 20', maxRecords: 100 }, objects));
      assert.deepEqual(ks(filtered), [22, 24, 26, 28, 30]);
      await fails(server, db('getRecordsByTable', token, { tableName: 'q', tableFilter: 'k ==' }), 4072);
      await fails(server, db('getRecordsByTable', token, { tableName: 'q', tableFilter: 'nosuch == 1' }), 4072);
      await fails(server, db('getRecordsByTable', token, { tableName: 'q', maxRecords: 0 }), 12012);
      await fails(server, db('getRecordsByTable', token, { tableName: 'q', maxRecords: '5' }), 12012);
      await fails(server, db('getRecordsByTable', token, { tableName: 'q', skipRecords: -1 }), 12012);
      await fails(server, db('getRecordsByTable', token, { tableName: 'q', reverseOrder: 'yes' }), 12012);
      await fails(server, db('getRecordsByTable', token, { tableName: 'nope' }), 4023);
    });

    it('getRecordsByIndex follows index order', async function () {
      const bys = await ok(server, db('getRecordsByIndex', token, { tableName: 'q', indexName: 'by_s', maxRecords: 3 }, objects));
      assert.deepEqual(ks(bys), [30, 29, 28]);
      const composite = await ok(server, db('getRecordsByIndex', token, { tableName: 'q', indexName: 'by_g_k', maxRecords: 3 }, objects));
      assert.deepEqual(ks(composite), [29, 27, 25]);
      await fails(server, db('getRecordsByIndex', token, { tableName: 'q', indexName: 'nope' }), 4045);
      await fails(server, db('getRecordsByIndex', token, { tableName: 'q' }), 12025);
    });

    it('getRecordsInKeyRange with indexRange (whole-key bounds)', async function () {
      const r = await ok(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexName: 'by_s', indexRange: { '>=': [95], '<': [98] } }, objects));
      assert.deepEqual(ks(r), [6, 5, 4]); // s = 101 - k, in by_s order
      const eq = await ok(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexName: 'by_g_k', indexRange: { '=': ['even'] }, maxRecords: 2 }, objects));
      assert.deepEqual(ks(eq), [29, 27]);
      const all = await ok(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexName: 'by_s', maxRecords: 100 }, objects));
      assert.equal(all.returnedRecordCount, 30);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexName: 'by_s', indexRange: { '~': [1] } }), 12012);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexName: 'by_s', indexRange: { '>': [1], '>=': [2] } }), 12012);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexName: 'by_s', indexRange: { '>': ['abc'] } }), 4031);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexRange: { '>': [1] } }), 12025);
    });

    it('getRecordsInKeyRange with indexFilter.indexFieldFilters (per-field ranges)', async function () {
      const r = await ok(server, db('getRecordsInKeyRange', token, {
        tableName: 'q',
        indexFilter: { indexName: 'by_g_k', indexFieldFilters: [
          { fieldName: 'g', operator: '=', value: 'odd' },
          { fieldName: 'k', operator: '>', value: 10 },
          { fieldName: 'k', operator: '<=', value: 16 },
        ] },
      }, objects));
      assert.deepEqual(ks(r), [16, 14, 12]);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexFilter: { indexName: 'by_g_k', indexFieldFilters: [{ fieldName: 's', operator: '=', value: 1 }] } }), 12012);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexFilter: { indexName: 'by_g_k', indexFieldFilters: [{ fieldName: 'g', value: 1 }] } }), 12025);
      await fails(server, db('getRecordsInKeyRange', token, { tableName: 'q', indexFilter: { indexName: 'nope', indexFieldFilters: [] } }), 4045);
    });

    it('cursors: returnCursor, getRecordsFromCursor forward and backward, closeCursor', async function () {
      const opened = await ok(server, db('getRecordsByIndex', token, { tableName: 'q', indexName: 'by_s', returnCursor: true }));
      assert.equal(typeof opened.cursorId, 'string');
      assert.deepEqual(opened.fields.map((f: any) => f.name), ['id', 'k', 'g', 's']);
      const first = await ok(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: 5 }, objects));
      assert.deepEqual(ks(first), [30, 29, 28, 27, 26]);
      assert.equal(first.moreRecords, true);
      const skipped = await ok(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: 2, skipRecords: 3 }, objects));
      assert.deepEqual(ks(skipped), [22, 21]);
      const back = await ok(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: -2 }, objects));
      assert.equal(back.returnedRecordCount, 2);
      // another session cannot use it
      const other = await login(server);
      await fails(server, db('getRecordsFromCursor', other, { cursorId: opened.cursorId }), 4080);
      await fails(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: 0 }), 12012);
      await fails(server, db('getRecordsFromCursor', token, {}), 12025);
      await ok(server, db('closeCursor', token, { cursorId: opened.cursorId }));
      await fails(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId }), 4080);
      await fails(server, db('closeCursor', token, { cursorId: opened.cursorId }), 4080);
      const byTable = await ok(server, db('getRecordsByTable', token, { tableName: 'q', returnCursor: true, skipRecords: 28 }));
      const rest = await ok(server, db('getRecordsFromCursor', token, { cursorId: byTable.cursorId, fetchRecords: 10 }, objects));
      assert.deepEqual(ks(rest), [29, 30]);
      assert.equal(rest.moreRecords, false);
    });

    it('cursors live as long as the session\'s idleCursorTimeoutSeconds; startFrom moves to either end', async function () {
      const short = await login(server, 'admin', 'ADMIN', { idleCursorTimeoutSeconds: 1 });
      const described = await ok(server, admin('describeSessions', short, {}));
      assert.ok(JSON.stringify(described).includes('"idleCursorTimeoutSeconds":1'));
      const opened = await ok(server, db('getRecordsByTable', short, { tableName: 'q', returnCursor: true }));
      const first = await ok(server, db('getRecordsFromCursor', short, { cursorId: opened.cursorId, fetchRecords: 2, startFrom: 'afterLastRecord' }, objects));
      assert.equal(first.returnedRecordCount, 0);
      assert.equal(first.moreRecords, false);
      const last = await ok(server, db('getRecordsFromCursor', short, { cursorId: opened.cursorId, fetchRecords: -2 }, objects));
      assert.deepEqual(ks(last), [30, 29]);
      const again = await ok(server, db('getRecordsFromCursor', short, { cursorId: opened.cursorId, fetchRecords: 1, startFrom: 'beforeFirstRecord' }, objects));
      assert.deepEqual(ks(again), [1]);
      clock.advanceSeconds(1.001);
      await fails(server, db('getRecordsFromCursor', short, { cursorId: opened.cursorId, fetchRecords: 1 }), 4080);
    });

    it('createIndex, listIndexes, deleteIndexes; unique indexes reject duplicates', async function () {
      const created = await ok(server, db('createIndex', token, { tableName: 'q', indexName: 'uk', unique: true, fields: [{ name: 'k' }] }));
      assert.equal(created.indexName, 'uk');
      assert.equal(created.unique, true);
      const listed = await ok(server, db('listIndexes', token, { tableName: 'q' }));
      assert.deepEqual(listed.data.map((i: any) => i.indexName).sort(), ['by_g_k', 'by_s', 'id_pk', 'uk']);
      const desc = listed.data.find((i: any) => i.indexName === 'by_g_k');
      assert.deepEqual(desc.fields.map((f: any) => [f.name, f.ascending]), [['g', true], ['k', false]]);
      await fails(server, db('insertRecords', token, { tableName: 'q', sourceData: [{ k: 1 }] }), 2);
      await fails(server, db('createIndex', token, { tableName: 'q', indexName: 'uk', fields: [{ name: 'k' }] }), 4051);
      await fails(server, db('createIndex', token, { tableName: 'q', indexName: 'x', fields: [] }), 12012);
      await fails(server, db('createIndex', token, { tableName: 'q', indexName: 'x', fields: [{ name: 'nosuch' }] }), 4014);
      await fails(server, db('createIndex', token, { tableName: 'q', fields: [{ name: 'k' }] }), 12025);
      await ok(server, db('deleteIndexes', token, { tableName: 'q', indexNames: ['uk'] }));
      await fails(server, db('deleteIndexes', token, { tableName: 'q', indexNames: ['uk'] }), 4045);
    });
  });

  describe('transactions', function () {
    before(async function () {
      await ok(server, db('createTable', token, { tableName: 'tx', fields: [{ name: 'a', type: 'integer' }] }));
    });

    it('commit makes writes visible; rollback discards them', async function () {
      const { transactionId } = await ok(server, db('createTransaction', token));
      assert.equal(typeof transactionId, 'string');
      const { ids } = await ok(server, db('insertRecords', token, { tableName: 'tx', sourceData: [{ a: 1 }], transactionId }));
      const inside = await ok(server, db('getRecordsByIds', token, { tableName: 'tx', ids, transactionId }));
      assert.equal(inside.returnedRecordCount, 1);
      const outside = await ok(server, db('getRecordsByIds', token, { tableName: 'tx', ids }));
      assert.equal(outside.returnedRecordCount, 0);
      await ok(server, db('commitTransaction', token, { transactionId }));
      assert.equal((await ok(server, db('getRecordsByIds', token, { tableName: 'tx', ids }))).returnedRecordCount, 1);

      const second = await ok(server, db('createTransaction', token));
      const { ids: gone } = await ok(server, db('insertRecords', token, { tableName: 'tx', sourceData: [{ a: 2 }], transactionId: second.transactionId }));
      await ok(server, db('rollbackTransaction', token, { transactionId: second.transactionId }));
      assert.equal((await ok(server, db('getRecordsByIds', token, { tableName: 'tx', ids: gone }))).returnedRecordCount, 0);
      await fails(server, db('commitTransaction', token, { transactionId: second.transactionId }), 4081);
      await fails(server, db('commitTransaction', token, {}), 12025);
      await fails(server, db('insertRecords', token, { tableName: 'tx', sourceData: [{ a: 3 }], transactionId: 'nope' }), 4081);
    });

    it('an insert a transaction refuses (a unique key taken) uses up no record ids', async function () {
      await ok(server, db('createTable', token, { tableName: 'txu', fields: [{ name: 'a', type: 'integer' }] }));
      await ok(server, db('createIndex', token, { tableName: 'txu', indexName: 'by_a', unique: true, fields: [{ name: 'a' }] }));
      const first = await ok(server, db('insertRecords', token, { tableName: 'txu', sourceData: [{ a: 1 }] }));
      assert.deepEqual(first.ids, [1]);
      const { transactionId } = await ok(server, db('createTransaction', token));
      await fails(server, db('insertRecords', token, { tableName: 'txu', sourceData: [{ a: 5 }, { a: 1 }], transactionId }), 2);
      await ok(server, db('rollbackTransaction', token, { transactionId }));
      const next = await ok(server, db('insertRecords', token, { tableName: 'txu', sourceData: [{ a: 2 }] }));
      assert.deepEqual(next.ids, [2]);
    });

    it('a transaction belongs to its session', async function () {
      const { transactionId } = await ok(server, db('createTransaction', token));
      const other = await login(server);
      await fails(server, db('insertRecords', other, { tableName: 'tx', sourceData: [{ a: 4 }], transactionId }), 4081);
      await fails(server, db('rollbackTransaction', other, { transactionId }), 4081);
      await ok(server, db('rollbackTransaction', token, { transactionId }));
    });
  });

  describe('authorization and sessions', function () {
    it('a session of another account is authorized by that account\'s roles', async function () {
      await ok(server, db('createTable', token, { tableName: 'secret', fields: [{ name: 'a', type: 'integer' }] }));
      await ok(server, admin('createAccount', token, { username: 'nobody', password: 'pw-nobody' }));
      await ok(server, admin('createAccount', token, { username: 'looker', password: 'pw-looker', roles: ['reader'] }));
      const nobody = await login(server, 'nobody', 'pw-nobody');
      const looker = await login(server, 'looker', 'pw-looker');
      await fails(server, db('getRecordsByTable', nobody, { tableName: 'secret' }), 12030);
      await fails(server, db('createTable', nobody, { tableName: 'mine', fields: [] }), 12030);
      await ok(server, db('getRecordsByTable', looker, { tableName: 'secret' }));
      await fails(server, db('insertRecords', looker, { tableName: 'secret', sourceData: [{ a: 1 }] }), 12030);
      await fails(server, db('deleteTables', looker, { tableNames: ['secret'] }), 12030);
    });

    it('uses the session\'s defaultDatabaseName', async function () {
      await ok(server, db('createDatabase', token, { databaseName: 'second' }));
      const other = await login(server, 'admin', 'ADMIN', { defaultDatabaseName: 'second' });
      await ok(server, db('createTable', other, { tableName: 'here', fields: [{ name: 'a', type: 'integer' }] }));
      const listed = await ok(server, db('listTables', token, { databaseName: 'second' }));
      assert.deepEqual(listed.data.map((t: any) => t.tableName), ['here']);
      const main = await ok(server, db('listTables', token));
      assert.ok(!main.data.some((t: any) => t.tableName === 'here'));
    });

    it('answers an expired token with 12031', async function () {
      const short = await login(server, 'admin', 'ADMIN', { idleConnectionTimeoutSeconds: 1 });
      await ok(server, db('listTables', short));
      clock.advanceSeconds(1.001);
      await fails(server, db('listTables', short), 12031);
    });
  });

  describe('integration tables (views over the message log)', function () {
    it('are listed, described and read like tables, and refuse writes and indexes', async function () {
      const message = (i: number) => ({
        createTs: `2024-05-01T00:00:0${i}.000`, payload: { type: 'json' as const, value: JSON.stringify({ i }) }, qos: 0, retain: false,
        contentType: null, correlationData: null, responseTopic: null, expirySeconds: null, userProperties: null,
        payloadFormat: null, publisher: 'db-test',
      });
      const log = server.engine.need('storage').messageLog;
      const seqs = await log.append([{ topic: 'act/a', message: message(1) }, { topic: 'act/b', message: message(2) }, { topic: 'act/a', message: message(3) }]);
      const tableName = log.getTopic('act/a')!.table;
      const listed = await ok(server, db('listTables', token, { partialTableName: 'mqtt_msg_act' }));
      assert.deepEqual(listed.data.map((t: any) => t.tableName).sort(), ['mqtt_msg_act_a', 'mqtt_msg_act_b']);
      const described = await ok(server, db('describeTables', token, { tableNames: [tableName] }));
      assert.equal(described.data[0].fields[0].name, 'id');
      assert.equal(await count(tableName), 2);
      const got = await ok(server, db('getRecordsByIds', token, { tableName, ids: [seqs[0], seqs[1], seqs[2]] }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(got.data.map((r: any) => [r.id, r.mqtt_publisher]), [[seqs[0], 'db-test'], [seqs[2], 'db-test']]);
      const byTime = await ok(server, db('getRecordsByIndex', token, { tableName, indexName: 'create_ts_idx', maxRecords: 5 }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(byTime.data.map((r: any) => r.id), [seqs[0], seqs[2]]);
      await fails(server, db('insertRecords', token, { tableName, sourceData: [{ mqtt_qos: 1 }] }), 4025);
      await fails(server, db('createIndex', token, { tableName, indexName: 'by_qos', fields: [{ name: 'mqtt_qos' }] }), 4052);
      await ok(server, db('deleteTables', token, { tableNames: [tableName] }));
      assert.equal(log.getTopic('act/a'), undefined);
      assert.equal(log.countTopic('act/b'), 1);
    });
  });

  describe('one store', function () {
    it('a table made through actions is readable through REST', async function () {
      await ok(server, db('createTable', token, { tableName: 'shared', fields: [{ name: 'name', type: 'varchar', length: 10 }, { name: 'n', type: 'integer' }] }));
      const { ids } = await ok(server, db('insertRecords', token, { tableName: 'shared', sourceData: [{ name: 'both', n: 7 }] }));
      const response = await call('GET', `${server.http}/engine/api/v1/record/main/shared/${ids[0]}`);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.json.name, 'both');
      assert.equal(response.json.n, 7);
      const tables = await call('GET', `${server.http}/engine/api/v1/table/main`);
      assert.ok(tables.json._tables.includes('shared'));
    });
  });
});

/** createTable with an unknown column type; returns the error code. */
async function send4026(server: TestServer, token: string): Promise<number> {
  const { send } = await import('./action-client');
  const response = await send(server, db('createTable', token, { tableName: 'badtype', fields: [{ name: 'a', type: 'widget' }] }));
  return response.errorCode as number;
}
