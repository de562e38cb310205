import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import type {
  CanonicalValue, ColumnDefinition, ColumnType, IndexSegment, Row, TableDefinition,
} from '../../kernel/storage/types';
import { msToTimestamp } from '../../lib/values/timestamps';
import {
  appendRecordId, encodeIndexKey, encodeKeyPrefix, keyHasNull, keyLength, prefixSuccessor,
  readRecordId, resolveKeySegments, userBytesToKeyBytes,
} from '../../plugins/storage-lmdb/index-keys';

function col(name: string, type: ColumnType, length: number | null = null): ColumnDefinition {
  return { name, type, length, scale: null, nullable: true, primaryKey: 0, defaultValue: null, autoValue: 'none' };
}

const table: TableDefinition = {
  database: 'main', name: 't', idDeclared: false, indexes: [], topic: null, createdAt: '2024-01-01T00:00:00.000',
  columns: [
    col('id', 'bigint'), col('b', 'bit'), col('ti', 'tinyint'), col('si', 'smallint'), col('i', 'integer'),
    col('bi', 'bigint'), col('r', 'real'), col('f', 'float'), col('m', 'money'), col('n', 'number', 10),
    col('d', 'date'), col('tm', 'time'), col('ts', 'timestamp'), col('c', 'char', 4), col('vc', 'varchar', 6),
    col('lv', 'lvarchar'), col('bn', 'binary', 3), col('vb', 'varbinary', 3), col('lb', 'lvarbinary'),
    col('j', 'json'), col('v', 'variant'), col('huge', 'varchar', 65500),
  ],
};

/** A deterministic pseudo-random generator (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = random(12345);
const int = (min: number, max: number) => min + Math.floor(rnd() * (max - min + 1));

function compareValues(a: CanonicalValue, b: CanonicalValue): number {
  if (a === null) return b === null ? 0 : -1;
  if (b === null) return 1;
  if (a instanceof Uint8Array) return Buffer.compare(a, b as Uint8Array);
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string));
  const x = a as number | bigint | boolean;
  const y = b as number | bigint | boolean;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Checks that sorting by key bytes equals sorting by value (nulls first ascending, last descending). */
function checkOrder(column: string, values: CanonicalValue[]): void {
  for (const ascending of [true, false]) {
    const specs = resolveKeySegments(table, [{ name: column, ascending }]);
    const keyed = values.map((value) => ({ value, key: Buffer.from(encodeIndexKey(specs, { [column]: value })) }));
    keyed.sort((p, q) => Buffer.compare(p.key, q.key));
    for (let i = 1; i < keyed.length; i++) {
      const order = compareValues(keyed[i - 1].value, keyed[i].value);
      const keyOrder = Buffer.compare(keyed[i - 1].key, keyed[i].key);
      const expected = ascending ? order : -order;
      assert.ok(expected <= 0, `${column} ${ascending ? 'asc' : 'desc'}: ${String(keyed[i - 1].value)} before ${String(keyed[i].value)}`);
      if (order === 0) assert.equal(keyOrder, 0, `${column}: equal values must have equal keys`);
      else assert.notEqual(keyOrder, 0, `${column}: different values ${String(keyed[i - 1].value)} ${String(keyed[i].value)} share a key`);
    }
    // nulls first ascending, last descending
    const nullAt = keyed.findIndex((entry) => entry.value === null);
    if (nullAt >= 0) assert.equal(nullAt, ascending ? 0 : keyed.length - values.filter((v) => v === null).length, column);
  }
}

function repeat<T>(n: number, make: () => T): T[] {
  return Array.from({ length: n }, make);
}

