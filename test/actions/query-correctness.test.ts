/**
 * Exact query results through the action interface (issue 7, items 1–5), on the same data
 * commands as REST: a server with both, so the two protocols' answers can be compared.
 */
import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { db, fails, login, ok, startActionServer } from './action-client';

describe('actions: query correctness', function () {
  let server: TestServer;
  let token: string;
  const objects = { responseOptions: { dataFormat: 'objects' } };

  before(async () => {
    server = await startActionServer({ plugins: ['storage-lmdb', 'data', 'http', 'rest', 'actions'] });
    token = await login(server);
  });
  after(() => server.close());

  /** Runs a db action and returns `name` of every record in its result (objects). */
  async function values(action: string, params: Record<string, unknown>, name: string): Promise<unknown[]> {
    const result = await ok(server, db(action, token, params, objects));
    return result.data.map((record: Record<string, unknown>) => record[name]);
  }
  const range = (tableName: string, indexName: string, indexRange: Record<string, unknown>) => ({ tableName, indexName, indexRange });
  const fieldFilters = (tableName: string, indexName: string, filters: Array<[string, string, unknown]>) => ({
    tableName, indexFilter: { indexName, indexFieldFilters: filters.map(([fieldName, operator, value]) => ({ fieldName, operator, value })) },
  });

  /** The names REST's query returns for a `find` condition (the reference answer). */
  async function restFind(table: string, index: string, field: string, condition: Record<string, unknown>, name: string): Promise<unknown[]> {
    const response = await call('POST', `${server.http}/engine/api/v1/query/main/${table}/${index}?top=100`, { body: { find: { [field]: condition } } });
    assert.equal(response.status, 200, response.text);
    return response.json._records.map((record: Record<string, unknown>) => record[name]);
  }

  describe('descending indexes (item 4)', () => {
    before(async () => {
      await ok(server, db('createTable', token, { tableName: 'steps', fields: [{ name: 'n', type: 'integer' }] }));
      await ok(server, db('createIndex', token, { tableName: 'steps', indexName: 'by_n_desc', fields: [{ name: 'n', ascending: false }] }));
      await ok(server, db('createIndex', token, { tableName: 'steps', indexName: 'by_n_sort_desc', fields: [{ name: 'n', sortDescending: true }] }));
      await ok(server, db('insertRecords', token, { tableName: 'steps', sourceData: [1, 2, 3, 4, 5, 6].map((n) => ({ n })) }));
    });

    const cases: Array<[string, unknown, number[]]> = [
      ['>=', 4, [6, 5, 4]], ['>', 4, [6, 5]], ['<', 3, [2, 1]], ['<=', 3, [3, 2, 1]], ['=', 5, [5]],
    ];
    for (const [operator, value, expected] of cases) {
      it(`getRecordsInKeyRange ${operator} ${String(value)} answers what REST answers`, async () => {
        assert.deepEqual(await restFind('steps', 'by_n_desc', 'n', { operator, value }, 'n'), expected);
        assert.deepEqual(await values('getRecordsInKeyRange', range('steps', 'by_n_desc', { [operator]: [value] }), 'n'), expected);
        assert.deepEqual(await values('getRecordsInKeyRange', range('steps', 'by_n_sort_desc', { [operator]: value }), 'n'), expected);
        assert.deepEqual(await values('getRecordsInKeyRange', fieldFilters('steps', 'by_n_desc', [['n', operator, value]]), 'n'), expected);
      });
    }

    it('two bounds on a descending index, with reverseOrder and a cursor', async () => {
      assert.deepEqual(await values('getRecordsInKeyRange', range('steps', 'by_n_desc', { '>': [1], '<=': [4] }), 'n'), [4, 3, 2]);
      assert.deepEqual(await values('getRecordsInKeyRange', { ...range('steps', 'by_n_desc', { '>': [1], '<=': [4] }), reverseOrder: true }, 'n'), [2, 3, 4]);
      const opened = await ok(server, db('getRecordsInKeyRange', token, { ...range('steps', 'by_n_desc', { '>=': [4] }), returnCursor: true }));
      const fetched = await ok(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: 10 }, objects));
      assert.deepEqual(fetched.data.map((record: { n: number }) => record.n), [6, 5, 4]);
    });
  });

  describe('ordered comparisons never match a null key (item 2)', () => {
    before(async () => {
      await ok(server, db('createTable', token, {
        tableName: 'gaps',
        fields: [
          { name: 'label', type: 'varchar', length: 10 }, { name: 'i', type: 'integer' }, { name: 's', type: 'varchar', length: 10 },
          { name: 'b', type: 'bigint' }, { name: 'd', type: 'date' },
        ],
      }));
      await ok(server, db('insertRecords', token, {
        tableName: 'gaps',
        sourceData: [
          { label: 'null1' },
          { label: 'one', i: 1, s: 'a', b: '9007199254740993', d: '2001-01-01' },
          { label: 'two', i: 2, s: 'b', b: '9007199254740994', d: '2002-01-01' },
          { label: 'null2' },
        ],
      }));
      for (const name of ['i', 's', 'b', 'd']) {
        await ok(server, db('createIndex', token, { tableName: 'gaps', indexName: `${name}_asc`, fields: [{ name }] }));
        await ok(server, db('createIndex', token, { tableName: 'gaps', indexName: `${name}_desc`, fields: [{ name, ascending: false }] }));
      }
    });

    const second: Record<string, unknown> = { i: 2, s: 'b', b: '9007199254740994', d: '2002-01-01' };
    for (const name of ['i', 's', 'b', 'd']) {
      for (const direction of ['asc', 'desc']) {
        it(`${name} (${direction}): <, <= through indexRange and indexFieldFilters`, async () => {
          const index = `${name}_${direction}`;
          assert.deepEqual(await values('getRecordsInKeyRange', range('gaps', index, { '<': [second[name]] }), 'label'), ['one']);
          const both = direction === 'asc' ? ['one', 'two'] : ['two', 'one'];
          assert.deepEqual(await values('getRecordsInKeyRange', range('gaps', index, { '<=': [second[name]] }), 'label'), both);
          assert.deepEqual(await values('getRecordsInKeyRange', fieldFilters('gaps', index, [[name, '<', second[name]]]), 'label'), ['one']);
          assert.deepEqual(await values('getRecordsInKeyRange', fieldFilters('gaps', index, [[name, '<=', second[name]]]), 'label'), both);
        });
      }
    }

    it('a null bound value is refused (query nulls with tableFilter)', async () => {
      await fails(server, db('getRecordsInKeyRange', token, range('gaps', 'i_asc', { '<': [null] })), 4073);
      assert.deepEqual(await values('getRecordsByTable', { tableName: 'gaps', tableFilter: 'i == null' }, 'label'), ['null1', 'null2']);
    });
  });

  describe('multi-byte text and unique JSON properties (items 1 and 3)', () => {
    it('a unique varchar(6) index holds "éééa" and "éééb"; = finds exactly one', async () => {
      await ok(server, db('createTable', token, { tableName: 'words', fields: [{ name: 'w', type: 'varchar', length: 6 }] }));
      await ok(server, db('createIndex', token, { tableName: 'words', indexName: 'by_w', unique: true, fields: [{ name: 'w' }] }));
      await ok(server, db('insertRecords', token, { tableName: 'words', sourceData: [{ w: 'éééa' }, { w: 'éééb' }, { w: 'éééaa' }] }));
      await fails(server, db('insertRecords', token, { tableName: 'words', sourceData: [{ w: 'éééb' }] }), 2);
      assert.deepEqual(await values('getRecordsInKeyRange', range('words', 'by_w', { '=': ['éééa'] }), 'w'), ['éééa']);
      assert.deepEqual(await values('getRecordsInKeyRange', range('words', 'by_w', { '>': ['éééa'] }), 'w'), ['éééaa', 'éééb']);
    });

    it('a value longer than an index segment\'s size is refused when written, in a transaction too', async () => {
      await ok(server, db('createTable', token, { tableName: 'tags', fields: [{ name: 'tag', type: 'varchar' }] }));
      await ok(server, db('createIndex', token, { tableName: 'tags', indexName: 'by_tag', fields: [{ name: 'tag', size: 4 }] }));
      await fails(server, db('insertRecords', token, { tableName: 'tags', sourceData: [{ tag: 'ééé' }] }), 4031);
      const transactionId = (await ok(server, db('createTransaction', token))).transactionId;
      await ok(server, db('insertRecords', token, { tableName: 'tags', transactionId, sourceData: [{ tag: 'éé' }] }));
      await fails(server, db('insertRecords', token, { tableName: 'tags', transactionId, sourceData: [{ tag: 'abcde' }] }), 4031);
      await fails(server, db('updateRecords', token, { tableName: 'tags', transactionId, sourceData: [{ id: 1, tag: 'abcde' }] }), 4031);
      await ok(server, db('commitTransaction', token, { transactionId }));
      assert.deepEqual(await values('getRecordsByIndex', { tableName: 'tags', indexName: 'by_tag' }, 'tag'), ['éé']);
    });

    it('rows without the property of a unique JSON-property index never collide', async () => {
      await ok(server, db('createTable', token, { tableName: 'profiles', fields: [{ name: 'doc', type: 'json' }] }));
      await ok(server, db('createIndex', token, { tableName: 'profiles', indexName: 'by_email', unique: true, fields: [{ name: 'doc', key: 'email', type: 'varchar', size: 40 }] }));
      await ok(server, db('insertRecords', token, { tableName: 'profiles', sourceData: [{ doc: {} }, { doc: { email: null } }, { doc: { other: 2 } }, { doc: { email: 'a@x' } }] }));
      await fails(server, db('insertRecords', token, { tableName: 'profiles', sourceData: [{ doc: { email: 'a@x' } }] }), 2);
      await ok(server, db('updateRecords', token, { tableName: 'profiles', sourceData: [{ id: 4, doc: {} }] }));
      const transactionId = (await ok(server, db('createTransaction', token))).transactionId;
      await ok(server, db('insertRecords', token, { tableName: 'profiles', transactionId, sourceData: [{ doc: {} }, { doc: { email: 'a@x' } }] }));
      await ok(server, db('commitTransaction', token, { transactionId }));
    });
  });

  describe('columns named like Object.prototype members (item 5)', () => {
    const NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];
    const full = (label: string) => Object.fromEntries([['label', label], ...NAMES.map((name) => [name, `${label}-${name.length}`])]);
    const lower = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
    const nulls = (label: string) => Object.fromEntries([['label', label], ...NAMES.map((name) => [name.toLowerCase(), null])]);

    before(async () => {
      await ok(server, db('createTable', token, { tableName: 'proto', fields: [{ name: 'label', type: 'varchar', length: 10 }, ...NAMES.map((name) => ({ name, type: 'varchar', length: 10 }))] }));
      await ok(server, db('createIndex', token, { tableName: 'proto', indexName: 'by_constructor', fields: [{ name: 'constructor' }] }));
    });

    /** The record `id` as getRecordsByIds returns it, without `id`. */
    async function read(id: number): Promise<Record<string, unknown>> {
      const result = await ok(server, db('getRecordsByIds', token, { tableName: 'proto', ids: [id] }, objects));
      const { id: _id, ...rest } = result.data[0];
      return rest;
    }

    it('insertRecords (objects and arrays) stores them; every read returns them', async () => {
      const inserted = await ok(server, db('insertRecords', token, { tableName: 'proto', sourceData: [full('one')] }));
      const [one] = inserted.ids;
      assert.deepEqual(await read(one), lower(full('one')));
      const fieldNames = ['label', ...NAMES];
      const arrays = await ok(server, db('insertRecords', token, { tableName: 'proto', dataFormat: 'arrays', fieldNames, sourceData: [fieldNames.map((name) => full('two')[name])] }));
      assert.deepEqual(await read(arrays.ids[0]), lower(full('two')));
      assert.deepEqual(await values('getRecordsByTable', { tableName: 'proto', tableFilter: 'constructor == "one-11"' }, 'label'), ['one']);
      assert.deepEqual(await values('getRecordsInKeyRange', range('proto', 'by_constructor', { '>=': ['two'] }), 'constructor'), ['two-11']);
      assert.deepEqual(await values('getRecordsByIndex', { tableName: 'proto', indexName: 'by_constructor' }, 'tostring'), ['one-8', 'two-8']);
      const some = await ok(server, db('getRecordsByIds', token, { tableName: 'proto', ids: [one] }, { responseOptions: { dataFormat: 'objects', includeFields: ['constructor', 'valueof'] } }));
      assert.deepEqual(some.data, [{ constructor: 'one-11', valueof: 'one-7' }]);
    });

    it('a record that omits them reads them as null; updateRecords changes them', async () => {
      const [id] = (await ok(server, db('insertRecords', token, { tableName: 'proto', sourceData: [{ label: 'bare' }] }))).ids;
      assert.deepEqual(await read(id), nulls('bare'));
      await ok(server, db('updateRecords', token, { tableName: 'proto', sourceData: [{ id, label: 'bare2' }] }));
      assert.deepEqual(await read(id), nulls('bare2'));
      await ok(server, db('updateRecords', token, { tableName: 'proto', sourceData: [{ id, constructor: 'c', toString: 't' }] }));
      assert.deepEqual(await read(id), { ...nulls('bare2'), constructor: 'c', tostring: 't' });
      await ok(server, db('updateRecords', token, { tableName: 'proto', dataFormat: 'arrays', fieldNames: ['id', 'valueOf'], sourceData: [[id, 'v']] }));
      assert.deepEqual(await read(id), { ...nulls('bare2'), constructor: 'c', tostring: 't', valueof: 'v' });
    });

    it('a JSON value keeps its "constructor" property', async () => {
      await ok(server, db('createTable', token, { tableName: 'protojson', fields: [{ name: 'doc', type: 'json' }] }));
      const [id] = (await ok(server, db('insertRecords', token, { tableName: 'protojson', sourceData: [{ doc: { constructor: 'x', toString: 1 } }] }))).ids;
      const result = await ok(server, db('getRecordsByIds', token, { tableName: 'protojson', ids: [id] }, objects));
      assert.deepEqual(result.data[0].doc, { constructor: 'x', toString: 1 });
    });
  });
});
