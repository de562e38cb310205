/** responseOptions: validation, resolution over session and server defaults, record shaping. */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { parseResponseOptions, resolveResponseOptions } from '../../plugins/actions/response-options';
import { shapeRecords } from '../../plugins/actions/record-shape';
import type { ColumnDefinition } from '../../kernel/storage/types';
import { ISO_FORMAT, VARIANT_SCHEMA_ID } from '../../lib/values/wire-format';
import { admin, db, fails, login, ok, startActionServer } from './action-client';

function column(name: string, type: ColumnDefinition['type'], extra: Partial<ColumnDefinition> = {}): ColumnDefinition {
  return { name, type, length: null, scale: null, nullable: true, primaryKey: 0, defaultValue: null, autoValue: 'none', ...extra };
}

describe('actions: response options', function () {
  describe('parseResponseOptions', function () {
    it('accepts every property, case-insensitive enum values', function () {
      const options = parseResponseOptions({
        binaryFormat: 'BASE64', dataFormat: 'Objects', numberFormat: 'STRING', stringFormat: 'Hex', variantFormat: 'variantobject',
        includeFields: ['Name'], includePaths: ['Doc.a.B'], omit: ['errorMessage'],
      });
      assert.deepEqual(options, {
        binaryFormat: 'base64', dataFormat: 'objects', numberFormat: 'string', stringFormat: 'hex', variantFormat: 'variantObject',
        includeFields: ['name'], includePaths: ['doc.a.B'], omit: ['errorMessage'],
      });
    });

    it('treats null, undefined and dataFormat "default" as not set; ignores unknown properties', function () {
      assert.deepEqual(parseResponseOptions(undefined), {});
      assert.deepEqual(parseResponseOptions(null), {});
      assert.deepEqual(parseResponseOptions({ numberFormat: null, dataFormat: 'default', fixedLengthCharFormat: 'sql' }), {});
    });

    it('rejects bad values with 12012 naming the property', function () {
      const bad: Array<[unknown, RegExp]> = [
        ['objects', /responseOptions/],
        [[], /responseOptions/],
        [{ binaryFormat: 'octal' }, /binaryFormat/],
        [{ dataFormat: 'tables' }, /dataFormat/],
        [{ numberFormat: 1 }, /numberFormat/],
        [{ stringFormat: 'utf8' }, /stringFormat/],
        [{ variantFormat: 'xml' }, /variantFormat/],
        [{ includeFields: 'a' }, /includeFields/],
        [{ includeFields: [1] }, /includeFields/],
        [{ excludePaths: [''] }, /excludePaths/],
        [{ includeFields: ['a'], excludeFields: ['b'] }, /mutually exclusive/],
        [{ includePaths: ['a.b'], excludePaths: ['c'] }, /mutually exclusive/],
        [{ omit: 'errorMessage' }, /omit/],
      ];
      for (const [raw, message] of bad) {
        assert.throws(() => parseResponseOptions(raw), (error: any) => error.code === 12012 && message.test(error.message), JSON.stringify(raw));
      }
    });

    it('allows an empty list beside a non-empty one', function () {
      assert.deepEqual(parseResponseOptions({ includeFields: ['a'], excludeFields: [] }), { includeFields: ['a'], excludeFields: [] });
    });
  });

  describe('resolveResponseOptions', function () {
    const server = { default_binary_format: 'hex' as const, default_number_format: 'number' as const, default_response_options: {} };

    it('has the documented built-in defaults', function () {
      assert.deepEqual(resolveResponseOptions({}, undefined, {}), {
        binaryFormat: 'hex', dataFormat: 'arrays', numberFormat: 'number', stringFormat: 'json', variantFormat: 'json',
        includeFields: [], excludeFields: [], includePaths: [], excludePaths: [], omit: [],
      });
    });

    it('request over session defaultResponseOptions over session defaults over settings', function () {
      const session = { defaultResponseOptions: { dataFormat: 'objects', binaryFormat: 'base64' }, defaultBinaryFormat: 'byteArray' as const, defaultNumberFormat: 'string' as const, defaultVariantFormat: 'binary' as const };
      const settings = { ...server, default_response_options: { stringFormat: 'hex', dataFormat: 'arrays' } };
      const r = resolveResponseOptions({}, session, settings);
      assert.equal(r.dataFormat, 'objects');
      assert.equal(r.binaryFormat, 'base64');
      assert.equal(r.numberFormat, 'string');
      assert.equal(r.variantFormat, 'binary');
      assert.equal(r.stringFormat, 'hex');
      const s = resolveResponseOptions(parseResponseOptions({ binaryFormat: 'hex', dataFormat: 'default', numberFormat: 'number' }), session, settings);
      assert.equal(s.binaryFormat, 'hex');
      assert.equal(s.dataFormat, 'objects', '"default" falls through to the session');
      assert.equal(s.numberFormat, 'number');
      assert.equal(resolveResponseOptions({}, { defaultBinaryFormat: 'byteArray' }, server).binaryFormat, 'byteArray');
      assert.equal(resolveResponseOptions({}, undefined, { default_binary_format: 'base64' }).binaryFormat, 'base64');
    });

    it('takes includeFields/excludeFields as one unit from the first level naming either', function () {
      const session = { defaultResponseOptions: { excludeFields: ['secret'] } };
      assert.deepEqual(resolveResponseOptions({}, session, server).excludeFields, ['secret']);
      const r = resolveResponseOptions(parseResponseOptions({ includeFields: ['a'] }), session, server);
      assert.deepEqual([r.includeFields, r.excludeFields], [['a'], []]);
    });
  });

  describe('shapeRecords', function () {
    const columns = [
      column('id', 'bigint', { nullable: false, primaryKey: 1, autoValue: 'incrementOnInsert' }),
      column('name', 'varchar', { length: 10 }),
      column('doc', 'json'),
      column('v', 'variant'),
    ];
    const records = [
      { id: 1, name: 'a', doc: { x: { y: 1, z: 2 }, w: [{ y: 3, q: 4 }] }, v: { schema: VARIANT_SCHEMA_ID, type: 'json', valueEncoding: 'json', value: { x: { y: 5, z: 6 } } } },
      { id: 2, name: 'b', doc: null, v: 'text' },
    ];
    const options = (raw: Record<string, unknown>) => resolveResponseOptions(parseResponseOptions(raw), undefined, {});

    it('arrays by default, objects on request, with column metadata', function () {
      const arrays = shapeRecords(columns, records, options({}), ISO_FORMAT);
      assert.deepEqual(arrays.data[1], [2, 'b', null, 'text']);
      assert.deepEqual(arrays.fields.map((f) => f.name), ['id', 'name', 'doc', 'v']);
      assert.deepEqual(arrays.fields[0], { name: 'id', type: 'bigint', length: null, scale: null, autoTimestamp: 'none', defaultValue: null, nullable: false, primaryKey: 1, autoValue: 'incrementOnInsert' });
      const objects = shapeRecords(columns, records, options({ dataFormat: 'objects' }), ISO_FORMAT);
      assert.deepEqual(objects.data[1], { id: 2, name: 'b', doc: null, v: 'text' });
    });

    it('includeFields and excludeFields (case-insensitive; unknown names ignored)', function () {
      const inc = shapeRecords(columns, records, options({ dataFormat: 'objects', includeFields: ['NAME', 'nosuch'] }), ISO_FORMAT);
      assert.deepEqual(inc.data, [{ name: 'a' }, { name: 'b' }]);
      assert.deepEqual(inc.fields.map((f) => f.name), ['name']);
      const exc = shapeRecords(columns, records, options({ excludeFields: ['doc', 'v'] }), ISO_FORMAT);
      assert.deepEqual(exc.data, [[1, 'a'], [2, 'b']]);
    });

    it('includePaths keeps only the named JSON properties (arrays element-wise, variant objects by value)', function () {
      const r = shapeRecords(columns, records, options({ dataFormat: 'objects', includePaths: ['doc.x.y', 'doc.w.y', 'v.x.z'] }), ISO_FORMAT);
      assert.deepEqual(r.data[0], { id: 1, name: 'a', doc: { x: { y: 1 }, w: [{ y: 3 }] }, v: { schema: VARIANT_SCHEMA_ID, type: 'json', valueEncoding: 'json', value: { x: { z: 6 } } } });
      assert.deepEqual(r.data[1], { id: 2, name: 'b', doc: null, v: 'text' });
      const whole = shapeRecords(columns, records, options({ dataFormat: 'objects', includePaths: ['doc'] }), ISO_FORMAT);
      assert.deepEqual((whole.data[0] as Record<string, unknown>).doc, records[0].doc);
    });

    it('excludePaths removes properties; a bare field name removes the field', function () {
      const r = shapeRecords(columns, records, options({ dataFormat: 'objects', excludePaths: ['doc.x.z', 'doc.w.q', 'v'] }), ISO_FORMAT);
      assert.deepEqual(r.data[0], { id: 1, name: 'a', doc: { x: { y: 1 }, w: [{ y: 3 }] } });
      assert.deepEqual(r.fields.map((f) => f.name), ['id', 'name', 'doc']);
      assert.deepEqual(records[0].doc, { x: { y: 1, z: 2 }, w: [{ y: 3, q: 4 }] }, 'the input is not changed');
    });
  });

  describe('over HTTP', function () {
    this.timeout(20_000);
    let server: TestServer;
    let token: string;

    before(async function () {
      server = await startActionServer();
      token = await login(server);
    });
    after(async function () {
      await server?.close();
    });

    it('answers invalid responseOptions with 12012 before running the action', async function () {
      await fails(server, { ...admin('listAccounts', token), responseOptions: { includeFields: ['a'], excludeFields: ['b'] } }, 12012);
      await fails(server, { ...admin('listAccounts', token), responseOptions: { binaryFormat: 'octal' } }, 12012);
      await fails(server, { ...admin('listAccounts', token), responseOptions: { numberFormat: 'float' } }, 12012);
    });

    describe('with records', function () {
      before(async function () {
        await ok(server, db('createTable', token, {
          tableName: 'ro',
          fields: [{ name: 'name', type: 'char', length: 4 }, { name: 'big', type: 'bigint' }, { name: 'price', type: 'money' }, { name: 'bin', type: 'binary', length: 3 }, { name: 'doc', type: 'json' }, { name: 'v', type: 'variant' }],
        }));
        await ok(server, db('insertRecords', token, { tableName: 'ro', sourceData: [{ name: 'ab', big: '9007199254740993', price: 12.5, bin: '0A0B', doc: { a: { b: 1, c: 2 } }, v: 'str' }] }));
      });

      const get = (extra: Record<string, unknown>, auth = token) => ok(server, db('getRecordsByTable', auth, { tableName: 'ro' }, extra));

      it('dataFormat, binaryFormat and numberFormat', async function () {
        const plain = await get({ responseOptions: { dataFormat: 'objects' } });
        const row = plain.data[0];
        assert.equal(row.bin, '0A0B00');
        assert.equal(row.big, '9007199254740993', 'unsafe integers come back as strings');
        assert.equal(row.price, 12.5);
        assert.equal(plain.numberFormat, 'number');
        const strings = await get({ responseOptions: { dataFormat: 'objects', numberFormat: 'string', binaryFormat: 'base64' } });
        assert.equal(strings.data[0].price, '12.5');
        assert.equal(strings.data[0].id, '1');
        assert.equal(strings.data[0].bin, 'CgsA');
        assert.equal(strings.binaryFormat, 'base64');
        assert.equal(strings.dataFormat, 'objects');
        const bytes = await get({ responseOptions: { binaryFormat: 'byteArray' } });
        assert.equal(bytes.dataFormat, 'arrays');
        assert.deepEqual(bytes.data[0][4], [10, 11, 0]);
      });

      it('stringFormat hex returns char values as hex of their bytes', async function () {
        const r = await get({ responseOptions: { dataFormat: 'objects', stringFormat: 'hex' } });
        assert.match(r.data[0].name, /^6162/);
      });

      it('variantFormat', async function () {
        const asJson = await get({ responseOptions: { dataFormat: 'objects' } });
        assert.equal(asJson.data[0].v, 'str');
        const asObject = await get({ responseOptions: { dataFormat: 'objects', variantFormat: 'variantObject' } });
        assert.equal(asObject.data[0].v.schema, VARIANT_SCHEMA_ID);
        assert.equal(asObject.data[0].v.type, 'json');
      });

      it('includeFields, excludeFields, includePaths, excludePaths', async function () {
        const inc = await get({ responseOptions: { dataFormat: 'objects', includeFields: ['name', 'doc'] } });
        assert.deepEqual(Object.keys(inc.data[0]), ['name', 'doc']);
        assert.deepEqual(inc.fields.map((f: any) => f.name), ['name', 'doc']);
        const exc = await get({ responseOptions: { excludeFields: ['doc', 'v', 'bin'] } });
        assert.equal(exc.data[0].length, 4);
        const paths = await get({ responseOptions: { dataFormat: 'objects', includeFields: ['doc'], includePaths: ['doc.a.c'] } });
        assert.deepEqual(paths.data[0], { doc: { a: { c: 2 } } });
        const xpaths = await get({ responseOptions: { dataFormat: 'objects', includeFields: ['doc'], excludePaths: ['doc.a.c'] } });
        assert.deepEqual(xpaths.data[0], { doc: { a: { b: 1 } } });
      });

      it('session defaultResponseOptions and defaults apply; the request wins', async function () {
        const session = await login(server, 'admin', 'ADMIN', { defaultResponseOptions: { dataFormat: 'objects', includeFields: ['name'] }, defaultBinaryFormat: 'base64', defaultNumberFormat: 'string' });
        const r = await get({}, session);
        assert.deepEqual(r.data, [{ name: r.data[0].name }]);
        const full = await get({ responseOptions: { excludeFields: ['doc'] } }, session);
        assert.equal(full.data[0].bin, 'CgsA');
        assert.equal(full.data[0].price, '12.5');
        const overridden = await get({ responseOptions: { dataFormat: 'arrays', binaryFormat: 'hex', numberFormat: 'number', includeFields: ['bin', 'price'] } }, session);
        assert.deepEqual(overridden.data, [[12.5, '0A0B00']], 'columns keep table order');
        await ok(server, admin('alterSession', session, { defaultResponseOptions: null }));
        const cleared = await get({}, session);
        assert.equal(cleared.dataFormat, 'arrays');
      });

      it('server default_response_options apply below the session', async function () {
        const other = await startActionServer({ default_response_options: { dataFormat: 'objects' }, default_binary_format: 'base64' });
        try {
          const t = await login(other);
          await ok(other, db('createTable', t, { tableName: 'x', fields: [{ name: 'b', type: 'binary', length: 1 }] }));
          await ok(other, db('insertRecords', t, { tableName: 'x', sourceData: [{ b: 'AQ==' }] }));
          const r = await ok(other, db('getRecordsByTable', t, { tableName: 'x' }));
          assert.equal(r.dataFormat, 'objects');
          assert.equal(r.binaryFormat, 'base64');
          assert.equal(r.data[0].b, 'AQ==');
        } finally {
          await other.close();
        }
      });
    });
  });
});
