/** plugins/data/record-codec.ts: the positional insert path and the encoder/decoder caches. */
import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import { RecordDecoder, RecordEncoder, resolveFormat } from '../../plugins/data/record-codec';
import type { ColumnDefinition, ColumnType, Row, TableDefinition } from '../../kernel/storage/types';
import { internFormat } from '../../lib/values/interned-formats';
import { ISO_FORMAT, REST_FORMAT, encodeValue, type ValueFormat } from '../../lib/values/wire-format';

function column(name: string, type: ColumnType, extra: Partial<ColumnDefinition> = {}): ColumnDefinition {
  return { name, type, length: null, scale: null, nullable: true, primaryKey: 0, defaultValue: null, autoValue: 'none', ...extra };
}

function table(idDeclared: boolean): TableDefinition {
  return {
    database: 'main',
    name: 't',
    columns: [
      column('id', 'bigint', { nullable: false, primaryKey: 1, autoValue: 'incrementOnInsert' }),
      column('name', 'varchar', { length: 8 }),
      column('qty', 'integer', { nullable: false }),
      column('ts', 'timestamp'),
      column('big', 'bigint'),
      column('city', 'varchar', { length: 8, nullable: false, defaultValue: 'Paris' }),
    ],
    idDeclared,
    indexes: [],
    topic: null,
    createdAt: '2024-01-01T00:00:00.000Z',
  };
}

/** decodeAll's rows in stored order (undefined where a column was not supplied). */
function storedOf(def: TableDefinition, row: Row): unknown[] {
  return def.columns.slice(1).map((c) => row[c.name]);
}

/** Holes (columns not supplied) as undefined entries. */
const dense = (values: unknown[]): unknown[] => Array.from(values);

function errorOf(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof EngineError, String(error));
    return error;
  }
  assert.fail('expected an error');
}

