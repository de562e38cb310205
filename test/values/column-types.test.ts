import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import {
  fixedKeyWidth, normalizeColumn, parseColumnType,
} from '../../lib/values/column-types';

function rejects(input: unknown, pattern: RegExp): void {
  assert.throws(() => normalizeColumn(input, 2), (error: unknown) => {
    assert.ok(error instanceof EngineError);
    assert.equal(error.id, 'INVALID_TABLE_DEFINITION');
    assert.match(String(error.details.reason), pattern);
    return true;
  });
}

describe('values/column-types', () => {
  describe('normalizeColumn', () => {
    it('applies defaults and lower-cases the name', () => {
      assert.deepEqual(normalizeColumn({ name: 'Price', type: 'INTEGER' }, 0), {
        name: 'price', type: 'integer', length: null, scale: null, nullable: true, primaryKey: 0,
        defaultValue: null, autoValue: 'none',
      });
    });

    it('accepts type names in any case and double as float', () => {
      assert.equal(normalizeColumn({ name: 'a', type: 'VarChar', length: 10 }, 0).type, 'varchar');
      assert.equal(normalizeColumn({ name: 'a', type: 'DOUBLE' }, 0).type, 'float');
      assert.equal(parseColumnType('Double'), 'float');
      assert.equal(parseColumnType('nope'), null);
      assert.equal(parseColumnType(3), null);
    });

    it('keeps length 4 sent by REST for INTEGER', () => {
      assert.equal(normalizeColumn({ name: 'n', type: 'INTEGER', length: 4 }, 0).length, 4);
    });

    it('uses default lengths for char, varchar, binary and varbinary', () => {
      assert.equal(normalizeColumn({ name: 'a', type: 'char' }, 0).length, 1);
      assert.equal(normalizeColumn({ name: 'a', type: 'varchar' }, 0).length, 65500);
      assert.equal(normalizeColumn({ name: 'a', type: 'binary' }, 0).length, 1);
      assert.equal(normalizeColumn({ name: 'a', type: 'varbinary' }, 0).length, 65500);
      assert.equal(normalizeColumn({ name: 'a', type: 'varchar', length: 48 }, 0).length, 48);
    });

    it('ignores length on lvarchar, json, variant and dates', () => {
      for (const type of ['lvarchar', 'lvarbinary', 'json', 'variant', 'date', 'time', 'timestamp', 'bit']) {
        assert.equal(normalizeColumn({ name: 'a', type, length: 12 }, 0).length, null, type);
      }
    });

    it('gives number and money precision and scale', () => {
      assert.deepEqual(pick(normalizeColumn({ name: 'a', type: 'number' }, 0)), { length: 32, scale: 0 });
      assert.deepEqual(pick(normalizeColumn({ name: 'a', type: 'money' }, 0)), { length: 32, scale: 4 });
      assert.deepEqual(pick(normalizeColumn({ name: 'a', type: 'number', length: 10, scale: 2 }, 0)), { length: 10, scale: 2 });
      assert.deepEqual(pick(normalizeColumn({ name: 'a', type: 'money', length: 3 }, 0)), { length: 3, scale: 3 });
      function pick(c: { length: number | null; scale: number | null }) { return { length: c.length, scale: c.scale }; }
    });

    it('reads nullable, primaryKey, autoValue and autoTimestamp', () => {
      const column = normalizeColumn({ name: 'id', type: 'bigint', nullable: false, primaryKey: 1, autoValue: 'incrementOnInsert' }, 0);
      assert.equal(column.nullable, false);
      assert.equal(column.primaryKey, 1);
      assert.equal(column.autoValue, 'incrementOnInsert');
      assert.equal(normalizeColumn({ name: 't', type: 'timestamp', autoTimestamp: 'onInsert' }, 0).autoValue, 'timestampOnInsert');
      assert.equal(normalizeColumn({ name: 'k', type: 'integer', primaryKey: true }, 0).primaryKey, 1);
    });

    it('decodes default values to canonical form', () => {
      assert.equal(normalizeColumn({ name: 'd', type: 'date', defaultValue: '07/11/2024' }, 0).defaultValue, '2024-07-11');
      assert.deepEqual(normalizeColumn({ name: 'b', type: 'binary', length: 2, defaultValue: 'AB' }, 0).defaultValue, Buffer.from([0xab, 0]));
    });

    const bad: Array<[string, unknown, RegExp]> = [
      ['not an object', 'name', /column 3: expected an object/],
      ['an array', [], /expected an object/],
      ['null', null, /expected an object/],
      ['missing name', { type: 'integer' }, /"name" must be a string/],
      ['bad name', { name: '1abc', type: 'integer' }, /invalid name "1abc"/],
      ['name with a dash', { name: 'a-b', type: 'integer' }, /invalid name/],
      ['name too long', { name: 'a'.repeat(65), type: 'integer' }, /invalid name/],
      ['missing type', { name: 'a' }, /column "a": "type" is required/],
      ['unknown type', { name: 'a', type: 'text' }, /unknown type "text"/],
      ['type not a string', { name: 'a', type: 5 }, /unknown type 5/],
      ['zero length', { name: 'a', type: 'varchar', length: 0 }, /"length" must be an integer from 1 to 65500/],
      ['fractional length', { name: 'a', type: 'char', length: 1.5 }, /"length"/],
      ['too long', { name: 'a', type: 'binary', length: 65501 }, /"length"/],
      ['string length', { name: 'a', type: 'varchar', length: '10' }, /"length"/],
      ['precision too high', { name: 'a', type: 'number', length: 33 }, /"length" must be an integer from 1 to 32/],
      ['scale above precision', { name: 'a', type: 'number', length: 5, scale: 6 }, /"scale" must be an integer from 0 to 5/],
      ['negative scale', { name: 'a', type: 'money', scale: -1 }, /"scale"/],
      ['nullable not boolean', { name: 'a', type: 'integer', nullable: 'yes' }, /"nullable" must be true or false/],
      ['primaryKey negative', { name: 'a', type: 'integer', primaryKey: -1 }, /"primaryKey"/],
      ['autoValue unknown', { name: 'a', type: 'integer', autoValue: 'sometimes' }, /"autoValue" must be one of/],
      ['autoTimestamp unknown', { name: 'a', type: 'timestamp', autoTimestamp: 'later' }, /"autoTimestamp"/],
      ['increment on varchar', { name: 'a', type: 'varchar', autoValue: 'incrementOnInsert' }, /needs an integer type/],
      ['timestamp on integer', { name: 'a', type: 'integer', autoValue: 'timestampOnInsert' }, /needs a date, time or timestamp type/],
      ['bad default', { name: 'a', type: 'integer', defaultValue: 'x' }, /invalid defaultValue: expected an integer/],
      ['default too long', { name: 'a', type: 'varchar', length: 2, defaultValue: 'abc' }, /invalid defaultValue: string of 3 characters exceeds length 2/],
    ];
    for (const [label, input, pattern] of bad) {
      it(`rejects ${label}`, () => rejects(input, pattern));
    }
  });

  describe('fixedKeyWidth', () => {
    it('gives the data width that holds every value of each indexable type whole', () => {
      const expected: Array<[Parameters<typeof fixedKeyWidth>[0], number | null, number | null]> = [
        ['bit', null, 1], ['tinyint', null, 1], ['smallint', null, 2], ['integer', 4, 4], ['bigint', null, 8],
        ['real', null, 4], ['float', null, 8], ['money', 32, 8], ['number', 10, 8], ['date', null, 4],
        ['time', null, 4], ['timestamp', null, 8], ['char', 5, 20], ['varchar', 48, 192], ['binary', 16, 16],
        ['varbinary', 3, 3], ['lvarchar', null, 256], ['lvarbinary', null, null],
        ['json', null, null], ['variant', null, null],
      ];
      for (const [type, length, width] of expected) assert.equal(fixedKeyWidth(type, length), width, type);
    });
  });
});
