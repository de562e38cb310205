import assert from 'node:assert/strict';
import type { CommandContext } from '../../kernel/bus/command';
import { startData, type DataFixture } from './data-helpers';

describe('data commands: record.find', () => {
  let f: DataFixture;
  let reader: CommandContext;
  const T = { database: 'main', table: 'people' };
  const cities = ['Oslo', 'Bergen', 'Oslo', 'Tromso', 'Bergen', 'Oslo'];
  let ids: number[];

  before(async () => {
    f = await startData();
    await f.server.engine.accounts.create('reader3', 'secret-password', ['reader']);
    reader = { principal: f.server.engine.accounts.principal('reader3'), origin: 'internal' };
    await f.exec('table.create', {
      ...T,
      fields: [
        { name: 'city', type: 'varchar', length: 20 },
        { name: 'age', type: 'integer' },
        { name: 'born', type: 'date' },
        { name: 'info', type: 'json' },
      ],
    });
    ({ ids } = await f.exec('record.insert', {
      ...T,
      records: cities.map((city, i) => ({ city, age: 20 + i, born: `2000-01-0${i + 1}`, info: { rank: 10 - i } })),
    }));
    await f.exec('index.create', { ...T, index: 'by_city_age', fields: [{ name: 'city' }, { name: 'age', ascending: false }] });
    await f.exec('index.create', { ...T, index: 'by_born', fields: [{ name: 'born' }] });
    await f.exec('index.create', { ...T, index: 'by_rank', fields: [{ name: 'info', key: 'rank', type: 'integer' }] });
  });
  after(async () => { await f.server.close(); });

  const ages = (result: any): number[] => result.records.map((r: any) => r.age);

  it('reads in record-ID order with limit, skip, reverse, more and total', async () => {
    let result = await f.exec('record.find', { ...T, limit: 4, countTotal: true });
    assert.deepEqual(result.records.map((r: any) => r.id), ids.slice(0, 4));
    assert.equal(result.more, true);
    assert.equal(result.total, 6);
    assert.deepEqual(result.fields.map((c: any) => c.name), ['id', 'city', 'age', 'born', 'info']);
    result = await f.exec('record.find', { ...T, limit: 4, skip: 4 });
    assert.deepEqual(ages(result), [24, 25]);
    assert.equal(result.more, false);
    assert.equal(result.total, undefined);
    result = await f.exec('record.find', { ...T, limit: 2, reverse: true });
    assert.deepEqual(ages(result), [25, 24]);
    result = await f.exec('record.find', { ...T, limit: 6 });
    assert.equal(result.more, false);
  });

  it('follows index order (descending segment largest first)', async () => {
    const result = await f.exec('record.find', { ...T, index: 'BY_CITY_AGE', limit: 10 });
    assert.deepEqual(result.records.map((r: any) => `${r.city}${r.age}`), ['Bergen24', 'Bergen21', 'Oslo25', 'Oslo22', 'Oslo20', 'Tromso23']);
  });

  it('bounds the leading segments (inclusive and exclusive)', async () => {
    let result = await f.exec('record.find', { ...T, index: 'by_city_age', lower: { values: ['Oslo'], inclusive: true }, upper: { values: ['Oslo'], inclusive: true }, limit: 10 });
    assert.deepEqual(ages(result), [25, 22, 20]);
    result = await f.exec('record.find', { ...T, index: 'by_city_age', lower: { values: ['Oslo'], inclusive: false }, limit: 10 });
    assert.deepEqual(ages(result), [23]);
    result = await f.exec('record.find', { ...T, index: 'by_city_age', lower: { values: ['Oslo', 22] }, upper: { values: ['Oslo', 20], inclusive: true }, limit: 10 });
    assert.deepEqual(ages(result), [22, 20]);
    result = await f.exec('record.find', { ...T, index: 'by_city_age', upper: { values: ['Oslo'], inclusive: false }, limit: 10, reverse: true });
    assert.deepEqual(ages(result), [21, 24]);
  });

  it('bounds the record-ID order without an index', async () => {
    const result = await f.exec('record.find', { ...T, lower: { values: [ids[1]] }, upper: { values: [ids[3]], inclusive: false }, limit: 10 });
    assert.deepEqual(result.records.map((r: any) => r.id), [ids[1], ids[2]]);
  });

  it('matches a prefix (find_set) by values and byte length', async () => {
    let result = await f.exec('record.find', { ...T, index: 'by_city_age', prefix: { values: ['Bergen'] }, limit: 10 });
    assert.deepEqual(ages(result), [24, 21]);
    result = await f.exec('record.find', { ...T, index: 'by_city_age', prefix: { values: ['Tr'], byteLength: 2 }, limit: 10 });
    assert.deepEqual(ages(result), [23]);
    await f.fails('record.find', { ...T, index: 'by_city_age', prefix: { values: ['Tr'], byteLength: 1000 }, limit: 10 }, 'INVALID_QUERY');
  });

  it('decodes bound values in the request format (REST dates) and by JSON property type', async () => {
    let result = await f.exec('record.find', { ...T, index: 'by_born', lower: { values: ['01/05/2000'] }, format: { dateFormat: 'rest' }, limit: 10 });
    assert.deepEqual(ages(result), [24, 25]);
    assert.equal(result.records[0].born, '01/05/2000');
    result = await f.exec('record.find', { ...T, index: 'by_rank', upper: { values: [6], inclusive: true }, limit: 10 });
    assert.deepEqual(ages(result), [25, 24]);
    await f.fails('record.find', { ...T, index: 'by_born', lower: { values: ['someday'] }, format: { dateFormat: 'rest' }, limit: 10 }, 'INVALID_COLUMN_VALUE');
    await f.fails('record.find', { ...T, index: 'by_city_age', lower: { values: ['Oslo', 'old'] }, limit: 10 }, 'INVALID_COLUMN_VALUE');
    await f.fails('record.find', { ...T, index: 'by_rank', lower: { values: ['high'] }, limit: 10 }, 'INVALID_COLUMN_VALUE');
  });

  it('rejects bounds with too many or no values', async () => {
    await f.fails('record.find', { ...T, index: 'by_city_age', lower: { values: ['Oslo', 20, 1] }, limit: 10 }, 'INVALID_QUERY');
    await f.fails('record.find', { ...T, index: 'by_city_age', upper: { values: [] }, limit: 10 }, 'INVALID_QUERY');
    await f.fails('record.find', { ...T, lower: { values: [1, 2] }, limit: 10 }, 'INVALID_QUERY');
    await f.fails('record.find', { ...T, index: 'by_city_age', prefix: { values: ['a', 1, 2] }, limit: 10 }, 'INVALID_QUERY');
    await f.fails('record.find', { ...T, index: 'by_city_age', lower: { value: 'Oslo' }, limit: 10 }, 'MISSING_PARAMETER');
    await f.fails('record.find', { ...T, index: 'by_city_age', lower: { values: 'Oslo' }, limit: 10 }, 'INVALID_PARAMETER');
    await f.fails('record.find', { ...T, index: 'by_city_age', lower: { values: ['Oslo'], inclusve: true }, limit: 10 }, 'INVALID_PARAMETER');
  });

  it('filters (parsed once) with skip and limit counting matches only', async () => {
    let result = await f.exec('record.find', { ...T, filter: 'city == "Oslo" and age > 20', limit: 10 });
    assert.deepEqual(ages(result), [22, 25]);
    result = await f.exec('record.find', { ...T, index: 'by_city_age', filter: "city = 'Oslo'", skip: 1, limit: 1 });
    assert.deepEqual(ages(result), [22]);
    assert.equal(result.more, true);
    result = await f.exec('record.find', { ...T, filter: '  ', limit: 10 });
    assert.equal(result.records.length, 6);
  });

  it('answers FILTER_SYNTAX for a bad filter or an unknown column', async () => {
    await f.fails('record.find', { ...T, filter: 'city == ', limit: 10 }, 'FILTER_SYNTAX');
    await f.fails('record.find', { ...T, filter: '(age > 1', limit: 10 }, 'FILTER_SYNTAX');
    await f.fails('record.find', { ...T, filter: 'nosuch == 1', limit: 10 }, 'FILTER_SYNTAX');
    await f.fails('record.find', { ...T, filter: 5, limit: 10 }, 'INVALID_PARAMETER');
  });

  it('returns only selected columns, always with id', async () => {
    const result = await f.exec('record.find', { ...T, select: ['AGE'], limit: 1 });
    assert.deepEqual(result.records, [{ id: ids[0], age: 20 }]);
    assert.deepEqual(result.fields.map((c: any) => c.name), ['age']);
    await f.fails('record.find', { ...T, select: ['nosuch'], limit: 1 }, 'COLUMN_NOT_FOUND');
  });

  it('validates limit, skip and names', async () => {
    await f.fails('record.find', { ...T }, 'MISSING_PARAMETER');
    await f.fails('record.find', { ...T, limit: 0 }, 'INVALID_PARAMETER');
    await f.fails('record.find', { ...T, limit: 1.5 }, 'INVALID_PARAMETER');
    await f.fails('record.find', { ...T, limit: '10' }, 'INVALID_PARAMETER');
    await f.fails('record.find', { ...T, limit: 10, skip: -1 }, 'INVALID_PARAMETER');
    await f.fails('record.find', { ...T, limit: 10, reverse: 'yes' }, 'INVALID_PARAMETER');
    await f.fails('record.find', { ...T, index: 'nosuch', limit: 10 }, 'INDEX_NOT_FOUND');
    await f.fails('record.find', { database: 'main', table: 'nosuch', limit: 10 }, 'TABLE_NOT_FOUND');
    await f.fails('record.find', { database: 'nodb', table: 'people', limit: 10 }, 'DATABASE_NOT_FOUND');
  });

  it('a reader may find', async () => {
    const result = await f.exec('record.find', { ...T, limit: 1 }, reader);
    assert.equal(result.records.length, 1);
  });
});