describe('data/record-codec', () => {
  describe('RecordDecoder.decodeStored', () => {
    const def = table(true);
    const decoder = new RecordDecoder(def, ISO_FORMAT, 'insert');

    it('gives the same values as decodeAll, in stored column order, for arrays and objects', () => {
      const fieldNames = ['qty', 'ID', 'ts', 'name', 'big'];
      const arrays = [
        [1, 7, '2024-07-11T21:18:01.000', 'a', '9007199254740993'],
        [2, null, '07/11/2024 9:18:01.250', null, 5],
        [3, '12', '2024-07-11T01:00:00+02:00', 'ccc', null],
      ];
      const all = decoder.decodeAll(arrays, fieldNames);
      const stored = decoder.decodeStored(arrays, fieldNames);
      assert.equal(stored.table, def);
      assert.deepEqual(stored.ids, [7, null, 12]);
      assert.deepEqual(stored.values.map(dense), all.map((row) => storedOf(def, row)));
      assert.equal(stored.values[0][3], 9007199254740993n);
      assert.equal(stored.values[1][2], '2024-07-11T09:18:01.250');
      assert.equal(stored.values[0][4], undefined); // not supplied: the store applies the default

      const objects = [{ Name: 'x', qty: 4, id: 3 }, { qty: '5', city: 'Rome', ts: null }];
      const fromObjects = decoder.decodeStored(objects);
      assert.deepEqual(fromObjects.ids, [3, null]);
      assert.deepEqual(fromObjects.values.map(dense), decoder.decodeAll(objects).map((row) => storedOf(def, row)));
    });

    it('uses the declared column order for arrays without fieldNames', () => {
      const stored = decoder.decodeStored([[1, 'n', 2, null, null, 'Oslo']]);
      assert.deepEqual(stored.ids, [1]);
      assert.deepEqual(stored.values, [['n', 2, null, null, 'Oslo']]);
      const noId = new RecordDecoder(table(false), ISO_FORMAT, 'insert').decodeStored([['n', 2, null, null, 'Oslo']]);
      assert.deepEqual(noId.ids, [null]);
      assert.deepEqual(noId.values, [['n', 2, null, null, 'Oslo']]);
    });

    it('reports the same errors as decodeAll, with the record position', () => {
      const cases: Array<[unknown[], string[] | undefined]> = [
        [[{ qty: 1 }, { name: 'no qty' }], undefined],
        [[{ qty: 1 }, { qty: 1, nope: 2 }], undefined],
        [[{ qty: 1 }, { qty: 'many' }], undefined],
        [[{ qty: 1 }, { qty: 1, id: 0 }], undefined],
        [[{ qty: 1 }, { qty: 1, id: 1.5 }], undefined],
        [[{ qty: 1 }, { qty: 1, ts: '2023-02-29T00:00:00.000' }], undefined],
        [[[1, 'a'], [2]], ['qty', 'name']],
        [[[1, 'a'], { qty: 2 }], ['qty', 'name']],
        [[{ qty: 1 }, 'text'], undefined],
        [[[1, 'much too long']], ['qty', 'name']],
        [[[null, 'a']], ['qty', 'name']],
      ];
      for (const [records, names] of cases) {
        const expected = errorOf(() => decoder.decodeAll(records, names));
        const got = errorOf(() => decoder.decodeStored(records, names));
        assert.equal(got.id, expected.id, JSON.stringify(records));
        assert.equal(got.message, expected.message);
        assert.deepEqual(got.details, expected.details);
      }
      const noId = new RecordDecoder(table(false), ISO_FORMAT, 'insert');
      for (const [records, names] of [[[{ qty: 1, id: 4 }], undefined], [[[1, 2]], ['qty', 'id']]] as Array<[unknown[], string[] | undefined]>) {
        const expected = errorOf(() => noId.decodeAll(records, names));
        const got = errorOf(() => noId.decodeStored(records, names));
        assert.equal(got.message, expected.message);
      }
    });
  });

  describe('caches', () => {
    it('shares decoders and encoders per definition, format and select', () => {
      const def = table(true);
      const a = RecordDecoder.for(def, resolveFormat(undefined), 'insert');
      assert.equal(RecordDecoder.for(def, resolveFormat({ dateFormat: 'iso' }), 'insert'), a);
      assert.notEqual(RecordDecoder.for(def, REST_FORMAT, 'insert'), a);
      assert.notEqual(RecordDecoder.for(def, ISO_FORMAT, 'patch'), a);
      assert.notEqual(RecordDecoder.for(table(true), ISO_FORMAT, 'insert'), a);

      const e = RecordEncoder.for(def, undefined, ISO_FORMAT);
      assert.equal(RecordEncoder.for(def, [], ISO_FORMAT), e);
      assert.notEqual(RecordEncoder.for(def, ['name'], ISO_FORMAT), e);
      assert.equal(RecordEncoder.for(def, ['name'], ISO_FORMAT), RecordEncoder.for(def, ['name'], ISO_FORMAT));
      assert.notEqual(RecordEncoder.for(def, undefined, REST_FORMAT), e);
      // still bounded: many selects do not grow without end, and answers stay right
      for (let i = 0; i < 100; i++) assert.deepEqual(RecordEncoder.for(def, i % 2 ? ['qty', 'name'] : ['name', 'qty', `NAME`], ISO_FORMAT).fields.map((c) => c.name), ['name', 'qty']);
      assert.throws(() => RecordEncoder.for(def, ['nope'], ISO_FORMAT), /nope|COLUMN/);
    });

    it('an interned format resolves to the same object on every request (the action interface builds one per call)', () => {
      const perCall = (): ValueFormat => ({ dateFormat: 'iso', binaryFormat: 'base64', variantFormat: 'json', numberFormat: 'string', stringFormat: 'json' });
      assert.notEqual(resolveFormat(perCall()), resolveFormat(perCall()), 'a fresh object per call misses the cache');
      const first = internFormat(perCall());
      assert.equal(internFormat(perCall()), first);
      assert.ok(Object.isFrozen(first));
      assert.equal(resolveFormat(internFormat(perCall())), resolveFormat(first));
      assert.notEqual(internFormat({ ...perCall(), binaryFormat: 'hex' }), first);
    });
  });

  describe('RecordEncoder.encodeStored', () => {
    it('encodes stored values: id first, then the selected columns, each by its column type in the format', () => {
      const def = table(true);
      const row: Row = { id: 9, name: 'n', qty: 3, ts: '2024-07-11T21:18:01.000', big: 12345678901234567890n, city: 'Rome' };
      const stored = storedOf(def, row);
      for (const format of [ISO_FORMAT, REST_FORMAT, { ...ISO_FORMAT, numberFormat: 'string' as const }]) {
        for (const select of [undefined, ['city', 'id', 'ts']]) {
          const encoder = RecordEncoder.for(def, select, format);
          const expected: Record<string, unknown> = { id: format.numberFormat === 'string' ? '9' : 9 };
          for (const c of encoder.fields) if (c.name !== 'id') expected[c.name] = encodeValue(c, row[c.name], format);
          assert.deepEqual(encoder.encodeStored(9, stored), expected);
        }
      }
      // a short stored array (columns added later) reads the defaults; safe bigints read as numbers
      const encoder = RecordEncoder.for(def, undefined, ISO_FORMAT);
      assert.deepEqual(encoder.encodeStored(2, ['a', 1, null, 5n]), { id: 2, name: 'a', qty: 1, ts: null, big: 5, city: 'Paris' });
    });
  });
});