describe('storage/index-keys', () => {
  describe('resolveKeySegments', () => {
    it('lays out flag byte + data (+ length bytes for text and binary) per segment', () => {
      const specs = resolveKeySegments(table, [{ name: 'I', ascending: true }, { name: 'vc', ascending: false }, { name: 'ts' } as IndexSegment]);
      assert.deepEqual(specs.map((s) => [s.segment.name, s.segment.ascending, s.width, s.lengthBytes, s.offset]), [
        ['i', true, 4, 0, 0], ['vc', false, 24, 2, 5], ['ts', true, 8, 0, 32],
      ]);
      assert.equal(keyLength(specs), 41);
      assert.equal(specs[0].keyColumn, specs[0].sourceColumn);
    });

    it('gives every indexable type a width that holds its values whole (4 bytes per character of text)', () => {
      const widths: Record<string, number> = {
        b: 1, ti: 1, si: 2, i: 4, bi: 8, r: 4, f: 8, m: 8, n: 8, d: 4, tm: 4, ts: 8, c: 16, vc: 24, lv: 256, bn: 3, vb: 3,
      };
      for (const [name, width] of Object.entries(widths)) {
        assert.equal(resolveKeySegments(table, [{ name, ascending: true }])[0].width, width, name);
      }
      assert.equal(resolveKeySegments(table, [{ name: 'lv', ascending: true, size: 20 }])[0].width, 20);
      assert.equal(resolveKeySegments(table, [{ name: 'huge', ascending: true, size: 100 }])[0].width, 100);
    });

    it('builds a synthetic key column for a JSON property', () => {
      const [spec] = resolveKeySegments(table, [{ name: 'j', ascending: true, key: 'a.b', type: 'VARCHAR' as ColumnType, size: 10 }]);
      assert.equal(spec.width, 10);
      assert.equal(spec.keyColumn.type, 'varchar');
      assert.equal(spec.keyColumn.length, null); // the segment's bytes limit the value, not a character count
      assert.equal(spec.sourceColumn.name, 'j');
      assert.deepEqual(spec.path, ['a', 'b']);
      const [number] = resolveKeySegments(table, [{ name: 'j', ascending: true, key: 'n', type: 'integer' }]);
      assert.equal(number.width, 4);
    });

    const bad: Array<[string, IndexSegment[], string, RegExp]> = [
      ['no segments', [], 'INVALID_INDEX_DEFINITION', /at least one segment/],
      ['unknown column', [{ name: 'zz', ascending: true }], 'COLUMN_NOT_FOUND', /column "zz" does not exist in table "t"/],
      ['variant', [{ name: 'v', ascending: true }], 'INVALID_INDEX_DEFINITION', /type variant cannot be indexed/],
      ['lvarbinary', [{ name: 'lb', ascending: true }], 'INVALID_INDEX_DEFINITION', /type lvarbinary cannot be indexed/],
      ['json without key', [{ name: 'j', ascending: true }], 'INVALID_INDEX_DEFINITION', /needs "key"/],
      ['json without type', [{ name: 'j', ascending: true, key: 'a' }], 'INVALID_INDEX_DEFINITION', /needs a valid "type"/],
      ['json string without size', [{ name: 'j', ascending: true, key: 'a', type: 'varchar' }], 'INVALID_INDEX_DEFINITION', /needs "size"/],
      ['json as variant', [{ name: 'j', ascending: true, key: 'a', type: 'variant' }], 'INVALID_INDEX_DEFINITION', /cannot be indexed as variant/],
      ['bad path', [{ name: 'j', ascending: true, key: 'a..b', type: 'integer' }], 'INVALID_INDEX_DEFINITION', /invalid property path/],
      ['key on a plain column', [{ name: 'i', ascending: true, key: 'x' }], 'INVALID_INDEX_DEFINITION', /"key" is only allowed on JSON columns/],
      ['too wide', [{ name: 'huge', ascending: true }], 'INVALID_INDEX_DEFINITION', /needs 262000 key bytes .* at most 1900; give the segment a "size"/],
      ['bad size', [{ name: 'lv', ascending: true, size: 0 }], 'INVALID_INDEX_DEFINITION', /"size" must be an integer/],
      ['size beyond a key', [{ name: 'lv', ascending: true, size: 1901 }], 'INVALID_INDEX_DEFINITION', /"size" must be an integer from 1 to 1900/],
      ['ascending not boolean', [{ name: 'i', ascending: 'yes' as unknown as boolean }], 'INVALID_INDEX_DEFINITION', /"ascending"/],
      ['key too long', [{ name: 'lv', ascending: true, size: 1000 }, { name: 'lv', ascending: true, size: 1000 }], 'INVALID_INDEX_DEFINITION', /at most 1900/],
    ];
    for (const [label, fields, id, pattern] of bad) {
      it(`rejects ${label}`, () => {
        assert.throws(() => resolveKeySegments(table, fields), (error: unknown) => {
          assert.ok(error instanceof EngineError, String(error));
          assert.equal(error.id, id);
          assert.match(error.message, pattern);
          return true;
        });
      });
    }
  });

  describe('byte order equals value order', () => {
    it('bit', () => checkOrder('b', [true, false, null, true, false]));
    it('tinyint', () => checkOrder('ti', [-128, 127, 0, -1, 1, null, ...repeat(50, () => int(-128, 127))]));
    it('smallint', () => checkOrder('si', [-32768, 32767, 0, -1, null, ...repeat(100, () => int(-32768, 32767))]));
    it('integer', () => checkOrder('i', [-2147483648, 2147483647, 0, -1, 1, null, ...repeat(200, () => int(-2147483648, 2147483647))]));
    it('bigint (numbers and bigints)', () => checkOrder('bi', [
      -(2n ** 63n), 2n ** 63n - 1n, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2n ** 53n + 1n, -(2n ** 53n) - 1n,
      0, -1, 1, 4294967296, -4294967296, 4294967295, -4294967297, null,
      ...repeat(200, () => Math.floor((rnd() - 0.5) * 2 * Number.MAX_SAFE_INTEGER)),
      ...repeat(50, () => int(-1000, 1000)),
    ]));
    it('real', () => checkOrder('r', [
      0, -1, 1, 0.5, -0.5, 3.4e38, -3.4e38, 1e-40, -1e-40, null,
      ...repeat(200, () => Math.fround((rnd() - 0.5) * 10 ** int(-10, 30))),
    ]));
    it('float, money and number', () => {
      const values = [
        0, -1, 1, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -Number.MIN_VALUE, 1e300, -1e-300, null,
        ...repeat(300, () => (rnd() - 0.5) * 10 ** int(-100, 100)),
      ];
      checkOrder('f', values);
      checkOrder('m', values);
      checkOrder('n', values);
    });
    it('-0 and +0 share one key', () => {
      const specs = resolveKeySegments(table, [{ name: 'f', ascending: true }]);
      assert.deepEqual(encodeIndexKey(specs, { f: -0 }), encodeIndexKey(specs, { f: 0 }));
    });
    it('date, time and timestamp', () => {
      const first = -62135596800000; // 0001-01-01
      const last = 253402300799999; // 9999-12-31T23:59:59.999
      const ms = () => Math.floor(first + rnd() * (last - first));
      const timestamps = [...repeat(200, () => msToTimestamp(ms())), '0001-01-01T00:00:00.000', '9999-12-31T23:59:59.999', '1970-01-01T00:00:00.000', null];
      checkOrder('ts', timestamps);
      checkOrder('d', timestamps.map((t) => (t === null ? null : t.slice(0, 10))));
      checkOrder('tm', timestamps.map((t) => (t === null ? null : t.slice(11))));
    });
    it('char and varchar: UTF-8 byte order, every value of the column whole, trailing U+0000 included', () => {
      const alphabet = ['a', 'b', 'z', 'A', 'é', '\u0000', '\u0001', ' ', '0', '€', '😀', '\uffff'];
      const word = (max: number) => () => repeat(int(0, max), () => alphabet[int(0, alphabet.length - 1)]).join('');
      checkOrder('c', ['', 'a', 'a\u0000', 'a\u0000\u0000', 'ab', '😀😀😀😀', 'éééé', 'b', null, ...repeat(100, word(4))]);
      const strings = ['', 'a', 'ab', 'zzzzzz', 'é', 'éééa', 'éééb', 'éééééé', '😀😀😀😀😀😀', null, ...repeat(300, word(6))];
      checkOrder('vc', strings);
    });
    it('a value longer than its segment "size" is refused, never cut', () => {
      const specs = resolveKeySegments(table, [{ name: 'vc', ascending: true, size: 4 }], 'by_vc');
      const key = (value: string) => encodeIndexKey(specs, { vc: value });
      assert.equal(key('abcd').toString('hex'), '01616263640004');
      assert.equal(key('abé').toString('hex'), '016162c3a90004');
      for (const value of ['abcde', 'abcé', '😀a']) {
        assert.throws(() => key(value), (error: unknown) => {
          assert.ok(error instanceof EngineError);
          assert.equal(error.id, 'INVALID_COLUMN_VALUE');
          assert.match(error.message, /column "vc": the value is 5 bytes long and index "by_vc" holds at most 4 bytes of it/);
          return true;
        });
      }
      const bytes = resolveKeySegments(table, [{ name: 'vb', ascending: true, size: 2 }]);
      assert.throws(() => encodeIndexKey(bytes, { vb: Buffer.from([1, 2, 3]) }), /3 bytes long and the index holds at most 2/);
    });
    it('binary and varbinary (trailing 0x00 bytes are part of the value)', () => {
      const bytes = () => Buffer.from(repeat(int(0, 3), () => int(0, 255)));
      checkOrder('vb', [Buffer.alloc(0), Buffer.from([0]), Buffer.from([0, 0]), Buffer.from([1]), Buffer.from([1, 0]), Buffer.from([255, 255, 255]), null, ...repeat(100, bytes)]);
      checkOrder('bn', [Buffer.from([0, 0, 0]), Buffer.from([255, 0, 1]), null, ...repeat(50, () => Buffer.from([int(0, 255), int(0, 255), int(0, 255)]))]);
    });
  });

  describe('encodeIndexKey', () => {
    it('writes the documented bytes', () => {
      const specs = resolveKeySegments(table, [
        { name: 'i', ascending: true }, { name: 'si', ascending: false }, { name: 'vc', ascending: true },
      ]);
      const key = encodeIndexKey(specs, { i: 1, si: -2, vc: 'ab' });
      assert.equal(key.toString('hex'), [
        '01', '80000001', // integer 1: sign bit flipped
        'fe', '8001', // smallint -2 = 0x7ffe, inverted for descending
        '01', `6162${'00'.repeat(22)}`, '0002', // varchar(6): 24 bytes padded with 0x00, then its byte count
      ].join(''));
      const nulls = encodeIndexKey(specs, { i: null, si: null });
      assert.equal(nulls.toString('hex'), `0000000000ffffff${'00'.repeat(27)}`);
    });

    it('reads JSON properties along the path; missing or unconvertible ones are null', () => {
      const specs = resolveKeySegments(table, [
        { name: 'j', ascending: true, key: 'a.b', type: 'integer' },
        { name: 'j', ascending: true, key: 'name', type: 'varchar', size: 3 },
      ]);
      assert.equal(encodeIndexKey(specs, { j: { a: { b: 7 }, name: 'xy' } }).toString('hex'), '0180000007' + '01787900' + '0002');
      assert.equal(encodeIndexKey(specs, { j: { a: 5 } }).toString('hex'), '00'.repeat(11));
      assert.equal(encodeIndexKey(specs, { j: null }).toString('hex'), '00'.repeat(11));
      assert.equal(encodeIndexKey(specs, { j: { a: { b: 'x' } } }).subarray(0, 1)[0], 0);
      assert.equal(encodeIndexKey(specs, { j: { a: { b: '12' }, name: 5 } }).toString('hex'), '018000000c' + '01350000' + '0001');
      assert.throws(() => encodeIndexKey(specs, { j: { name: 'wxyz' } }), /property "name" is 4 bytes long/);
    });

    it('reads only a JSON value\'s own properties (property names are data)', () => {
      const specs = resolveKeySegments(table, [{ name: 'j', ascending: true, key: 'constructor', type: 'varchar', size: 8 }]);
      assert.equal(encodeIndexKey(specs, { j: {} })[0], 0);
      assert.equal(encodeIndexKey(specs, { j: { constructor: 'x' } }).toString('hex'), '0178000000000000000001');
      const path = resolveKeySegments(table, [{ name: 'j', ascending: true, key: 'a.toString', type: 'integer' }]);
      assert.equal(encodeIndexKey(path, { j: { a: {} } })[0], 0);
    });

    it('keyHasNull tells a key with a null segment, in either direction', () => {
      const specs = resolveKeySegments(table, [{ name: 'i', ascending: true }, { name: 'j', ascending: false, key: 'k', type: 'integer' }]);
      assert.equal(keyHasNull(specs, encodeIndexKey(specs, { i: 1, j: { k: 2 } })), false);
      assert.equal(keyHasNull(specs, encodeIndexKey(specs, { i: null, j: { k: 2 } })), true);
      assert.equal(keyHasNull(specs, encodeIndexKey(specs, { i: 1, j: {} })), true);
      assert.equal(keyHasNull(specs, encodeIndexKey(specs, { i: 1, j: { k: null } })), true);
      assert.equal(keyHasNull(specs, encodeIndexKey(specs, { i: 0, j: { k: -1 } })), false);
    });

    it('writes into a target buffer', () => {
      const specs = resolveKeySegments(table, [{ name: 'ti', ascending: true }]);
      const target = Buffer.alloc(10, 0xee);
      const key = encodeIndexKey(specs, { ti: -1 } as Row, target);
      assert.equal(key.toString('hex'), '017f');
      assert.equal(key.buffer, target.buffer);
    });

    it('encodes into a reused target without allocating a new key', () => {
      // (speed is the benchmarks' business; this checks the no-allocation path gives the same bytes)
      const specs = resolveKeySegments(table, [{ name: 'i', ascending: true }, { name: 'vc', ascending: false }, { name: 'ts', ascending: true }]);
      const row: Row = { i: 5, vc: 'hello', ts: '2024-07-11T21:18:01.000' };
      const target = Buffer.alloc(keyLength(specs));
      const expected = encodeIndexKey(specs, row);
      for (let n = 0; n < 1_000; n++) {
        const key = encodeIndexKey(specs, row, target);
        assert.equal(key.buffer, target.buffer);
        assert.ok(key.equals(expected));
      }
    });
  });

  describe('encodeKeyPrefix and userBytesToKeyBytes', () => {
    const specs = resolveKeySegments(table, [{ name: 'i', ascending: true }, { name: 'vc', ascending: true }, { name: 'b', ascending: false }]);

    it('encodes the first segments as a prefix of the full key', () => {
      const full = encodeIndexKey(specs, { i: 42, vc: 'abc', b: true });
      assert.deepEqual(encodeKeyPrefix(specs, []), Buffer.alloc(0));
      assert.deepEqual(encodeKeyPrefix(specs, [42]), full.subarray(0, 5));
      assert.deepEqual(encodeKeyPrefix(specs, [42, 'abc']), full.subarray(0, 32));
      assert.deepEqual(encodeKeyPrefix(specs, [42, 'abc', true]), full);
      assert.throws(() => encodeKeyPrefix(specs, [1, 'a', true, 4]), (e: unknown) => e instanceof EngineError && e.id === 'INVALID_QUERY');
    });

    it('maps user data bytes to key bytes including flag bytes, and the length bytes of whole segments', () => {
      // segments: i (4 data bytes), vc (24 data + 2 length bytes), b (1)
      const cases: Array<[number, number]> = [[0, 0], [-3, 0], [1, 2], [4, 5], [5, 7], [27, 29], [28, 32], [29, 34], [50, 34]];
      for (const [user, key] of cases) assert.equal(userBytesToKeyBytes(specs, user), key, `user ${user}`);
    });

    it('a find_set prefix selects exactly the matching keys', () => {
      const names = ['ab', 'abc', 'abd', 'b', 'a', ''];
      const keys = names.map((vc) => encodeIndexKey(specs, { i: 7, vc, b: false }));
      // user bytes: 4 for the integer + 2 of the varchar ("ab")
      const prefix = encodeKeyPrefix(specs, [7, 'ab']).subarray(0, userBytesToKeyBytes(specs, 6));
      const upper = prefixSuccessor(prefix)!;
      const matched = names.filter((_, i) => Buffer.compare(keys[i], prefix) >= 0 && Buffer.compare(keys[i], upper) < 0);
      assert.deepEqual(matched, ['ab', 'abc', 'abd']);
      // The whole varchar segment (24 bytes) matches the value alone, not "ab" followed by U+0000.
      const whole = encodeKeyPrefix(specs, [7, 'ab']).subarray(0, userBytesToKeyBytes(specs, 28));
      const zero = encodeIndexKey(specs, { i: 7, vc: 'ab\u0000', b: false });
      assert.ok(keys[0].subarray(0, whole.length).equals(whole));
      assert.ok(!zero.subarray(0, whole.length).equals(whole));
    });
  });

  describe('prefixSuccessor', () => {
    it('increments the last byte that is not 0xFF', () => {
      assert.deepEqual(prefixSuccessor(Buffer.from([1, 2, 3])), Buffer.from([1, 2, 4]));
      assert.deepEqual(prefixSuccessor(Buffer.from([1, 0xff, 0xff])), Buffer.from([2]));
      assert.deepEqual(prefixSuccessor(Buffer.from([0, 0xfe])), Buffer.from([0, 0xff]));
      assert.equal(prefixSuccessor(Buffer.from([0xff, 0xff])), null);
      assert.equal(prefixSuccessor(Buffer.alloc(0)), null);
    });
    it('is greater than every extension of the prefix and not greater than the next prefix', () => {
      const prefix = Buffer.from([5, 0xff]);
      const next = prefixSuccessor(prefix)!;
      for (const tail of [[], [0], [0xff, 0xff, 0xff]]) assert.ok(Buffer.compare(Buffer.concat([prefix, Buffer.from(tail)]), next) < 0);
      assert.ok(Buffer.compare(Buffer.from([6]), next) >= 0);
    });
  });

  describe('record IDs', () => {
    it('append 8 bytes big-endian and read them back, keeping order', () => {
      const key = Buffer.from([1, 2]);
      for (const id of [1, 255, 256, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) {
        const withId = appendRecordId(key, id);
        assert.equal(withId.length, 10);
        assert.deepEqual(withId.subarray(0, 2), key);
        assert.equal(readRecordId(withId), id);
      }
      assert.ok(Buffer.compare(appendRecordId(key, 2 ** 32 - 1), appendRecordId(key, 2 ** 32)) < 0);
      assert.equal(appendRecordId(key, 258).subarray(2).toString('hex'), '0000000000000102');
    });
  });
});
