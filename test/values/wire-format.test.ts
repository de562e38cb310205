import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import type { CanonicalValue, ColumnDefinition, ColumnType } from '../../kernel/storage/types';
import { bytesFromWire, bytesToWire, decodeValue, encodeValue, ISO_FORMAT, REST_FORMAT, roundDecimal, VARIANT_SCHEMA_ID, type ValueFormat } from '../../lib/values/wire-format';
import { civilFromDays, dateToDays, daysFromCivil, msToTimestamp, parseDate, parseTime, parseTimestamp, timestampToMs } from '../../lib/values/timestamps';

function col(type: ColumnType, extra: Partial<ColumnDefinition> = {}): ColumnDefinition {
  return {
    name: 'c', type, length: null, scale: null, nullable: true, primaryKey: 0, defaultValue: null,
    autoValue: 'none', ...extra,
  };
}

function rejects(column: ColumnDefinition, wire: unknown, pattern: RegExp, format: ValueFormat = REST_FORMAT): void {
  assert.throws(() => decodeValue(column, wire, format), (error: unknown) => {
    assert.ok(error instanceof EngineError, String(error));
    assert.equal(error.id, 'INVALID_COLUMN_VALUE');
    assert.equal(error.details.column, column.name);
    assert.match(String(error.details.reason), pattern);
    return true;
  }, `${column.type} ${JSON.stringify(wire)}`);
}

const fmt = (over: Partial<ValueFormat>): ValueFormat => ({ ...ISO_FORMAT, ...over });

