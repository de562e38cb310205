import assert from 'node:assert/strict';
import type { CommandContext } from '../../kernel/bus/command';
import { startData, type DataFixture } from './data-helpers';

describe('data commands: records', () => {
  let f: DataFixture;
  let reader: CommandContext;
  const T = { database: 'main', table: 'items' };

  before(async () => {
    f = await startData();
    await f.server.engine.accounts.create('reader2', 'secret-password', ['reader']);
    reader = { principal: f.server.engine.accounts.principal('reader2'), origin: 'internal' };
    await f.exec('table.create', {
      ...T,
      fields: [
        { name: 'name', type: 'varchar', length: 10 },
        { name: 'qty', type: 'integer' },
        { name: 'day', type: 'date' },
        { name: 'blob', type: 'binary', length: 4 },
        { name: 'big', type: 'bigint' },
        { name: 'must', type: 'varchar', length: 5, nullable: false, defaultValue: 'dflt' },
      ],
    });
    await f.exec('table.create', {
      database: 'main', table: 'strict',
      fields: [{ name: 'code', type: 'char', length: 3, nullable: false }, { name: 'n', type: 'integer' }],
    });
    await f.exec('table.create', {
      database: 'main', table: 'withid',
      fields: [{ name: 'id', type: 'bigint', primaryKey: 1 }, { name: 'v', type: 'varchar', length: 10 }],
    });
  });
  after(async () => { await f.server.close(); });

  describe('record.insert', () => {
    it('inserts objects and returns ids in creation order', async () => {
      const { ids } = await f.exec('record.insert', { ...T, records: [{ name: 'a', qty: 1 }, { NAME: 'b', Qty: 2, day: '2024-07-11' }] });
      assert.equal(ids.length, 2);
      assert.ok(ids[1] > ids[0]);
      const got = await f.exec('record.get', { ...T, ids });
      assert.equal(got.records[0].name, 'a');
      assert.equal(got.records[0].must, 'dflt');
      assert.equal(got.records[1].day, '2024-07-11');
      assert.equal(got.records[1].id, ids[1]);
    });

    it('inserts arrays in fieldNames order, or in declared-column order without fieldNames', async () => {
      const { ids } = await f.exec('record.insert', { ...T, fieldNames: ['qty', 'name'], records: [[5, 'five'], [6, 'six']] });
      const got = await f.exec('record.get', { ...T, ids, select: ['name', 'qty'] });
      assert.deepEqual(got.records, [{ id: ids[0], name: 'five', qty: 5 }, { id: ids[1], name: 'six', qty: 6 }]);
      assert.deepEqual(got.fields.map((c: any) => c.name), ['name', 'qty']);
      const plain = await f.exec('record.insert', { database: 'main', table: 'strict', records: [['abc', 7]] });
      const back = await f.exec('record.get', { database: 'main', table: 'strict', ids: plain.ids });
      assert.deepEqual(back.records[0], { id: plain.ids[0], code: 'abc', n: 7 });
    });

    it('decodes values in the requested format', async () => {
      const { ids } = await f.exec('record.insert', {
        ...T, records: [{ day: '07/04/2024', blob: 'AQI=' }], format: { dateFormat: 'rest', binaryFormat: 'base64' },
      });
      const iso = await f.exec('record.get', { ...T, ids });
      assert.equal(iso.records[0].day, '2024-07-04');
      assert.equal(iso.records[0].blob, '01020000');
      const rest = await f.exec('record.get', { ...T, ids, format: { dateFormat: 'rest', binaryFormat: 'byteArray' } });
      assert.equal(rest.records[0].day, '07/04/2024');
      assert.deepEqual(rest.records[0].blob, [1, 2, 0, 0]);
      const asStrings = await f.exec('record.get', { ...T, ids, format: { numberFormat: 'string' } });
      assert.equal(asStrings.records[0].id, String(ids[0]));
    });

    it('rejects an unknown column with COLUMN_NOT_FOUND naming column and table', async () => {
      const error = await f.fails('record.insert', { ...T, records: [{ name: 'x', nosuch: 1 }] }, 'COLUMN_NOT_FOUND');
      assert.equal(error.details.column, 'nosuch');
      assert.equal(error.details.table, 'items');
      await f.fails('record.insert', { ...T, fieldNames: ['name', 'nosuch'], records: [['x', 1]] }, 'COLUMN_NOT_FOUND');
    });

    it('rejects `id` unless the table declares it', async () => {
      await f.fails('record.insert', { ...T, records: [{ id: 5, name: 'x' }] }, 'INVALID_COLUMN_VALUE');
      const { ids } = await f.exec('record.insert', { database: 'main', table: 'withid', records: [{ id: 100, v: 'a' }, { v: 'b' }] });
      assert.equal(ids[0], 100);
      assert.ok(ids[1] > 100);
      await f.fails('record.insert', { database: 'main', table: 'withid', records: [{ id: 100, v: 'dup' }] }, 'DUPLICATE_KEY');
      await f.fails('record.insert', { database: 'main', table: 'withid', records: [{ id: -1, v: 'neg' }] }, 'INVALID_COLUMN_VALUE');
    });

    it('rejects values of the wrong type, out of range or too long', async () => {
      await f.fails('record.insert', { ...T, records: [{ qty: 'many' }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.insert', { ...T, records: [{ qty: 2 ** 31 }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.insert', { ...T, records: [{ name: 'x'.repeat(11) }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.insert', { ...T, records: [{ day: '13/45/2024' }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.insert', { ...T, records: [{ must: null }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.insert', { database: 'main', table: 'strict', records: [{ n: 1 }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.insert', { ...T, fieldNames: ['name', 'qty'], records: [['x']] }, 'INVALID_PARAMETER');
      await f.fails('record.insert', { ...T, fieldNames: ['name', 'name'], records: [['x', 'y']] }, 'INVALID_PARAMETER');
      await f.fails('record.insert', { ...T, fieldNames: ['name'], records: [{ name: 'x' }] }, 'INVALID_PARAMETER');
    });

    it('validates params', async () => {
      await f.fails('record.insert', { ...T }, 'MISSING_PARAMETER');
      await f.fails('record.insert', { ...T, records: [] }, 'INVALID_PARAMETER');
      await f.fails('record.insert', { ...T, records: [5] }, 'INVALID_PARAMETER');
      await f.fails('record.insert', { ...T, records: {} }, 'INVALID_PARAMETER');
      await f.fails('record.insert', { database: 'main', records: [{}] }, 'MISSING_PARAMETER');
      await f.fails('record.insert', { database: 'main', table: 'nosuch', records: [{}] }, 'TABLE_NOT_FOUND');
      await f.fails('record.insert', { database: 'nodb', table: 'items', records: [{}] }, 'DATABASE_NOT_FOUND');
    });

    it('is all or nothing: a bad row 4999 of 5000 stores nothing and is named', async () => {
      const before = (await f.exec('record.find', { ...T, limit: 1, countTotal: true })).total;
      const records = Array.from({ length: 5000 }, (_, i) => ({ name: `n${i}`, qty: i }));
      records[4999] = { name: 'bad', qty: 'not a number' as unknown as number };
      const error = await f.fails('record.insert', { ...T, records }, 'INVALID_COLUMN_VALUE');
      assert.match(error.message, /^record 4999: /);
      assert.equal(error.details.record, 4999);
      assert.equal(error.details.column, 'qty');
      const after = (await f.exec('record.find', { ...T, limit: 1, countTotal: true })).total;
      assert.equal(after, before);
    });

    it('is all or nothing on a duplicate unique key', async () => {
      await f.exec('index.create', { ...T, index: 'uname', unique: true, fields: [{ name: 'name' }] });
      await f.exec('record.insert', { ...T, records: [{ name: 'uniq1' }] });
      const before = (await f.exec('record.find', { ...T, limit: 1, countTotal: true })).total;
      await f.fails('record.insert', { ...T, records: [{ name: 'uniq2' }, { name: 'uniq1' }] }, 'DUPLICATE_KEY');
      assert.equal((await f.exec('record.find', { ...T, limit: 1, countTotal: true })).total, before);
      await f.exec('index.delete', { ...T, indexes: ['uname'] });
    });

    it('a reader cannot insert', async () => {
      await f.fails('record.insert', { ...T, records: [{ name: 'r' }] }, 'NOT_AUTHORIZED', reader);
    });
  });

  describe('record.get', () => {
    it('returns null for a missing id, RECORD_NOT_FOUND with mustExist', async () => {
      const { ids } = await f.exec('record.insert', { ...T, records: [{ name: 'g' }] });
      const got = await f.exec('record.get', { ...T, ids: [ids[0], 999_999] });
      assert.equal(got.records[1], null);
      assert.equal(got.records[0].name, 'g');
      assert.equal(got.records[0].qty, null);
      const error = await f.fails('record.get', { ...T, ids: [999_999], mustExist: true }, 'RECORD_NOT_FOUND');
      assert.equal(error.details.id, 999_999);
      assert.equal(error.details.table, 'items');
    });

    it('validates ids and select', async () => {
      await f.fails('record.get', { ...T, ids: [0] }, 'INVALID_PARAMETER');
      await f.fails('record.get', { ...T, ids: ['1'] }, 'INVALID_PARAMETER');
      await f.fails('record.get', { ...T, ids: [1.5] }, 'INVALID_PARAMETER');
      await f.fails('record.get', { ...T, ids: 1 }, 'INVALID_PARAMETER');
      await f.fails('record.get', { ...T }, 'MISSING_PARAMETER');
      await f.fails('record.get', { ...T, ids: [1], select: ['nosuch'] }, 'COLUMN_NOT_FOUND');
      await f.fails('record.get', { ...T, ids: [1], format: { binaryFormat: 'octal' } }, 'INVALID_PARAMETER');
      await f.fails('record.get', { ...T, ids: [1], format: { binaryFormt: 'hex' } }, 'INVALID_PARAMETER');
    });

    it('a reader may read', async () => {
      await f.exec('record.get', { ...T, ids: [1] }, reader);
    });
  });

  describe('record.replace and record.patch', () => {
    it('replace sets omitted columns to null (or their default); patch keeps them', async () => {
      const { ids: [id] } = await f.exec('record.insert', { ...T, records: [{ name: 'p', qty: 3, day: '2024-01-02', must: 'm' }] });
      assert.deepEqual(await f.exec('record.patch', { ...T, records: [{ id, values: { qty: 4 } }] }), { updated: 1 });
      let got = (await f.exec('record.get', { ...T, ids: [id] })).records[0];
      assert.equal(got.name, 'p');
      assert.equal(got.qty, 4);
      assert.deepEqual(await f.exec('record.replace', { ...T, records: [{ id, values: { name: 'r' } }] }), { updated: 1 });
      got = (await f.exec('record.get', { ...T, ids: [id] })).records[0];
      assert.equal(got.name, 'r');
      assert.equal(got.qty, null);
      assert.equal(got.day, null);
      assert.equal(got.must, 'dflt');
    });

    it('fails RECORD_NOT_FOUND for a missing id, changing nothing', async () => {
      const { ids: [id] } = await f.exec('record.insert', { ...T, records: [{ name: 'keep', qty: 1 }] });
      await f.fails('record.patch', { ...T, records: [{ id, values: { qty: 2 } }, { id: 999_999, values: { qty: 2 } }] }, 'RECORD_NOT_FOUND');
      await f.fails('record.replace', { ...T, records: [{ id: 999_999, values: { qty: 2 } }] }, 'RECORD_NOT_FOUND');
      assert.equal((await f.exec('record.get', { ...T, ids: [id] })).records[0].qty, 1);
    });

    it('rejects bad values, unknown columns and id changes, naming the record', async () => {
      const { ids: [id] } = await f.exec('record.insert', { ...T, records: [{ name: 'v' }] });
      const error = await f.fails('record.patch', { ...T, records: [{ id, values: { qty: 1 } }, { id, values: { qty: 'x' } }] }, 'INVALID_COLUMN_VALUE');
      assert.match(error.message, /^record 1: /);
      await f.fails('record.patch', { ...T, records: [{ id, values: { nosuch: 1 } }] }, 'COLUMN_NOT_FOUND');
      await f.fails('record.patch', { ...T, records: [{ id, values: { id: id + 1 } }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.replace', { database: 'main', table: 'strict', records: [{ id: 1, values: { n: 1 } }] }, 'INVALID_COLUMN_VALUE');
      await f.fails('record.patch', { ...T, records: [{ values: { qty: 1 } }] }, 'MISSING_PARAMETER');
      await f.fails('record.patch', { ...T, records: [{ id: 'one', values: {} }] }, 'INVALID_PARAMETER');
      await f.fails('record.patch', { ...T, records: [] }, 'INVALID_PARAMETER');
    });

    it('a reader cannot replace or patch', async () => {
      await f.fails('record.replace', { ...T, records: [{ id: 1, values: {} }] }, 'NOT_AUTHORIZED', reader);
      await f.fails('record.patch', { ...T, records: [{ id: 1, values: {} }] }, 'NOT_AUTHORIZED', reader);
    });
  });

  describe('record.delete', () => {
    it('deletes and counts; mustExist makes a missing id RECORD_NOT_FOUND', async () => {
      const { ids } = await f.exec('record.insert', { ...T, records: [{ name: 'd1' }, { name: 'd2' }] });
      assert.deepEqual(await f.exec('record.delete', { ...T, ids: [ids[0], 999_999] }), { deleted: 1 });
      await f.fails('record.delete', { ...T, ids: [ids[1], 999_999], mustExist: true }, 'RECORD_NOT_FOUND');
      assert.ok((await f.exec('record.get', { ...T, ids: [ids[1]] })).records[0]);
      await f.fails('record.delete', { ...T, ids: [] }, 'INVALID_PARAMETER');
      await f.fails('record.delete', { ...T, ids: [ids[1]] }, 'NOT_AUTHORIZED', reader);
    });
  });
});
