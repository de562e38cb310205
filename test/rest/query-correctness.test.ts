/**
 * Exact query results through REST (issue 7, items 1–5): multi-byte text in index keys, ordered
 * comparisons never matching nulls, nulls never colliding in a unique index on a JSON property,
 * descending indexes, and columns named like Object.prototype members.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

describe('REST query correctness', () => {
  let server: TestServer;
  let rest: RestClient;

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
  });
  after(() => server.close());

  /** Runs a query and returns `column` of each record found, in order. */
  async function column(table: string, index: string, body: unknown, name: string): Promise<unknown[]> {
    const result = ok(await rest.post(`/query/main/${table}/${index}?top=100`, body));
    return result._records.map((record: Record<string, unknown>) => record[name]);
  }
  const find = (field: string, condition: Record<string, unknown>) => ({ find: { [field]: condition } });

  describe('multi-byte text in index keys (item 1)', () => {
    before(async () => {
      ok(await rest.post('/table/main/words', { fields: [{ name: 'w', type: 'varchar', length: 6 }, { name: 'e', type: 'varchar', length: 2 }] }));
      ok(await rest.post('/index/main/words/by_w', { fields: [{ name: 'w' }], unique: true }));
      ok(await rest.post('/index/main/words/by_w_desc', { fields: [{ name: 'w', ascending: false }] }));
      ok(await rest.post('/index/main/words/by_e', { fields: [{ name: 'e' }], unique: true }));
    });

    it('a unique index holds values that share their first bytes (no false duplicate)', async () => {
      ok(await rest.post('/record/main/words', { w: 'éééa' })); // 4 characters, 7 bytes
      ok(await rest.post('/record/main/words', { w: 'éééb' }));
      ok(await rest.post('/record/main/words', [{ w: 'éééééé' }, { w: 'ééé' }, { w: 'z' }, { w: 'éééaa' }]));
      fails(await rest.post('/record/main/words', { w: 'éééa' }), 400, 2);
      ok(await rest.post('/record/main/words', [{ e: '😀😀' }, { e: '😀😁' }])); // 2 characters, 8 bytes
      fails(await rest.post('/record/main/words', { e: '😀😁' }), 400, 2);
    });

    it('= returns the value only, > and < compare whole values, order is exact', async () => {
      assert.deepEqual(await column('words', 'by_w', find('w', { operator: '=', value: 'éééa' }), 'w'), ['éééa']);
      assert.deepEqual(await column('words', 'by_w', find('w', { operator: '>', value: 'éééa' }), 'w'), ['éééaa', 'éééb', 'éééééé']);
      assert.deepEqual(await column('words', 'by_w', find('w', { operator: '<', value: 'éééb' }), 'w'), ['z', 'ééé', 'éééa', 'éééaa']);
      assert.deepEqual(await column('words', 'by_w_desc', find('w', { operator: '>=', value: 'éééa' }), 'w'), ['éééééé', 'éééb', 'éééaa', 'éééa']);
      assert.deepEqual(await column('words', 'by_e', find('e', { operator: '>', value: '😀😀' }), 'e'), ['😀😁']);
      assert.deepEqual(await column('words', 'by_w', { advanced_find: { find_record: { operator: '=', fields: { w: 'éééééé' } } } }, 'w'), ['éééééé']);
    });

    it('find_set.length counts bytes of the key: a whole segment matches one value, fewer bytes a prefix', async () => {
      const findSet = (length: number, w: string) => ({ advanced_find: { find_set: { length, fields: { w } } } });
      assert.deepEqual(await column('words', 'by_w', findSet(24, 'éééa'), 'w'), ['éééa']); // varchar(6): 6 × 4 bytes
      assert.deepEqual(await column('words', 'by_w', findSet(7, 'éééa'), 'w'), ['éééa', 'éééaa']);
      assert.deepEqual(await column('words', 'by_w', findSet(6, 'ééé'), 'w'), ['ééé', 'éééa', 'éééaa', 'éééb', 'éééééé']);
      fails(await rest.post('/query/main/words/by_w?top=5', findSet(25, 'a')), 400, 4073, /24 key bytes/);
    });

    it('trailing U+0000 and trailing zero bytes are part of the value', async () => {
      ok(await rest.post('/table/main/zeros', { fields: [{ name: 's', type: 'varchar', length: 4 }, { name: 'b', type: 'varbinary', length: 3 }] }));
      ok(await rest.post('/index/main/zeros/by_s', { fields: [{ name: 's' }], unique: true }));
      ok(await rest.post('/index/main/zeros/by_b', { fields: [{ name: 'b' }], unique: true }));
      ok(await rest.post('/record/main/zeros', [{ s: 'a', b: 'AB' }, { s: 'a\u0000', b: 'AB00' }, { s: 'a\u0000\u0000', b: 'AB0000' }]));
      assert.deepEqual(await column('zeros', 'by_s', find('s', { operator: '=', value: 'a' }), 's'), ['a']);
      assert.deepEqual(await column('zeros', 'by_s', find('s', { operator: '>', value: 'a' }), 's'), ['a\u0000', 'a\u0000\u0000']);
      assert.deepEqual(await column('zeros', 'by_b', find('b', { operator: '=', value: 'AB00' }), 'b'), ['AB00']);
      assert.deepEqual(await column('zeros', 'by_b', find('b', { operator: '<', value: 'AB0000' }), 'b'), ['AB', 'AB00']);
    });

    it('text that is not valid Unicode (an unpaired surrogate) is refused, so no two values share a key', async () => {
      fails(await rest.post('/record/main/words', { w: 'a\ud800' }), 400, 4031, /surrogate/);
      fails(await rest.post('/record/main/words', { w: 'a\udfff' }), 400, 4031, /surrogate/);
      assert.deepEqual(await column('words', 'by_w', find('w', { operator: '>=', value: 'a' }), 'w'), ['z', 'ééé', 'éééa', 'éééaa', 'éééb', 'éééééé']);
    });

    it('a key segment with a size holds that many bytes: a longer value is refused, not cut', async () => {
      ok(await rest.post('/table/main/notes', { fields: [{ name: 'title', type: 'varchar' }, { name: 'doc', type: 'json' }] }));
      ok(await rest.post('/index/main/notes/by_title', { fields: [{ name: 'title', size: 8 }], unique: true }));
      ok(await rest.post('/index/main/notes/by_tag', { fields: [{ name: 'doc', key: 'tag', type: 'varchar', size: 4 }], unique: true }));
      ok(await rest.post('/record/main/notes', [{ title: 'abcdefgh', doc: { tag: 'éé' } }, { title: 'éééé' }]));
      fails(await rest.post('/record/main/notes', { title: 'abcdefgha' }), 400, 4031, /by_title/);
      fails(await rest.post('/record/main/notes', { title: 'ééééa' }), 400, 4031, /9 bytes/);
      fails(await rest.post('/record/main/notes', [{ title: 'ok' }, { title: 'x', doc: { tag: 'ééa' } }]), 400, 4031, /by_tag/);
      const all = await column('notes', 'by_title', find('title', { operator: '>=', value: '' }), 'title');
      assert.deepEqual(all, ['abcdefgh', 'éééé']); // nothing of the refused requests was stored
      fails(await rest.put('/record/main/notes/1', { title: 'abcdefghi' }), 400, 4031);
      // An index over existing values that do not fit is refused.
      ok(await rest.post('/record/main/notes', { title: 'abc', doc: { note: 'a longer note' } }));
      fails(await rest.post('/index/main/notes/by_note', { fields: [{ name: 'doc', key: 'note', type: 'varchar', size: 5 }] }), 400, 4031, /by_note/);
      ok(await rest.post('/index/main/notes/by_note', { fields: [{ name: 'doc', key: 'note', type: 'varchar', size: 20 }] }));
    });

    it('a text column too long for a whole-value key needs a size', async () => {
      ok(await rest.post('/table/main/long', { fields: [{ name: 'a', type: 'varchar', length: 474 }, { name: 'b', type: 'varchar', length: 475 }] }));
      ok(await rest.post('/index/main/long/by_a', { fields: [{ name: 'a' }] }));
      fails(await rest.post('/index/main/long/by_b', { fields: [{ name: 'b' }] }), 400, 4052, /1900/);
      ok(await rest.post('/record/main/long', { a: '😀'.repeat(474) }));
      assert.equal((await column('long', 'by_a', find('a', { operator: '=', value: '😀'.repeat(474) }), 'a')).length, 1);
    });
  });

  describe('ordered comparisons never match a null key (item 2)', () => {
    // One row per value 1..3 and two rows with every column null.
    before(async () => {
      ok(await rest.post('/table/main/gaps', {
        fields: [
          { name: 'label', type: 'varchar', length: 10 },
          { name: 'i', type: 'integer' }, { name: 's', type: 'varchar', length: 10 },
          { name: 'b', type: 'bigint' }, { name: 'd', type: 'date' },
        ],
      }));
      ok(await rest.post('/record/main/gaps', [
        { label: 'null1' },
        { label: 'one', i: 1, s: 'a', b: '9007199254740993', d: '01/01/2001' },
        { label: 'two', i: 2, s: 'b', b: '9007199254740994', d: '01/01/2002' },
        { label: 'null2' },
        { label: 'three', i: 3, s: 'c', b: '9007199254740995', d: '01/01/2003' },
      ]));
      for (const name of ['i', 's', 'b', 'd']) {
        ok(await rest.post(`/index/main/gaps/${name}_asc`, { fields: [{ name }] }));
        ok(await rest.post(`/index/main/gaps/${name}_desc`, { fields: [{ name, ascending: false }] }));
      }
      ok(await rest.post('/index/main/gaps/i_s', { fields: [{ name: 'i' }, { name: 's' }] }));
      ok(await rest.post('/record/main/gaps', { label: 'two-null', i: 2 }));
    });

    const third: Record<string, unknown> = { i: 3, s: 'c', b: '9007199254740995', d: '01/01/2003' };
    const first: Record<string, unknown> = { i: 1, s: 'a', b: '9007199254740993', d: '01/01/2001' };
    // Equal keys follow record-ID order in either direction, so "two" comes before "two-null".
    const below: Record<string, Record<string, string[]>> = {
      asc: { i: ['one', 'two', 'two-null'], other: ['one', 'two'] },
      desc: { i: ['two', 'two-null', 'one'], other: ['two', 'one'] },
    };
    const above: Record<string, Record<string, string[]>> = {
      asc: { i: ['two', 'two-null', 'three'], other: ['two', 'three'] },
      desc: { i: ['three', 'two', 'two-null'], other: ['three', 'two'] },
    };
    for (const name of ['i', 's', 'b', 'd']) {
      for (const direction of ['asc', 'desc']) {
        const index = `${name}_${direction}`;
        const kind = name === 'i' ? 'i' : 'other';
        it(`${name} (${direction}): <, <=, between with only an upper bound, and >`, async () => {
          const labels = (condition: Record<string, unknown>) => column('gaps', index, find(name, condition), 'label');
          assert.deepEqual(await labels({ operator: '<', value: third[name] }), below[direction][kind]);
          assert.deepEqual(await labels({ operator: '<=', value: first[name] }), ['one']);
          assert.deepEqual(await labels({ operator: 'between', uppervalue: first[name] }), ['one']);
          assert.deepEqual(await labels({ operator: 'between', excludeuppervalue: third[name] }), below[direction][kind]);
          assert.deepEqual(await labels({ operator: '>', value: first[name] }), above[direction][kind]);
          const record = (operator: string) => column('gaps', index, { advanced_find: { find_record: { operator, fields: { [name]: third[name] } } } }, 'label');
          assert.deepEqual(await record('<'), below[direction][kind]);
        });
      }
    }

    it('a whole-key comparison is decided by its first unequal segment, and is false at a null', async () => {
      const record = (operator: string, fields: Record<string, unknown>) => column('gaps', 'i_s', { advanced_find: { find_record: { operator, fields } } }, 'label');
      // (2, null) <= (2, "b") and (2, null) >= (2, "a") compare a null: false.
      assert.deepEqual(await record('<=', { i: 2, s: 'b' }), ['one', 'two']);
      assert.deepEqual(await record('>=', { i: 2, s: 'a' }), ['two', 'three']);
      // (2, null) < (3, "a") and (2, null) > (1, "z") are decided by the first segment: true.
      assert.deepEqual(await record('<', { i: 3, s: 'a' }), ['one', 'two-null', 'two']);
      assert.deepEqual(await record('>', { i: 1, s: 'z' }), ['two-null', 'two', 'three']);
    });

    it('a value of null in a bound is refused (query nulls with filter)', async () => {
      fails(await rest.post('/query/main/gaps/i_s?top=5', { advanced_find: { find_record: { operator: '>', fields: { i: 1, s: null } } } }), 400);
      assert.deepEqual(await column('gaps', 'i_asc', { ...find('i', { operator: '>=', value: 0 }), filter: 's == null' }, 'label'), ['two-null']);
    });
  });

  describe('a unique index on a JSON property: nulls never collide (item 3)', () => {
    before(async () => {
      ok(await rest.post('/table/main/profiles', { fields: [{ name: 'name', type: 'varchar', length: 10 }, { name: 'doc', type: 'json' }] }));
    });

    it('rows without the property (or with null) are all accepted; real duplicates are not', async () => {
      ok(await rest.post('/record/main/profiles', [{ name: 'a', doc: {} }, { name: 'b', doc: { email: null } }, { name: 'c' }]));
      ok(await rest.post('/index/main/profiles/by_email', { fields: [{ name: 'doc', key: 'email', type: 'varchar', size: 40 }], unique: true }));
      ok(await rest.post('/index/main/profiles/by_num', { fields: [{ name: 'doc', key: 'n', type: 'integer' }], unique: true }));
      ok(await rest.post('/record/main/profiles', [{ name: 'd', doc: { other: 1 } }, { name: 'e', doc: { email: null, n: null } }]));
      ok(await rest.post('/record/main/profiles', { name: 'f', doc: { email: 'f@x', n: 1 } }));
      fails(await rest.post('/record/main/profiles', { name: 'g', doc: { email: 'f@x' } }), 400, 2);
      fails(await rest.post('/record/main/profiles', { name: 'g', doc: { n: 1 } }), 400, 2);
      ok(await rest.patch('/record/main/profiles/6', { doc: {} })); // f loses its properties
      ok(await rest.post('/record/main/profiles', { name: 'g', doc: { email: 'f@x', n: 1 } }));
      assert.deepEqual(await column('profiles', 'by_email', find('email', { operator: '>=', value: '' }), 'name'), ['g']);
    });

    it('an integer property key holds only exact values: fractions and out-of-range numbers are null, never cut or clamped', async () => {
      ok(await rest.post('/table/main/gauges', { fields: [{ name: 'name', type: 'varchar', length: 10 }, { name: 'doc', type: 'json' }] }));
      ok(await rest.post('/index/main/gauges/by_level', { fields: [{ name: 'doc', key: 'level', type: 'integer' }], unique: true }));
      ok(await rest.post('/record/main/gauges', [
        { name: 'max', doc: { level: 2147483647 } }, { name: 'big', doc: { level: 3e9 } }, { name: 'bigger', doc: { level: 4e9 } },
        { name: 'a', doc: { level: 1.2 } }, { name: 'b', doc: { level: 1.7 } }, { name: 'one', doc: { level: '1' } },
      ]));
      fails(await rest.post('/record/main/gauges', { name: 'dup', doc: { level: 1 } }), 400, 2);
      assert.deepEqual(await column('gauges', 'by_level', find('level', { operator: '=', value: 2147483647 }), 'name'), ['max']);
      assert.deepEqual(await column('gauges', 'by_level', find('level', { operator: '>=', value: 0 }), 'name'), ['one', 'max']);
    });
  });

  describe('descending indexes (item 4)', () => {
    it('>= on a descending index returns the values >= the bound, largest first', async () => {
      ok(await rest.post('/table/main/steps', { fields: [{ name: 'n', type: 'integer' }] }));
      ok(await rest.post('/index/main/steps/by_n_desc', { fields: [{ name: 'n', ascending: false }] }));
      ok(await rest.post('/record/main/steps', [1, 2, 3, 4, 5, 6].map((n) => ({ n }))));
      assert.deepEqual(await column('steps', 'by_n_desc', find('n', { operator: '>=', value: 4 }), 'n'), [6, 5, 4]);
      assert.deepEqual(await column('steps', 'by_n_desc', find('n', { operator: '<', value: 3 }), 'n'), [2, 1]);
    });
  });

  describe('columns named like Object.prototype members (item 5)', () => {
    const NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];

    before(async () => {
      ok(await rest.post('/table/main/proto', { fields: [{ name: 'label', type: 'varchar', length: 10 }, ...NAMES.map((name) => ({ name, type: 'varchar', length: 10 }))] }));
      ok(await rest.post('/index/main/proto/by_constructor', { fields: [{ name: 'constructor' }] }));
    });

    const full = (label: string) => Object.fromEntries([['label', label], ...NAMES.map((name) => [name, `${label}-${name.length}`])]);
    const lower = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));

    it('stores and reads every such column (POST, GET, query)', async () => {
      const [id] = ok(await rest.post('/record/main/proto', full('one')))._ids;
      assert.deepEqual(ok(await rest.get(`/record/main/proto/${id}`)), lower(full('one')));
      const found = ok(await rest.post('/query/main/proto/by_constructor?top=5', find('constructor', { operator: '=', value: 'one-11' })));
      assert.deepEqual(found._records, [{ _id: id, ...lower(full('one')) }]);
      const filtered = ok(await rest.post('/query/main/proto/by_constructor?top=5', { ...find('constructor', { operator: '>=', value: '' }), filter: 'tostring == "one-8"', select: ['constructor', 'valueOf'] }));
      assert.deepEqual(filtered._records, [{ _id: id, constructor: 'one-11', valueof: 'one-7' }]);
    });

    it('a record that omits them reads them as null', async () => {
      const [id] = ok(await rest.post('/record/main/proto', { label: 'bare' }))._ids;
      const expected = Object.fromEntries([['label', 'bare'], ...NAMES.map((name) => [name.toLowerCase(), null])]);
      assert.deepEqual(ok(await rest.get(`/record/main/proto/${id}`)), expected);
      assert.deepEqual(await column('proto', 'by_constructor', find('constructor', { operator: '<', value: 'zzz' }), 'label'), ['one']);
    });

    it('"__proto__" stays reserved for tables and indexes (a persisted name map could not hold it)', async () => {
      fails(await rest.post('/index/main/proto/__proto__', { fields: [{ name: 'label' }] }), 400, 12012, /reserved/);
      fails(await rest.post('/table/main/__PROTO__', { fields: [{ name: 'a', type: 'integer' }] }), 400, 12012, /reserved/);
      ok(await rest.post('/index/main/proto/constructor', { fields: [{ name: 'label' }] }));
    });

    it('PUT and PATCH work on such a table, with and without those columns', async () => {
      const [id] = ok(await rest.post('/record/main/proto', full('two')))._ids;
      ok(await rest.patch(`/record/main/proto/${id}`, { label: 'two-b' }));
      assert.deepEqual(ok(await rest.get(`/record/main/proto/${id}`)), { ...lower(full('two')), label: 'two-b' });
      ok(await rest.patch(`/record/main/proto/${id}`, { constructor: 'patched', toString: 'x' }));
      assert.deepEqual(ok(await rest.get(`/record/main/proto/${id}`)), { ...lower(full('two')), label: 'two-b', constructor: 'patched', tostring: 'x' });
      ok(await rest.put(`/record/main/proto/${id}`, { label: 'three' }));
      const cleared = Object.fromEntries([['label', 'three'], ...NAMES.map((name) => [name.toLowerCase(), null])]);
      assert.deepEqual(ok(await rest.get(`/record/main/proto/${id}`)), cleared);
      ok(await rest.put(`/record/main/proto/${id}`, full('four')));
      assert.deepEqual(ok(await rest.get(`/record/main/proto/${id}`)), lower(full('four')));
    });
  });
});