describe('values/wire-format', () => {
  describe('null', () => {
    it('is allowed only in nullable columns; undefined counts as null', () => {
      assert.equal(decodeValue(col('integer'), null, REST_FORMAT), null);
      assert.equal(decodeValue(col('varchar', { length: 3 }), undefined, REST_FORMAT), null);
      rejects(col('integer', { nullable: false }), null, /not nullable/);
      rejects(col('variant', { nullable: false }), null, /not nullable/);
      assert.equal(encodeValue(col('integer'), null, REST_FORMAT), null);
    });
  });

  describe('bit', () => {
    it('takes booleans and 0/1', () => {
      assert.equal(decodeValue(col('bit'), true, REST_FORMAT), true);
      assert.equal(decodeValue(col('bit'), 0, REST_FORMAT), false);
      assert.equal(decodeValue(col('bit'), 1, REST_FORMAT), true);
      assert.equal(decodeValue(col('bit'), 'false', REST_FORMAT), false);
      rejects(col('bit'), 2, /expected true or false/);
      rejects(col('bit'), 'yes', /expected true or false/);
      rejects(col('bit'), {}, /expected true or false/);
      assert.equal(encodeValue(col('bit'), true, REST_FORMAT), true);
    });
  });

  describe('integers', () => {
    const cases: Array<[ColumnType, number, number]> = [
      ['tinyint', -128, 127], ['smallint', -32768, 32767], ['integer', -2147483648, 2147483647],
    ];
    for (const [type, min, max] of cases) {
      it(`${type} accepts ${min}..${max} and rejects beyond`, () => {
        assert.equal(decodeValue(col(type), min, REST_FORMAT), min);
        assert.equal(decodeValue(col(type), max, REST_FORMAT), max);
        assert.equal(decodeValue(col(type), String(max), REST_FORMAT), max);
        rejects(col(type), max + 1, new RegExp(`expected an integer between ${min} and ${max}`));
        rejects(col(type), min - 1, /expected an integer between/);
        rejects(col(type), 1.5, /expected an integer/);
        rejects(col(type), 'abc', /expected an integer/);
        rejects(col(type), '1.0', /expected an integer/);
        rejects(col(type), true, /expected an integer/);
        rejects(col(type), [1], /an array/);
      });
    }

    it('bigint keeps safe integers as numbers and big ones as bigint', () => {
      assert.equal(decodeValue(col('bigint'), 42, REST_FORMAT), 42);
      assert.equal(decodeValue(col('bigint'), '9007199254740991', REST_FORMAT), 9007199254740991);
      assert.equal(decodeValue(col('bigint'), '9223372036854775807', REST_FORMAT), 9223372036854775807n);
      assert.equal(decodeValue(col('bigint'), '-9223372036854775808', REST_FORMAT), -9223372036854775808n);
      rejects(col('bigint'), '9223372036854775808', /expected an integer between/);
      rejects(col('bigint'), 2 ** 60, /send it as a string/);
      rejects(col('bigint'), 0.5, /expected an integer/);
      rejects(col('bigint'), 'x', /expected an integer/);
    });

    it('encodes big values as strings and numbers as strings on request', () => {
      assert.equal(encodeValue(col('bigint'), 9223372036854775807n, REST_FORMAT), '9223372036854775807');
      assert.equal(encodeValue(col('integer'), 5, REST_FORMAT), 5);
      assert.equal(encodeValue(col('integer'), 5, fmt({ numberFormat: 'string' })), '5');
      assert.equal(encodeValue(col('float'), 1.5, fmt({ numberFormat: 'string' })), '1.5');
    });
  });

  describe('real and float', () => {
    it('accept finite numbers and numeric strings', () => {
      assert.equal(decodeValue(col('float'), 1.25, REST_FORMAT), 1.25);
      assert.equal(decodeValue(col('float'), '-2.5e3', REST_FORMAT), -2500);
      assert.equal(decodeValue(col('real'), 3.4e38, REST_FORMAT), 3.4e38);
      rejects(col('real'), 1e39, /outside the range of real/);
      rejects(col('float'), 'NaN', /expected a number/);
      rejects(col('float'), false, /expected a number/);
      rejects(col('float'), Infinity, /finite/);
    });
  });

  describe('number and money', () => {
    const number = col('number', { length: 5, scale: 2 });
    it('round to the scale and check the precision', () => {
      assert.equal(decodeValue(number, 123.45, REST_FORMAT), 123.45);
      assert.equal(decodeValue(number, '1.005', REST_FORMAT), 1.01);
      assert.equal(decodeValue(number, 1.005, REST_FORMAT), 1.01);
      assert.equal(decodeValue(number, -999.994, REST_FORMAT), -999.99);
      assert.equal(decodeValue(number, 7, REST_FORMAT), 7);
      assert.equal(decodeValue(col('money', { length: 32, scale: 4 }), '12.34567', REST_FORMAT), 12.3457);
      rejects(number, 1000, /does not fit number\(5,2\): at most 3 digits/);
      rejects(number, 999.995, /does not fit/);
      rejects(number, 'abc', /expected a number/);
      rejects(number, [], /expected a number/);
    });
    it('roundDecimal handles exponents and tiny values', () => {
      assert.equal(roundDecimal('1.5e2', 5, 0), 150);
      assert.equal(roundDecimal('1e-9', 10, 4), 0);
      assert.equal(roundDecimal('0.00005', 10, 4), 0.0001);
      assert.equal(roundDecimal('-0.00004', 10, 4), 0);
      assert.equal(roundDecimal('1e999999', 10, 4), null);
      assert.equal(roundDecimal('.', 10, 4), null);
    });
  });

  describe('dates and times', () => {
    it('parse REST and ISO dates and reject impossible ones', () => {
      assert.equal(parseDate('07/11/2024'), '2024-07-11');
      assert.equal(parseDate('7/1/2024'), '2024-07-01');
      assert.equal(parseDate('2024-07-11'), '2024-07-11');
      assert.equal(parseDate('02/29/2024'), '2024-02-29');
      assert.equal(parseDate('02/29/2023'), null);
      assert.equal(parseDate('02/30/2024'), null);
      assert.equal(parseDate('13/01/2024'), null);
      assert.equal(parseDate('2024-7-11'), null);
      assert.equal(parseDate('1900-02-29'), null);
      assert.equal(parseDate('2000-02-29'), '2000-02-29');
    });
    it('parse times with optional milliseconds', () => {
      assert.equal(parseTime('9:05:03'), '09:05:03.000');
      assert.equal(parseTime('21:18:01.5'), '21:18:01.500');
      assert.equal(parseTime('21:18:01.123456'), '21:18:01.123');
      assert.equal(parseTime('21:18:01.000Z'), '21:18:01.000');
      assert.equal(parseTime('24:00:00'), null);
      assert.equal(parseTime('12:60:00'), null);
      assert.equal(parseTime('noon'), null);
    });
    it('parse timestamps in both forms, with zones and date-only', () => {
      assert.equal(parseTimestamp('07/11/2024 9:18:01.250'), '2024-07-11T09:18:01.250');
      assert.equal(parseTimestamp('2024-07-11T21:18:01.000'), '2024-07-11T21:18:01.000');
      assert.equal(parseTimestamp('2024-07-11 21:18:01'), '2024-07-11T21:18:01.000');
      assert.equal(parseTimestamp('2024-07-11T21:18:01.000Z'), '2024-07-11T21:18:01.000');
      assert.equal(parseTimestamp('2024-07-11T01:00:00+02:00'), '2024-07-10T23:00:00.000');
      assert.equal(parseTimestamp('2024-07-11'), '2024-07-11T00:00:00.000');
      assert.equal(parseTimestamp('2024-02-30T00:00:00'), null);
      assert.equal(parseTimestamp('2024-07-11T25:00:00'), null);
    });
    it('refuse a zone offset that carries the instant out of years 0001-9999 (its canonical form does not exist)', () => {
      assert.equal(parseTimestamp('0001-01-01T00:30:00+01:00'), null);
      assert.equal(parseTimestamp('9999-12-31T23:30-01:00'), null);
      assert.equal(parseTimestamp('0001-01-01T01:30:00+01:00'), '0001-01-01T00:30:00.000');
      assert.equal(parseTimestamp('9999-12-31T22:30-01:00'), '9999-12-31T23:30:00.000');
    });
    it('take text already in canonical form as it is, and check it all the same', () => {
      const ts = '2024-07-11T21:18:01.250';
      assert.equal(parseTimestamp(ts), ts);
      assert.equal(parseDate('2024-02-29'), '2024-02-29');
      assert.equal(parseTime('23:59:59.999'), '23:59:59.999');
      assert.equal(parseTimestamp('0001-01-01T00:00:00.000'), '0001-01-01T00:00:00.000');
      assert.equal(parseTimestamp('9999-12-31T23:59:59.999'), '9999-12-31T23:59:59.999');
      assert.equal(parseTimestamp('2024-07-11t21:18:01.250'), ts); // not canonical: the general parser
      for (const bad of [
        '2023-02-29T00:00:00.000', '2024-13-01T00:00:00.000', '2024-00-10T00:00:00.000', '2024-04-31T00:00:00.000',
        '0000-01-01T00:00:00.000', '2024-07-11T24:00:00.000', '2024-07-11T23:60:00.000', '2024-07-11T23:59:60.000',
        '2024-07-11T2a:00:00.000', '2024/07/11T00:00:00.000', '2024-07-11T00:00:00.00x', '2024-07-11X00:00:00.000',
      ]) {
        assert.equal(parseTimestamp(bad), null, bad);
      }
      for (const bad of ['2023-02-29', '2024-1a-01', '2024-06-31', '0000-01-01']) assert.equal(parseDate(bad), null, bad);
      for (const bad of ['24:00:00.000', '23:5x:00.000', '23:59:59,99x']) assert.equal(parseTime(bad), null, bad);
      assert.equal(parseTime('23:59:59,999'), '23:59:59.999');
    });
    it('decode per column type and reject wrong types', () => {
      assert.equal(decodeValue(col('date'), '07/11/2024', REST_FORMAT), '2024-07-11');
      assert.equal(decodeValue(col('date'), '2024-07-11', ISO_FORMAT), '2024-07-11');
      assert.equal(decodeValue(col('time'), '7:08:09.010', REST_FORMAT), '07:08:09.010');
      assert.equal(decodeValue(col('timestamp'), '07/11/2024 21:18:01.000', REST_FORMAT), '2024-07-11T21:18:01.000');
      rejects(col('date'), '02/30/2024', /expected a date/);
      rejects(col('date'), 20240711, /expected a date/);
      rejects(col('time'), '25:00:00', /expected a time/);
      rejects(col('timestamp'), 'yesterday', /expected a timestamp/);
    });
    it('encode in REST or ISO form', () => {
      assert.equal(encodeValue(col('date'), '2024-07-11', REST_FORMAT), '07/11/2024');
      assert.equal(encodeValue(col('date'), '2024-07-11', ISO_FORMAT), '2024-07-11');
      assert.equal(encodeValue(col('time'), '21:18:01.000', REST_FORMAT), '21:18:01.000');
      assert.equal(encodeValue(col('timestamp'), '2024-07-11T21:18:01.000', REST_FORMAT), '07/11/2024 21:18:01.000');
      assert.equal(encodeValue(col('timestamp'), '2024-07-11T21:18:01.000', ISO_FORMAT), '2024-07-11T21:18:01.000');
    });
    it('day arithmetic agrees with Date', () => {
      for (const date of ['1970-01-01', '1969-12-31', '2000-02-29', '0001-01-01', '9999-12-31', '1600-03-01']) {
        const days = dateToDays(date);
        const viaDate = Date.UTC(2000, 0, 1) / 86400000 + (new Date(`${date}T00:00:00Z`).getTime() - Date.UTC(2000, 0, 1)) / 86400000;
        assert.equal(days, viaDate, date);
        const { y, m, d } = civilFromDays(days);
        assert.equal(daysFromCivil(y, m, d), days);
      }
      const ts = '1969-12-31T23:59:59.999';
      assert.equal(timestampToMs(ts), -1);
      assert.equal(msToTimestamp(-1), ts);
    });
  });

  describe('strings', () => {
    it('count characters (code points) against the length', () => {
      const c = col('varchar', { length: 3 });
      assert.equal(decodeValue(c, 'abc', REST_FORMAT), 'abc');
      assert.equal(decodeValue(c, '😀😀😀', REST_FORMAT), '😀😀😀');
      rejects(c, 'abcd', /string of 4 characters exceeds length 3/);
      rejects(col('varchar', { length: 48 }), 'x'.repeat(60), /string of 60 characters exceeds length 48/);
      rejects(c, 12, /expected a string/);
      rejects(col('char', { length: 1 }), true, /expected a string/);
      assert.equal(decodeValue(col('lvarchar'), 'x'.repeat(100000), REST_FORMAT), 'x'.repeat(100000));
    });
    it('encode as JSON strings or as hex of the UTF-8 bytes', () => {
      assert.equal(encodeValue(col('varchar'), 'hé', REST_FORMAT), 'hé');
      assert.equal(encodeValue(col('varchar'), 'hé', fmt({ stringFormat: 'hex' })), '68C3A9');
      assert.equal(encodeValue(col('char', { length: 5 }), 'ab', fmt({ stringFormat: 'hex' })), '6162202020', 'char pads to its length');
      assert.equal(encodeValue(col('char', { length: 5 }), 'ab', REST_FORMAT), 'ab', 'but not in JSON form');
    });
  });

  describe('binary', () => {
    it('decodes hex, base64 and byte arrays, pads binary, checks length', () => {
      assert.deepEqual(decodeValue(col('varbinary', { length: 4 }), '0aFF', REST_FORMAT), Buffer.from([0x0a, 0xff]));
      assert.deepEqual(decodeValue(col('binary', { length: 4 }), 'AB', REST_FORMAT), Buffer.from([0xab, 0, 0, 0]));
      assert.deepEqual(decodeValue(col('varbinary', { length: 4 }), 'AQI=', fmt({ binaryFormat: 'base64' })), Buffer.from([1, 2]));
      assert.deepEqual(decodeValue(col('varbinary', { length: 4 }), [1, 2, 255], fmt({ binaryFormat: 'byteArray' })), Buffer.from([1, 2, 255]));
      assert.deepEqual(decodeValue(col('lvarbinary'), [7], REST_FORMAT), Buffer.from([7]));
      rejects(col('varbinary', { length: 1 }), 'AABB', /2 bytes exceed length 1/);
      rejects(col('varbinary', { length: 4 }), 'ABC', /expected a hex string/);
      rejects(col('varbinary', { length: 4 }), 'zz', /expected a hex string/);
      rejects(col('varbinary', { length: 4 }), 'A', /expected a base64 string/, fmt({ binaryFormat: 'base64' }));
      rejects(col('varbinary', { length: 4 }), 'AB', /expected an array of integers/, fmt({ binaryFormat: 'byteArray' }));
      rejects(col('varbinary', { length: 4 }), [1, 256], /element 1 is 256/);
      rejects(col('varbinary', { length: 4 }), 12, /expected a hex string/);
    });
    it('encodes in each binary format (hex upper-case)', () => {
      const bytes = new Uint8Array([0xab, 0x01]);
      assert.equal(encodeValue(col('varbinary'), bytes, REST_FORMAT), 'AB01');
      assert.equal(encodeValue(col('varbinary'), bytes, fmt({ binaryFormat: 'base64' })), 'qwE=');
      assert.deepEqual(encodeValue(col('varbinary'), bytes, fmt({ binaryFormat: 'byteArray' })), [171, 1]);
    });
    it('bytesFromWire and bytesToWire round-trip and name the parameter on error', () => {
      const bytes = Buffer.from([0, 1, 2, 250]);
      for (const format of ['hex', 'base64', 'byteArray'] as const) {
        assert.deepEqual(bytesFromWire(bytesToWire(bytes, format), format, 'payload'), bytes);
      }
      assert.throws(() => bytesFromWire('xyz', 'hex', 'payload'), (error: unknown) =>
        error instanceof EngineError && error.id === 'INVALID_PARAMETER' && error.details.param === 'payload');
    });
  });

  describe('json', () => {
    it('takes any JSON value', () => {
      const value = { a: [1, 'x', null, { b: true }] };
      assert.deepEqual(decodeValue(col('json'), value, REST_FORMAT), value);
      assert.equal(decodeValue(col('json'), 'text', REST_FORMAT), 'text');
      assert.deepEqual(encodeValue(col('json'), value, REST_FORMAT), value);
      rejects(col('json'), () => 1, /expected a JSON value/);
      rejects(col('json'), { a: NaN }, /finite/);
    });
  });

  describe('variant', () => {
    const v = col('variant');
    it('variantFormat json stores minimized JSON text; JSON null is NULL', () => {
      assert.deepEqual(decodeValue(v, { a: 1, b: [true] }, ISO_FORMAT), { type: 'json', value: '{"a":1,"b":[true]}' });
      assert.deepEqual(decodeValue(v, 'hi', ISO_FORMAT), { type: 'json', value: '"hi"' });
      assert.deepEqual(decodeValue(v, 12, ISO_FORMAT), { type: 'json', value: '12' });
      assert.equal(decodeValue(v, null, ISO_FORMAT), null);
    });
    it('variantFormat string and binary', () => {
      assert.deepEqual(decodeValue(v, 'hi', fmt({ variantFormat: 'string' })), { type: 'string', value: 'hi' });
      rejects(v, 5, /expected a string \(variantFormat string\)/, fmt({ variantFormat: 'string' }));
      assert.deepEqual(decodeValue(v, '0102', fmt({ variantFormat: 'binary' })), { type: 'binary', value: Buffer.from([1, 2]) });
      rejects(v, 'xx', /expected a hex string/, fmt({ variantFormat: 'binary' }));
    });
    it('variantFormat variantObject', () => {
      const f = fmt({ variantFormat: 'variantObject' });
      const obj = (o: object) => ({ schema: VARIANT_SCHEMA_ID, ...o });
      assert.deepEqual(decodeValue(v, obj({ type: 'json', value: { x: 1 } }), f), { type: 'json', value: '{"x":1}' });
      assert.deepEqual(decodeValue(v, obj({ type: 'string', value: 'hé' }), f), { type: 'string', value: 'hé' });
      assert.deepEqual(decodeValue(v, obj({ type: 'binary', value: 'AQI=', valueEncoding: 'base64' }), f), { type: 'binary', value: Buffer.from([1, 2]) });
      assert.deepEqual(decodeValue(v, obj({ type: 'binary', value: [9] }), f), { type: 'binary', value: Buffer.from([9]) });
      assert.deepEqual(decodeValue(v, obj({ type: 'boolean', value: false }), f), { type: 'boolean', value: false });
      assert.equal(decodeValue(v, obj({ type: 'json', value: null }), f), null);
      rejects(col('variant', { nullable: false }), obj({ type: 'json', value: null }), /not nullable/, f);
      rejects(v, 'plain', /expected a variant object/, f);
      rejects(v, { schema: 'other', type: 'json', value: 1 }, /"schema" must be/, f);
      rejects(v, obj({ type: 'date', value: 1 }), /"type" must be json, string, binary or boolean/, f);
      rejects(v, obj({ type: 'boolean', value: 'yes' }), /variant boolean expected/, f);
      rejects(v, obj({ type: 'string', value: 1 }), /variant string expected/, f);
      rejects(v, obj({ type: 'json' }), /has no "value"/, f);
    });
    it('encodes per variantFormat', () => {
      const json = { type: 'json', value: '{"a":1}' } as const;
      const str = { type: 'string', value: 'hé' } as const;
      const bin = { type: 'binary', value: new Uint8Array([1, 255]) } as const;
      const bool = { type: 'boolean', value: true } as const;
      const enc = (value: CanonicalValue, over: Partial<ValueFormat>) => encodeValue(v, value, fmt(over));
      assert.deepEqual(enc(json, {}), { a: 1 });
      assert.equal(enc(str, {}), 'hé');
      assert.equal(enc(bin, {}), '01FF');
      assert.equal(enc(bool, {}), true);
      assert.equal(enc(str, { stringFormat: 'hex' }), '68C3A9');
      assert.deepEqual(enc(json, { variantFormat: 'variantObject' }), { schema: VARIANT_SCHEMA_ID, value: { a: 1 }, valueEncoding: 'json', type: 'json' });
      assert.deepEqual(enc(bin, { variantFormat: 'variantObject', binaryFormat: 'base64' }), { schema: VARIANT_SCHEMA_ID, value: 'Af8=', valueEncoding: 'base64', type: 'binary' });
      assert.deepEqual(enc(str, { variantFormat: 'variantObject' }), { schema: VARIANT_SCHEMA_ID, value: 'hé', valueEncoding: 'utf8', type: 'string' });
      assert.equal(enc(json, { variantFormat: 'string' }), '{"a":1}');
      assert.equal(enc(bool, { variantFormat: 'string' }), 'true');
      assert.equal(enc(bin, { variantFormat: 'string' }), '01FF');
      assert.equal(enc(json, { variantFormat: 'binary' }), '7B2261223A317D');
      assert.deepEqual(enc(str, { variantFormat: 'binary', binaryFormat: 'byteArray' }), [0x68, 0xc3, 0xa9]);
    });
    it('round-trips through variantObject', () => {
      const f = fmt({ variantFormat: 'variantObject' });
      for (const value of [
        { type: 'json', value: '[1,2]' }, { type: 'string', value: 'x' },
        { type: 'binary', value: Buffer.from([3]) }, { type: 'boolean', value: false },
      ] as const) {
        assert.deepEqual(decodeValue(v, encodeValue(v, value, f), f), value);
      }
    });
  });
});
