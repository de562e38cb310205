import assert from 'node:assert/strict';
import type { CommandContext } from '../../kernel/bus/command';
import { startData, type DataFixture } from './data-helpers';

describe('data commands: databases, tables, indexes', () => {
  let f: DataFixture;
  let reader: CommandContext;

  before(async () => {
    f = await startData();
    await f.server.engine.accounts.create('reader1', 'secret-password', ['reader']);
    reader = { principal: f.server.engine.accounts.principal('reader1'), origin: 'internal' };
  });
  after(async () => { await f.server.close(); });

  describe('database.*', () => {
    it('creates, lists and deletes databases (names case-insensitive)', async () => {
      assert.deepEqual(await f.exec('database.create', { database: 'Sales' }), { database: 'sales' });
      const { databases } = await f.exec('database.list', {});
      assert.ok(databases.includes('main'));
      assert.ok(databases.includes('sales'));
      await f.fails('database.create', { database: 'SALES' }, 'DATABASE_EXISTS');
      assert.deepEqual(await f.exec('database.delete', { database: 'sales' }), { database: 'sales' });
      await f.fails('database.delete', { database: 'sales' }, 'DATABASE_NOT_FOUND');
    });

    it('validates params', async () => {
      await f.fails('database.create', {}, 'MISSING_PARAMETER');
      await f.fails('database.create', { database: 5 }, 'INVALID_PARAMETER');
      await f.fails('database.create', { database: '' }, 'INVALID_PARAMETER');
      await f.fails('database.create', { database: 'x'.repeat(65) }, 'INVALID_PARAMETER');
    });

    it('a reader may list but not create or delete', async () => {
      await f.exec('database.list', {}, reader);
      await f.fails('database.create', { database: 'nope' }, 'NOT_AUTHORIZED', reader);
      await f.fails('database.delete', { database: 'main' }, 'NOT_AUTHORIZED', reader);
    });
  });

  describe('table.*', () => {
    it('creates a table from raw column objects and describes it', async () => {
      const { table } = await f.exec('table.create', {
        database: 'MAIN', table: 'People',
        fields: [
          { name: 'Name', type: 'VARCHAR', length: 48 },
          { name: 'age', type: 'integer', length: 4 },
          { name: 'born', type: 'date', defaultValue: '07/11/2024' },
        ],
        format: { dateFormat: 'rest' },
      });
      assert.equal(table.name, 'people');
      assert.equal(table.database, 'main');
      assert.deepEqual(table.columns.map((c: any) => c.name), ['id', 'name', 'age', 'born']);
      assert.equal(table.columns[3].defaultValue, '2024-07-11');
      assert.equal(table.idDeclared, false);
      const { tables } = await f.exec('table.describe', { database: 'main', tables: ['PEOPLE'] });
      assert.equal(tables.length, 1);
      assert.equal(tables[0].name, 'people');
      assert.ok((await f.exec('table.list', { database: 'main' })).tables.includes('people'));
    });

    it('describes every table when `tables` is empty', async () => {
      const { tables } = await f.exec('table.describe', { database: 'main', tables: [] });
      assert.ok(tables.some((t: any) => t.name === 'people'));
    });

    it('rejects bad table definitions', async () => {
      await f.fails('table.create', { database: 'main', table: 't1', fields: [{ name: 'a', type: 'nosuchtype' }] }, 'INVALID_TABLE_DEFINITION');
      await f.fails('table.create', { database: 'main', table: 't1', fields: [{ name: 'a', type: 'integer' }, { name: 'A', type: 'integer' }] }, 'INVALID_TABLE_DEFINITION');
      await f.fails('table.create', { database: 'main', table: 't1', fields: [{ name: 'd', type: 'date', defaultValue: 'yesterday' }] }, 'INVALID_TABLE_DEFINITION');
      await f.fails('table.create', { database: 'main', table: 't1', fields: 'a' }, 'INVALID_PARAMETER');
      await f.fails('table.create', { database: 'main', table: 't1' }, 'MISSING_PARAMETER');
      await f.fails('table.create', { database: 'main', table: 'x'.repeat(65), fields: [] }, 'INVALID_PARAMETER');
      await f.fails('table.create', { database: 'main', table: 't1', fields: [], format: { dateFormat: 'american' } }, 'INVALID_PARAMETER');
      await f.fails('table.create', { database: 'nodb', table: 't1', fields: [{ name: 'a', type: 'integer' }] }, 'DATABASE_NOT_FOUND');
      await f.fails('table.create', { database: 'main', table: 'people', fields: [{ name: 'a', type: 'integer' }] }, 'TABLE_EXISTS');
    });

    it('answers TABLE_NOT_FOUND and DATABASE_NOT_FOUND', async () => {
      await f.fails('table.describe', { database: 'main', tables: ['nosuch'] }, 'TABLE_NOT_FOUND');
      await f.fails('table.list', { database: 'nodb' }, 'DATABASE_NOT_FOUND');
      await f.fails('table.delete', { database: 'main', tables: ['nosuch'] }, 'TABLE_NOT_FOUND');
      await f.fails('table.alter', { database: 'main', table: 'nosuch', addFields: [{ name: 'x', type: 'integer' }] }, 'TABLE_NOT_FOUND');
    });

    it('adds columns with table.alter', async () => {
      const { table } = await f.exec('table.alter', { database: 'main', table: 'people', addFields: [{ name: 'email', type: 'varchar', length: 128 }] });
      assert.deepEqual(table.columns.map((c: any) => c.name), ['id', 'name', 'age', 'born', 'email']);
      await f.fails('table.alter', { database: 'main', table: 'people', addFields: [{ name: 'EMAIL', type: 'integer' }] }, 'INVALID_TABLE_DEFINITION');
      await f.fails('table.alter', { database: 'main', table: 'people', addFields: [] }, 'INVALID_PARAMETER');
    });

    it('deletes tables all or none', async () => {
      await f.exec('table.create', { database: 'main', table: 'd1', fields: [{ name: 'a', type: 'integer' }] });
      await f.exec('table.create', { database: 'main', table: 'd2', fields: [{ name: 'a', type: 'integer' }] });
      await f.fails('table.delete', { database: 'main', tables: ['d1', 'nosuch'] }, 'TABLE_NOT_FOUND');
      let { tables } = await f.exec('table.list', { database: 'main' });
      assert.ok(tables.includes('d1'));
      assert.deepEqual(await f.exec('table.delete', { database: 'main', tables: ['D1', 'd2'] }), { tables: ['d1', 'd2'] });
      ({ tables } = await f.exec('table.list', { database: 'main' }));
      assert.ok(!tables.includes('d1') && !tables.includes('d2'));
      await f.fails('table.delete', { database: 'main', tables: [] }, 'INVALID_PARAMETER');
    });

    it('a reader may list and describe but not create, alter or delete', async () => {
      await f.exec('table.list', { database: 'main' }, reader);
      await f.exec('table.describe', { database: 'main', tables: ['people'] }, reader);
      await f.fails('table.create', { database: 'main', table: 'r', fields: [] }, 'NOT_AUTHORIZED', reader);
      await f.fails('table.alter', { database: 'main', table: 'people', addFields: [{ name: 'z', type: 'bit' }] }, 'NOT_AUTHORIZED', reader);
      await f.fails('table.delete', { database: 'main', tables: ['people'] }, 'NOT_AUTHORIZED', reader);
    });
  });

  describe('index.*', () => {
    it('creates, lists, gets and deletes indexes', async () => {
      const { index } = await f.exec('index.create', {
        database: 'main', table: 'people', index: 'ByName', unique: false, fields: [{ name: 'Name' }, { name: 'age', ascending: false }],
      });
      assert.equal(index.name, 'byname');
      assert.deepEqual(index.fields.map((s: any) => [s.name, s.ascending]), [['name', true], ['age', false]]);
      const { indexes } = await f.exec('index.list', { database: 'main', table: 'people' });
      assert.deepEqual(indexes.map((i: any) => i.name).sort(), ['byname', 'id_pk']);
      assert.equal(indexes.find((i: any) => i.name === 'id_pk').automatic, true);
      const got = await f.exec('index.get', { database: 'main', table: 'people', index: 'BYNAME' });
      assert.equal(got.index.unique, false);
      await f.fails('index.create', { database: 'main', table: 'people', index: 'byname', fields: [{ name: 'age' }] }, 'INDEX_EXISTS');
      assert.deepEqual(await f.exec('index.delete', { database: 'main', table: 'people', indexes: ['ByName'] }), { indexes: ['byname'] });
      await f.fails('index.get', { database: 'main', table: 'people', index: 'byname' }, 'INDEX_NOT_FOUND');
    });

    it('rejects bad index definitions', async () => {
      await f.fails('index.create', { database: 'main', table: 'people', index: 'bad', fields: [{ name: 'nosuch' }] }, 'COLUMN_NOT_FOUND');
      await f.fails('index.create', { database: 'main', table: 'people', index: 'bad', fields: [] }, 'INVALID_PARAMETER');
      await f.fails('index.create', { database: 'main', table: 'people', index: 'bad' }, 'MISSING_PARAMETER');
      await f.fails('index.create', { database: 'main', table: 'people', index: 'bad', fields: [{ name: 'age', ascending: 'yes' }] }, 'INVALID_PARAMETER');
      await f.fails('index.create', { database: 'main', table: 'nosuch', index: 'bad', fields: [{ name: 'a' }] }, 'TABLE_NOT_FOUND');
      await f.fails('index.get', { database: 'main', table: 'people', index: 'nosuch' }, 'INDEX_NOT_FOUND');
      await f.fails('index.delete', { database: 'main', table: 'people', indexes: ['nosuch'] }, 'INDEX_NOT_FOUND');
      await f.fails('index.list', { database: 'main', table: 'nosuch' }, 'TABLE_NOT_FOUND');
      await f.fails('index.list', { database: 'main' }, 'MISSING_PARAMETER');
    });

    it('a unique index over duplicate rows fails cleanly', async () => {
      await f.exec('table.create', { database: 'main', table: 'dups', fields: [{ name: 'a', type: 'integer' }] });
      await f.exec('record.insert', { database: 'main', table: 'dups', records: [{ a: 1 }, { a: 1 }] });
      await f.fails('index.create', { database: 'main', table: 'dups', index: 'ua', unique: true, fields: [{ name: 'a' }] }, 'DUPLICATE_KEY');
      const { indexes } = await f.exec('index.list', { database: 'main', table: 'dups' });
      assert.deepEqual(indexes.map((i: any) => i.name), ['id_pk']);
    });

    it('a reader may list and get indexes but not create or delete them', async () => {
      await f.exec('index.list', { database: 'main', table: 'people' }, reader);
      await f.fails('index.create', { database: 'main', table: 'people', index: 'r', fields: [{ name: 'age' }] }, 'NOT_AUTHORIZED', reader);
      await f.fails('index.delete', { database: 'main', table: 'people', indexes: ['id_pk'] }, 'NOT_AUTHORIZED', reader);
    });
  });
});
