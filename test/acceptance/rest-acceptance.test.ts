/**
 * Black-box acceptance suite for the REST interface, written from the specification
 * (the product's documented REST interface, queries, running and settings), issues 2
 * and 3, and the claims of docs/rest.md. Everything goes through real HTTP(S) sockets against a
 * real engine on a temporary data folder.
 */
import assert from 'node:assert/strict';
import { call, startServer, tempDataDir, type HttpResult, type TestServer } from '../helpers/server';

const P = '/engine/api/v1';
type Auth = [string, string] | null;

let srv: TestServer;

function rq(method: string, path: string, body?: unknown, auth?: Auth, base = srv.http): Promise<HttpResult> {
  return call(method, `${base}${P}${path}`, { ...(body === undefined ? {} : { body }), ...(auth === undefined ? {} : { auth }) });
}
const get = (path: string, auth?: Auth) => rq('GET', path, undefined, auth);
const post = (path: string, body?: unknown, auth?: Auth) => rq('POST', path, body, auth);
const put = (path: string, body?: unknown, auth?: Auth) => rq('PUT', path, body, auth);
const patch = (path: string, body?: unknown, auth?: Auth) => rq('PATCH', path, body, auth);
const del = (path: string, auth?: Auth) => rq('DELETE', path, undefined, auth);

function ok(res: HttpResult): any {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.text}`);
  return res.json;
}

/** An error answer: status, `{errorCode: integer, errorMessage: string}`, optionally the code and a message pattern. */
function bad(res: HttpResult, status: number, code?: number, message?: RegExp): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(res.json && typeof res.json === 'object', `error body is not JSON: ${res.text}`);
  assert.ok(Number.isInteger(res.json.errorCode), `errorCode is not an integer: ${res.text}`);
  assert.equal(typeof res.json.errorMessage, 'string', `errorMessage is not a string: ${res.text}`);
  if (code !== undefined) assert.equal(res.json.errorCode, code, res.text);
  if (message) assert.match(res.json.errorMessage, message, res.text);
}

async function table(name: string, fields: unknown[], db = 'main'): Promise<void> {
  ok(await post(`/table/${db}/${name}`, { fields }));
}
async function index(tableName: string, name: string, def: unknown): Promise<void> {
  ok(await post(`/index/main/${tableName}/${name}`, def));
}
async function insert(tableName: string, rows: unknown): Promise<number[]> {
  const body = ok(await post(`/record/main/${tableName}`, rows));
  return body._ids;
}
async function query(tableName: string, indexName: string, body: unknown, qs = 'top=1000'): Promise<any[]> {
  const res = await post(`/query/main/${tableName}/${indexName}?${qs}`, body);
  const json = ok(res);
  assert.ok(Array.isArray(json._records), `no _records in ${res.text}`);
  return json._records;
}
const all = (col: string, min: unknown) => ({ find: { [col]: { operator: '>=', value: min } } });

async function actionSession(): Promise<string> {
  const res = await call('POST', `${srv.http}/api`, { body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } }, auth: null });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.errorCode, 0, res.text);
  return res.json.authToken;
}
async function action(token: string, api: string, name: string, params: unknown): Promise<any> {
  const res = await call('POST', `${srv.http}/api`, { body: { api, action: name, params, authToken: token }, auth: null });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.errorCode, 0, res.text);
  return res.json.result;
}

describe('REST acceptance (spec + docs/rest.md)', function () {
  this.timeout(30000);

  before(async () => { srv = await startServer(); });
  after(async () => { await srv?.close(); });

  // ---------------------------------------------------------------------------------------------
  describe('tables', () => {
    it('a fresh default database lists no tables: {_tables: []} (internal catalogs never listed)', async () => {
      assert.deepEqual(ok(await get('/table/main')), { _tables: [] });
    });

    it('GET / answers 200 (health check)', async () => {
      const res = await call('GET', `${srv.http}/`);
      assert.equal(res.status, 200);
    });

    it('creates a table with the spec\'s INTEGER/VARCHAR body; it is listed; a second create is 400 4022', async () => {
      const res = await post('/table/main/t_basic', { fields: [{ name: 'name', type: 'VARCHAR', length: 48 }, { name: 'age', type: 'INTEGER', length: 4 }] });
      assert.equal(res.status, 200, res.text);
      const list = ok(await get('/table/main'));
      assert.ok(Array.isArray(list._tables));
      assert.ok(list._tables.includes('t_basic'), res.text);
      assert.deepEqual(Object.keys(list), ['_tables']);
      bad(await post('/table/main/t_basic', { fields: [{ name: 'a', type: 'INTEGER' }] }), 400, 4022);
    });

    it('internal catalogs are never listed, even after accounts/sessions are written', async () => {
      const token = await actionSession();
      await action(token, 'admin', 'createAccount', { username: 'catalogcheck', password: 'pw12345' });
      const list = ok(await get('/table/main'))._tables as string[];
      for (const name of list) assert.ok(!/account|role|session|catalog|topic|^_|^\$/i.test(name), `internal table listed: ${name}`);
    });

    it('unknown database: list 404 4094, create 404 4094', async () => {
      bad(await get('/table/nodb'), 404, 4094);
      bad(await post('/table/nodb/x', { fields: [{ name: 'a', type: 'integer' }] }), 404, 4094);
    });

    it('bad table definitions are 400 (missing fields 12025, unknown type, empty fields) and create nothing', async () => {
      bad(await post('/table/main/t_bad1', {}), 400, 12025);
      bad(await post('/table/main/t_bad2', { fields: [{ name: 'a', type: 'blob' }] }), 400);
      bad(await post('/table/main/t_bad3', { fields: [] }), 400);
      bad(await post('/table/main/t_bad4', { fields: [{ name: 'a' }] }), 400);
      const list = ok(await get('/table/main'))._tables as string[];
      for (const t of ['t_bad1', 't_bad2', 't_bad3', 't_bad4']) assert.ok(!list.includes(t));
    });

    it('DELETE destroys the table, its data and its indexes; deleting again is 404 4023', async () => {
      await table('t_del', [{ name: 'a', type: 'integer' }]);
      await index('t_del', 'by_a', { fields: [{ name: 'a' }] });
      const [id] = await insert('t_del', { a: 1 });
      assert.deepEqual(ok(await del('/table/main/t_del')), {});
      assert.ok(!(ok(await get('/table/main'))._tables as string[]).includes('t_del'));
      bad(await get(`/record/main/t_del/${id}`), 404, 4023);
      bad(await del('/table/main/t_del'), 404, 4023);
      bad(await get('/index/main/t_del'), 404, 4023);
      // recreated with the same name: no old rows, no old index
      await table('t_del', [{ name: 'a', type: 'integer' }]);
      assert.deepEqual(ok(await get('/index/main/t_del')), { _indexes: [] });
      bad(await get(`/record/main/t_del/${id}`), 404, 101);
      await index('t_del', 'by_a', { fields: [{ name: 'a' }] });
      assert.deepEqual(await query('t_del', 'by_a', all('a', -1000)), []);
    });

    it('docs: names are case-insensitive and reported in lower case', async () => {
      await table('MixedCase', [{ name: 'Col', type: 'integer' }]);
      assert.ok((ok(await get('/table/main'))._tables as string[]).includes('mixedcase'));
      const [id] = await insert('MIXEDCASE', { COL: 7 });
      assert.deepEqual(ok(await get(`/record/main/mixedcase/${id}`)), { col: 7 });
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('column types (docs/values.md: every type, case-insensitive; wrong type / out of range / too long → 400, nothing stored)', () => {
    const T = 'types_all';
    const count = async () => (await query(T, 'by_k', all('k', -1_000_000))).length;

    before(async () => {
      await table(T, [
        { name: 'k', type: 'Integer' },
        { name: 'c_bit', type: 'BIT' },
        { name: 'c_tiny', type: 'TinyInt' },
        { name: 'c_small', type: 'SMALLINT' },
        { name: 'c_int', type: 'integer', length: 4 },
        { name: 'c_big', type: 'BigInt' },
        { name: 'c_real', type: 'REAL' },
        { name: 'c_float', type: 'Float' },
        { name: 'c_double', type: 'DOUBLE' },
        { name: 'c_money', type: 'MONEY' },
        { name: 'c_number', type: 'Number', length: 5, scale: 2 },
        { name: 'c_date', type: 'DATE' },
        { name: 'c_time', type: 'Time' },
        { name: 'c_ts', type: 'TIMESTAMP' },
        { name: 'c_char', type: 'CHAR', length: 4 },
        { name: 'c_varchar', type: 'VarChar', length: 5 },
        { name: 'c_lvarchar', type: 'LVARCHAR' },
        { name: 'c_binary', type: 'BINARY', length: 4 },
        { name: 'c_varbinary', type: 'VarBinary', length: 4 },
        { name: 'c_lvarbinary', type: 'LVARBINARY' },
        { name: 'c_json', type: 'JSON' },
        { name: 'c_variant', type: 'Variant' },
      ]);
      await index(T, 'by_k', { fields: [{ name: 'k' }] });
    });

    it('a record with every type round-trips (REST date formats, hex binary padded, bigint beyond 2^53 as string)', async () => {
      const long = 'x'.repeat(70_000);
      const [id] = await insert(T, {
        k: 1, c_bit: true, c_tiny: -128, c_small: 32767, c_int: -2147483648, c_big: '9223372036854775807',
        c_real: 1.5, c_float: 3.25, c_double: 1e300, c_money: 12.34, c_number: 123.45,
        c_date: '07/04/2024', c_time: '9:05:01.250', c_ts: '07/04/2024 9:05:01.250',
        c_char: 'ab', c_varchar: 'hello', c_lvarchar: long, c_binary: '0a0b', c_varbinary: '0a0b',
        c_lvarbinary: '00ff'.repeat(1000), c_json: { a: 1, b: [true, null, 'x'] }, c_variant: { v: 'hello' },
      });
      assert.ok(Number.isInteger(id));
      const r = ok(await get(`/record/main/${T}/${id}`));
      assert.equal(r.k, 1);
      assert.equal(r.c_bit, true);
      assert.equal(r.c_tiny, -128);
      assert.equal(r.c_small, 32767);
      assert.equal(r.c_int, -2147483648);
      assert.equal(String(r.c_big), '9223372036854775807');
      assert.equal(r.c_real, 1.5);
      assert.equal(r.c_float, 3.25);
      assert.equal(r.c_double, 1e300);
      assert.equal(Number(r.c_money), 12.34);
      assert.equal(Number(r.c_number), 123.45);
      assert.equal(r.c_date, '07/04/2024');
      assert.match(r.c_time, /^0?9:05:01\.250$/);
      assert.match(r.c_ts, /^07\/04\/2024 0?9:05:01\.250$/);
      assert.equal(String(r.c_char).replace(/[ \0]+$/, ''), 'ab');
      assert.equal(r.c_varchar, 'hello');
      assert.equal(r.c_lvarchar, long);
      assert.equal(String(r.c_binary).toUpperCase(), '0A0B0000', 'binary(4) is padded with 0x00 and all bytes returned');
      assert.equal(String(r.c_varbinary).toUpperCase(), '0A0B');
      assert.equal(String(r.c_lvarbinary).toUpperCase(), '00FF'.repeat(1000));
      assert.deepEqual(r.c_json, { a: 1, b: [true, null, 'x'] });
      assert.deepEqual(r.c_variant, { v: 'hello' });
      assert.ok(!('_id' in r) && !('id' in r), 'a single-record GET returns the declared columns only');
      assert.equal(Object.keys(r).length, 22);
    });

    it('bigint: a safe integer comes back as a number; strings of digits are accepted', async () => {
      const [id] = await insert(T, { k: 2, c_big: 9007199254740991 });
      assert.equal(ok(await get(`/record/main/${T}/${id}`)).c_big, 9007199254740991);
      const [id2] = await insert(T, { k: 2, c_big: '-9223372036854775808' });
      assert.equal(String(ok(await get(`/record/main/${T}/${id2}`)).c_big), '-9223372036854775808');
    });

    it('date input with one-digit month/day and ISO 8601 (docs) is normalised to MM/DD/CCYY', async () => {
      const [id] = await insert(T, { k: 3, c_date: '7/4/2024', c_ts: '2024-07-04T21:18:01.000', c_time: '21:18:01.5' });
      const r = ok(await get(`/record/main/${T}/${id}`));
      assert.equal(r.c_date, '07/04/2024');
      assert.equal(r.c_ts, '07/04/2024 21:18:01.000');
      assert.equal(r.c_time, '21:18:01.500');
    });

    it('unset columns are JSON null', async () => {
      const [id] = await insert(T, { k: 4 });
      const r = ok(await get(`/record/main/${T}/${id}`));
      for (const [key, value] of Object.entries(r)) if (key !== 'k') assert.equal(value, null, key);
    });

    const rejections: Array<[string, unknown]> = [
      ['c_bit', 'abc'],
      ['c_tiny', 128], ['c_tiny', -129],
      ['c_small', 32768], ['c_small', -32769],
      ['c_int', 2147483648], ['c_int', -2147483649], ['c_int', 'abc'], ['c_int', 1.5], ['c_int', true], ['c_int', { a: 1 }],
      ['c_big', '9223372036854775808'], ['c_big', 'x1'],
      ['c_real', 1e39], ['c_float', 'x'], ['c_double', 'nope'],
      ['c_money', 'lots'], ['c_number', 12345.6],
      ['c_date', '02/30/2024'], ['c_date', 'hello'], ['c_date', '13/01/2024'],
      ['c_time', '25:00:00.000'], ['c_time', 'noon'],
      ['c_ts', '13/01/2024 00:00:00.000'], ['c_ts', 'yesterday'],
      ['c_char', 'abcde'], ['c_varchar', 'hello!'], ['c_varchar', { s: 1 }], ['c_varchar', [1, 2]],
      ['c_binary', '0102030405'], ['c_binary', 'zz'], ['c_varbinary', '0102030405'], ['c_lvarbinary', 'xyz'],
    ];
    for (const [column, value] of rejections) {
      it(`rejects ${column} = ${JSON.stringify(value)} with 400 4031 and stores nothing`, async () => {
        const before = await count();
        bad(await post(`/record/main/${T}`, { k: 99, [column]: value }), 400, 4031);
        assert.equal(await count(), before);
      });
    }

    it('an unknown column is 400 4014 and stores nothing', async () => {
      const before = await count();
      bad(await post(`/record/main/${T}`, { k: 99, nosuch: 1 }), 400, 4014);
      assert.equal(await count(), before);
    });

    it('a column name the table accepts can also be written (e.g. "__proto__"), or the table definition refuses it', async () => {
      const created = await post('/table/main/proto_col', { fields: [{ name: '__proto__', type: 'integer' }] });
      if (created.status !== 200) { bad(created, 400); return; }
      const res = await post('/record/main/proto_col', '{"__proto__": 3}');
      const [id] = ok(res)._ids;
      assert.deepEqual(ok(await get(`/record/main/proto_col/${id}`)), JSON.parse('{"__proto__": 3}'));
    });

    it('docs: "id" may be given only when the table declares it (400)', async () => {
      const before = await count();
      bad(await post(`/record/main/${T}`, { k: 99, id: 5 }), 400);
      assert.equal(await count(), before);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('a table that declares its own id bigint primary key', () => {
    before(async () => {
      await table('own_id', [{ name: 'id', type: 'BIGINT', primaryKey: 1 }, { name: 'name', type: 'varchar', length: 20 }]);
    });

    it('supplied ids are used as record IDs; an omitted id gets the next one; duplicates are rejected', async () => {
      assert.deepEqual(await insert('own_id', { id: 100, name: 'a' }), [100]);
      const [next] = await insert('own_id', { name: 'b' });
      assert.equal(next, 101);
      assert.deepEqual(ok(await get('/record/main/own_id/100')), { id: 100, name: 'a' });
      assert.deepEqual(ok(await get('/record/main/own_id/101')), { id: 101, name: 'b' });
      bad(await post('/record/main/own_id', { id: 100, name: 'dup' }), 400, 2);
      assert.deepEqual(ok(await get('/record/main/own_id/100')), { id: 100, name: 'a' });
    });

    it('array create with duplicate ids stores nothing; a mixed array assigns free ids in order', async () => {
      bad(await post('/record/main/own_id', [{ id: 500, name: 'x' }, { id: 500, name: 'y' }]), 400, 2);
      bad(await get('/record/main/own_id/500'), 404, 101);
      const ids = await insert('own_id', [{ id: 300, name: 'c' }, { name: 'd' }]);
      assert.equal(ids[0], 300);
      assert.ok(Number.isInteger(ids[1]) && ![100, 101, 300].includes(ids[1]));
      assert.equal(ok(await get(`/record/main/own_id/${ids[1]}`)).id, ids[1]);
    });

    it('query results carry _id equal to the declared id', async () => {
      await index('own_id', 'by_name', { fields: [{ name: 'name' }] });
      const recs = await query('own_id', 'by_name', { find: { name: { operator: '=', value: 'a' } } });
      assert.deepEqual(recs, [{ _id: 100, id: 100, name: 'a' }]);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('records', () => {
    before(async () => {
      await table('people', [
        { name: 'name', type: 'VARCHAR', length: 48 }, { name: 'age', type: 'INTEGER', length: 4 },
        { name: 'born', type: 'timestamp' }, { name: 'email', type: 'varchar', length: 64 },
      ]);
      await index('people', 'by_age', { fields: [{ name: 'age' }] });
    });
    const count = async () => (await query('people', 'by_age', all('age', -1_000_000))).length;

    it('POST one object → 200 {_ids: [integer]}; GET returns the column object', async () => {
      const res = await post('/record/main/people', { name: 'Ann', age: 30, born: '07/04/1994 9:05:01.000', email: 'ann@x' });
      const body = ok(res);
      assert.deepEqual(Object.keys(body), ['_ids']);
      assert.equal(body._ids.length, 1);
      assert.ok(Number.isInteger(body._ids[0]) && body._ids[0] > 0);
      const rec = ok(await get(`/record/main/people/${body._ids[0]}`));
      assert.equal(rec.name, 'Ann');
      assert.equal(rec.age, 30);
      assert.match(rec.born, /^07\/04\/1994 0?9:05:01\.000$/);
    });

    it('POST an array → one record per element, _ids in creation order', async () => {
      const ids = await insert('people', [{ name: 'B1', age: 41 }, { name: 'B2', age: 42 }, { name: 'B3', age: 43 }]);
      assert.equal(ids.length, 3);
      assert.equal(new Set(ids).size, 3);
      assert.ok(ids[0] < ids[1] && ids[1] < ids[2]);
      assert.equal(ok(await get(`/record/main/people/${ids[0]}`)).name, 'B1');
      assert.equal(ok(await get(`/record/main/people/${ids[2]}`)).name, 'B3');
    });

    it('array create is all-or-nothing: wrong type / unknown column in a later element stores nothing', async () => {
      const before = await count();
      bad(await post('/record/main/people', [{ name: 'ok1', age: 1 }, { name: 'bad', age: 'x' }]), 400, 4031);
      bad(await post('/record/main/people', [{ name: 'ok1', age: 1 }, { name: 'bad', nosuch: 1 }]), 400, 4014);
      bad(await post('/record/main/people', [{ name: 'ok1', age: 1 }, 'not an object']), 400);
      assert.equal(await count(), before);
    });

    it('an empty array or a non-object body is 400 and stores nothing', async () => {
      const before = await count();
      bad(await post('/record/main/people', []), 400);
      bad(await post('/record/main/people', 42), 400);
      bad(await post('/record/main/people', '"text"'), 400);
      assert.equal(await count(), before);
    });

    it('PUT replaces the whole record: omitted columns become null', async () => {
      const [id] = await insert('people', { name: 'P', age: 50, born: '01/02/2000 3:04:05.006', email: 'p@x' });
      ok(await put(`/record/main/people/${id}`, { name: 'P2', age: 51 }));
      assert.deepEqual(ok(await get(`/record/main/people/${id}`)), { name: 'P2', age: 51, born: null, email: null });
    });

    it('PATCH changes only the supplied columns; null clears a column', async () => {
      const [id] = await insert('people', { name: 'Q', age: 60, email: 'q@x' });
      ok(await patch(`/record/main/people/${id}`, { age: 61 }));
      assert.deepEqual(ok(await get(`/record/main/people/${id}`)), { name: 'Q', age: 61, born: null, email: 'q@x' });
      ok(await patch(`/record/main/people/${id}`, { email: null }));
      assert.deepEqual(ok(await get(`/record/main/people/${id}`)), { name: 'Q', age: 61, born: null, email: null });
    });

    it('PUT/PATCH update the index the query reads', async () => {
      const [id] = await insert('people', { name: 'IdxMove', age: 700 });
      ok(await patch(`/record/main/people/${id}`, { age: 701 }));
      assert.deepEqual((await query('people', 'by_age', { find: { age: { operator: '=', value: 700 } } })), []);
      assert.deepEqual((await query('people', 'by_age', { find: { age: { operator: '=', value: 701 } } })).map((r) => r._id), [id]);
      ok(await put(`/record/main/people/${id}`, { name: 'IdxMove' }));
      assert.deepEqual((await query('people', 'by_age', { find: { age: { operator: '=', value: 701 } } })), []);
    });

    it('PUT/PATCH with a bad value or unknown column is 400 and changes nothing', async () => {
      const [id] = await insert('people', { name: 'R', age: 70 });
      bad(await put(`/record/main/people/${id}`, { name: 'R', age: 'old' }), 400, 4031);
      bad(await patch(`/record/main/people/${id}`, { age: 2 ** 31 }), 400, 4031);
      bad(await patch(`/record/main/people/${id}`, { name: 'x'.repeat(49) }), 400, 4031);
      bad(await patch(`/record/main/people/${id}`, { nosuch: 1 }), 400, 4014);
      assert.deepEqual(ok(await get(`/record/main/people/${id}`)), { name: 'R', age: 70, born: null, email: null });
    });

    it('GET/PUT/PATCH/DELETE of a missing record are 404 101', async () => {
      bad(await get('/record/main/people/999999'), 404, 101);
      bad(await put('/record/main/people/999999', { name: 'x' }), 404, 101);
      bad(await patch('/record/main/people/999999', { name: 'x' }), 404, 101);
      bad(await del('/record/main/people/999999'), 404, 101);
    });

    it('DELETE a record → 200 {}; then it is gone from GET and from queries', async () => {
      const [id] = await insert('people', { name: 'D', age: 800 });
      const res = await del(`/record/main/people/${id}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, {});
      bad(await get(`/record/main/people/${id}`), 404, 101);
      assert.deepEqual(await query('people', 'by_age', { find: { age: { operator: '=', value: 800 } } }), []);
      bad(await del(`/record/main/people/${id}`), 404, 101);
    });

    for (const badId of ['abc', '-1', '0', '1.5']) {
      it(`record id "${badId}" is 400 on GET/PUT/PATCH/DELETE`, async () => {
        bad(await get(`/record/main/people/${badId}`), 400);
        bad(await put(`/record/main/people/${badId}`, { name: 'x' }), 400);
        bad(await patch(`/record/main/people/${badId}`, { name: 'x' }), 400);
        bad(await del(`/record/main/people/${badId}`), 400);
      });
    }

    it('unknown table is 404 4023, unknown database 404 4094 (create, get, put, patch, delete)', async () => {
      bad(await post('/record/main/nosuch', { a: 1 }), 404, 4023);
      bad(await get('/record/main/nosuch/1'), 404, 4023);
      bad(await put('/record/main/nosuch/1', { a: 1 }), 404, 4023);
      bad(await patch('/record/main/nosuch/1', { a: 1 }), 404, 4023);
      bad(await del('/record/main/nosuch/1'), 404, 4023);
      bad(await post('/record/nodb/people', { name: 'x' }), 404, 4094);
      bad(await get('/record/nodb/people/1'), 404, 4094);
    });

    it('malformed JSON is 400 (12009), stores nothing, and the server keeps serving', async () => {
      const before = await count();
      bad(await post('/record/main/people', '{"name": "x", '), 400, 12009);
      bad(await put('/record/main/people/1', '{bad json'), 400, 12009);
      bad(await post('/table/main/broken', '{"fields": ['), 400, 12009);
      bad(await post('/query/main/people/by_age?top=1', '{"find":'), 400, 12009);
      assert.equal(await count(), before);
      ok(await get('/table/main'));
    });

    it('docs: the body is parsed as JSON whatever the Content-Type says', async () => {
      const res = await call('POST', `${srv.http}${P}/record/main/people`, { body: '{"name":"Plain","age":5}', headers: { 'content-type': 'text/plain' } });
      const ids = ok(res)._ids;
      assert.equal(ok(await get(`/record/main/people/${ids[0]}`)).name, 'Plain');
    });

    it('docs: a DELETE with a JSON content type and an empty body works', async () => {
      const [id] = await insert('people', { name: 'E', age: 1 });
      const res = await call('DELETE', `${srv.http}${P}/record/main/people/${id}`, { headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, {});
    });

    it('docs: PUT/PATCH may carry _id equal to the path id; a different _id is 400', async () => {
      const [id] = await insert('people', { name: 'S', age: 1 });
      ok(await patch(`/record/main/people/${id}`, { _id: id, age: 2 }));
      assert.equal(ok(await get(`/record/main/people/${id}`)).age, 2);
      bad(await patch(`/record/main/people/${id}`, { _id: id + 1000, age: 3 }), 400);
      bad(await put(`/record/main/people/${id}`, { _id: id + 1000, name: 'S' }), 400);
      assert.equal(ok(await get(`/record/main/people/${id}`)).age, 2);
    });

    it('docs: PATCH with an array applies all (objects name records by _id), all or nothing', async () => {
      const [a, b] = await insert('people', [{ name: 'PA', age: 10 }, { name: 'PB', age: 20 }]);
      ok(await patch(`/record/main/people/${a}`, [{ age: 11 }, { _id: b, age: 21 }]));
      assert.equal(ok(await get(`/record/main/people/${a}`)).age, 11);
      assert.equal(ok(await get(`/record/main/people/${b}`)).age, 21);
      bad(await patch(`/record/main/people/${a}`, [{ age: 12 }, { _id: 999999, age: 22 }]), 404, 101);
      bad(await patch(`/record/main/people/${a}`, [{ age: 12 }, { _id: b, age: 'x' }]), 400, 4031);
      assert.equal(ok(await get(`/record/main/people/${a}`)).age, 11);
      assert.equal(ok(await get(`/record/main/people/${b}`)).age, 21);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('indexes', () => {
    before(async () => {
      await table('ix', [{ name: 'name', type: 'varchar', length: 20 }, { name: 'age', type: 'integer' }, { name: 'email', type: 'varchar', length: 40 }]);
    });

    it('GET index definition is {unique, fields: [{name, ascending}]} with defaults ascending true, unique false', async () => {
      await index('ix', 'by_age_name', { fields: [{ name: 'age', ascending: false }, { name: 'name' }] });
      assert.deepEqual(ok(await get('/index/main/ix/by_age_name')), { unique: false, fields: [{ name: 'age', ascending: false }, { name: 'name', ascending: true }] });
      await index('ix', 'u_email', { fields: [{ name: 'email', ascending: true }], unique: true });
      assert.deepEqual(ok(await get('/index/main/ix/u_email')), { unique: true, fields: [{ name: 'email', ascending: true }] });
    });

    it('GET index list is {_indexes: [...]} (the automatic id index is not listed)', async () => {
      const list = ok(await get('/index/main/ix'));
      assert.deepEqual(Object.keys(list), ['_indexes']);
      assert.deepEqual([...list._indexes].sort(), ['by_age_name', 'u_email']);
    });

    it('index errors: exists 400 4051, missing column 400 4014, missing fields 400, unknown table/db 404, unknown index 404 4045', async () => {
      bad(await post('/index/main/ix/by_age_name', { fields: [{ name: 'age' }] }), 400, 4051);
      bad(await post('/index/main/ix/by_nothing', { fields: [{ name: 'nosuch' }] }), 400, 4014);
      bad(await post('/index/main/ix/no_fields', {}), 400);
      bad(await post('/index/main/ix/empty_fields', { fields: [] }), 400);
      bad(await post('/index/main/nosuch/i', { fields: [{ name: 'a' }] }), 404, 4023);
      bad(await post('/index/nodb/ix/i', { fields: [{ name: 'age' }] }), 404, 4094);
      bad(await get('/index/main/ix/nosuch'), 404, 4045);
      bad(await del('/index/main/ix/nosuch'), 404, 4045);
      bad(await get('/index/main/nosuch'), 404, 4023);
      bad(await post('/query/main/ix/nosuch?top=1', all('age', 0)), 404, 4045);
      const list = ok(await get('/index/main/ix'))._indexes;
      assert.ok(!list.includes('by_nothing') && !list.includes('no_fields') && !list.includes('empty_fields'));
    });

    it('DELETE index → 200; it is gone from the list and GET is 404 4045', async () => {
      await index('ix', 'tmp', { fields: [{ name: 'name' }] });
      assert.deepEqual(ok(await del('/index/main/ix/tmp')), {});
      assert.ok(!ok(await get('/index/main/ix'))._indexes.includes('tmp'));
      bad(await get('/index/main/ix/tmp'), 404, 4045);
    });

    it('a unique index rejects a duplicate on create, PUT and PATCH with 400 (2) and stores nothing', async () => {
      const [a] = await insert('ix', { name: 'u1', email: 'one@x' });
      const [b] = await insert('ix', { name: 'u2', email: 'two@x' });
      bad(await post('/record/main/ix', { name: 'u3', email: 'one@x' }), 400, 2);
      bad(await post('/record/main/ix', [{ name: 'u4', email: 'four@x' }, { name: 'u5', email: 'four@x' }]), 400, 2);
      bad(await patch(`/record/main/ix/${b}`, { email: 'one@x' }), 400, 2);
      bad(await put(`/record/main/ix/${b}`, { name: 'u2', email: 'one@x' }), 400, 2);
      assert.equal(ok(await get(`/record/main/ix/${b}`)).email, 'two@x');
      const recs = await query('ix', 'u_email', { find: { email: { operator: '>=', value: '' } } });
      assert.deepEqual(recs.map((r) => r.email), ['one@x', 'two@x']);
      assert.deepEqual(recs.map((r) => r._id), [a, b]);
      // re-writing the same value on the same record is not a duplicate
      ok(await patch(`/record/main/ix/${a}`, { email: 'one@x', name: 'u1b' }));
    });

    it('an index created on a table with rows is built from them', async () => {
      await table('ix_rows', [{ name: 'n', type: 'integer' }, { name: 's', type: 'varchar', length: 10 }]);
      const ids = await insert('ix_rows', [{ n: 3, s: 'c' }, { n: 1, s: 'a' }, { n: 2, s: 'b' }]);
      await index('ix_rows', 'by_n', { fields: [{ name: 'n' }] });
      const recs = await query('ix_rows', 'by_n', all('n', 0));
      assert.deepEqual(recs, [{ _id: ids[1], n: 1, s: 'a' }, { _id: ids[2], n: 2, s: 'b' }, { _id: ids[0], n: 3, s: 'c' }]);
    });

    it('a unique index over duplicate rows fails with 400 (2) and leaves nothing behind', async () => {
      await table('ix_dup', [{ name: 'n', type: 'integer' }]);
      await insert('ix_dup', [{ n: 1 }, { n: 2 }, { n: 1 }]);
      bad(await post('/index/main/ix_dup/u_n', { fields: [{ name: 'n' }], unique: true }), 400, 2);
      bad(await get('/index/main/ix_dup/u_n'), 404, 4045);
      assert.deepEqual(ok(await get('/index/main/ix_dup')), { _indexes: [] });
      await insert('ix_dup', { n: 2 }); // no leftover uniqueness
      await index('ix_dup', 'u_n', { fields: [{ name: 'n' }] }); // the name is free
    });

    it('docs: a JSON-property segment {name, key, type, size} is shown and queried by key, column.key or column', async () => {
      await table('jdocs', [{ name: 'doc', type: 'json' }]);
      const ids = await insert('jdocs', [{ doc: { city: 'Paris' } }, { doc: { city: 'Lyon' } }, { doc: { other: 1 } }]);
      await index('jdocs', 'by_city', { fields: [{ name: 'doc', key: 'city', type: 'varchar', size: 20 }] });
      const def = ok(await get('/index/main/jdocs/by_city'));
      assert.equal(def.fields[0].name, 'doc');
      assert.equal(def.fields[0].key, 'city');
      assert.equal(def.fields[0].size, 20);
      for (const key of ['city', 'doc.city', 'doc']) {
        const recs = await query('jdocs', 'by_city', { find: { [key]: { operator: '=', value: 'Lyon' } } });
        assert.deepEqual(recs.map((r) => r._id), [ids[1]], key);
      }
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('queries: find', () => {
    let ids: number[] = [];
    const ns = (recs: any[]) => recs.map((r) => r.n);
    before(async () => {
      await table('nums', [{ name: 'n', type: 'integer' }, { name: 's', type: 'varchar', length: 10 }, { name: 'b', type: 'bit' }, { name: 'd', type: 'date' }]);
      await index('nums', 'by_n', { fields: [{ name: 'n' }] });
      await index('nums', 'by_n_desc', { fields: [{ name: 'n', ascending: false }] });
      await index('nums', 'by_s', { fields: [{ name: 's' }] });
      await index('nums', 'by_b', { fields: [{ name: 'b' }] });
      await index('nums', 'by_d', { fields: [{ name: 'd' }] });
      // inserted out of order so index order is visible
      const rows = [7, 3, 10, 1, 5, 9, 2, 8, 4, 6].map((n) => ({ n, s: `s${String(n).padStart(2, '0')}`, b: n % 2 === 0, d: `07/${n}/2024` }));
      ids = await insert('nums', rows);
    });

    it('result shape: {_records: [{_id, ...all columns}]}', async () => {
      const res = ok(await post('/query/main/nums/by_n?top=1', { find: { n: { operator: '=', value: 3 } } }));
      assert.deepEqual(Object.keys(res), ['_records']);
      assert.deepEqual(res._records, [{ _id: ids[1], n: 3, s: 's03', b: false, d: '07/03/2024' }]);
    });

    it('operators < <= = >= > (and == per docs)', async () => {
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '<', value: 3 } } })), [1, 2]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '<=', value: 3 } } })), [1, 2, 3]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '=', value: 3 } } })), [3]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '==', value: 3 } } })), [3]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '>=', value: 8 } } })), [8, 9, 10]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '>', value: 8 } } })), [9, 10]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '=', value: 42 } } })), []);
    });

    it('between with each bound pair, and with a single bound', async () => {
      const q = (cond: object) => query('nums', 'by_n', { find: { n: { operator: 'between', ...cond } } }).then(ns);
      assert.deepEqual(await q({ lowervalue: 3, uppervalue: 6 }), [3, 4, 5, 6]);
      assert.deepEqual(await q({ lowervalue: 3, excludeuppervalue: 6 }), [3, 4, 5]);
      assert.deepEqual(await q({ excludelowervalue: 3, uppervalue: 6 }), [4, 5, 6]);
      assert.deepEqual(await q({ excludelowervalue: 3, excludeuppervalue: 6 }), [4, 5]);
      assert.deepEqual(await q({ lowervalue: 8 }), [8, 9, 10]);
      assert.deepEqual(await q({ excludelowervalue: 8 }), [9, 10]);
      assert.deepEqual(await q({ uppervalue: 2 }), [1, 2]);
      assert.deepEqual(await q({ excludeuppervalue: 3 }), [1, 2]);
      assert.deepEqual(await q({ lowervalue: 6, uppervalue: 3 }), []);
    });

    it('docs: BETWEEN in upper case; between with no bound is 400', async () => {
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: 'BETWEEN', lowervalue: 2, uppervalue: 3 } } })), [2, 3]);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: 'between' } } }), 400);
    });

    it('mutually exclusive bound pairs are 400 (4073)', async () => {
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: 'between', lowervalue: 1, excludelowervalue: 2, uppervalue: 5 } } }), 400, 4073);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: 'between', lowervalue: 1, uppervalue: 5, excludeuppervalue: 6 } } }), 400, 4073);
    });

    it('docs: another operator plus a bound on the other side; a second bound on the same side is 400', async () => {
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '>=', value: 3, excludeuppervalue: 6 } } })), [3, 4, 5]);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '<', value: 6, lowervalue: 4 } } })), [4, 5]);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: '>=', value: 3, lowervalue: 5 } } }), 400);
    });

    it('bad find bodies: value missing (12025), unknown operator, wrong value type (4031), wrong key (4073), find+advanced_find, neither', async () => {
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: '<' } } }), 400, 12025);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { value: 3 } } }), 400);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: '~', value: 3 } } }), 400);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: '=', value: 'abc' } } }), 400, 4031);
      bad(await post('/query/main/nums/by_n?top=10', { find: { s: { operator: '=', value: 's01' } } }), 400, 4073);
      bad(await post('/query/main/nums/by_n?top=10', { find: { n: { operator: '=', value: 1 }, s: { operator: '=', value: 's01' } } }), 400);
      bad(await post('/query/main/nums/by_n?top=10', { ...all('n', 1), advanced_find: { find_set: { length: 4, fields: { n: 1 } } } }), 400, 4073);
      bad(await post('/query/main/nums/by_n?top=10', { reverse: true }), 400, 4073);
      bad(await post('/query/main/nums/by_n?top=10', all('n', 1), null), 401);
      bad(await post('/query/main/nums/by_n?top=10', { ...all('n', 1), revers: true }), 400, undefined, /revers/);
    });

    it('top is required and ≥ 1; skip ≥ 0', async () => {
      for (const qs of ['', 'top=0', 'top=-1', 'top=abc', 'top=1.5', 'top=1000001', 'top=5&skip=-1', 'top=5&skip=x']) {
        bad(await post(`/query/main/nums/by_n${qs ? `?${qs}` : ''}`, all('n', 1)), 400, undefined);
      }
    });

    it('top, skip and reverse: index order, then reverse, then skip, then top', async () => {
      assert.deepEqual(ns(await query('nums', 'by_n', all('n', 1), 'top=3')), [1, 2, 3]);
      assert.deepEqual(ns(await query('nums', 'by_n', all('n', 1), 'top=3&skip=2')), [3, 4, 5]);
      assert.deepEqual(ns(await query('nums', 'by_n', { ...all('n', 1), reverse: true }, 'top=3')), [10, 9, 8]);
      assert.deepEqual(ns(await query('nums', 'by_n', { ...all('n', 4), reverse: true }, 'top=2&skip=1')), [9, 8]);
      assert.deepEqual(ns(await query('nums', 'by_n', { ...all('n', 4), reverse: false }, 'top=2&skip=0')), [4, 5]);
      assert.deepEqual(ns(await query('nums', 'by_n', all('n', 1), 'top=3&skip=100')), []);
      assert.deepEqual(ns(await query('nums', 'by_n', { find: { n: { operator: '<', value: 5 } }, reverse: true }, 'top=10')), [4, 3, 2, 1]);
    });

    it('select returns _id plus only the named columns; an unknown column is 400 4014', async () => {
      const recs = await query('nums', 'by_n', { ...all('n', 9), select: ['s'] });
      assert.deepEqual(recs, [{ _id: ids[5], s: 's09' }, { _id: ids[2], s: 's10' }]);
      bad(await post('/query/main/nums/by_n?top=10', { ...all('n', 9), select: ['nosuch'] }), 400, 4014);
    });

    it('a descending index: largest first; operators compare values (>= 7 → 10,9,8,7); between; reverse', async () => {
      assert.deepEqual(ns(await query('nums', 'by_n_desc', { find: { n: { operator: '>=', value: 7 } } })), [10, 9, 8, 7]);
      assert.deepEqual(ns(await query('nums', 'by_n_desc', { find: { n: { operator: '<', value: 4 } } })), [3, 2, 1]);
      assert.deepEqual(ns(await query('nums', 'by_n_desc', { find: { n: { operator: 'between', lowervalue: 3, excludeuppervalue: 6 } } })), [5, 4, 3]);
      assert.deepEqual(ns(await query('nums', 'by_n_desc', { find: { n: { operator: '>=', value: 7 } }, reverse: true })), [7, 8, 9, 10]);
      assert.deepEqual(ns(await query('nums', 'by_n_desc', { find: { n: { operator: '>=', value: 1 } } }, 'top=2&skip=1')), [9, 8]);
    });

    it('strings: prefix match with between lowervalue / excludeuppervalue', async () => {
      assert.deepEqual((await query('nums', 'by_s', { find: { s: { operator: 'between', lowervalue: 's0', excludeuppervalue: 's1' } } })).map((r) => r.s),
        ['s01', 's02', 's03', 's04', 's05', 's06', 's07', 's08', 's09']);
      assert.deepEqual((await query('nums', 'by_s', { find: { s: { operator: '>', value: 's08' } } })).map((r) => r.s), ['s09', 's10']);
    });

    it('booleans and REST dates as find values', async () => {
      assert.deepEqual(ns(await query('nums', 'by_b', { find: { b: { operator: '=', value: true } } })).sort((x, y) => x - y), [2, 4, 6, 8, 10]);
      assert.deepEqual(ns(await query('nums', 'by_d', { find: { d: { operator: '>=', value: '07/08/2024' } } })), [8, 9, 10]);
      assert.deepEqual(ns(await query('nums', 'by_d', { find: { d: { operator: 'between', lowervalue: '7/2/2024', uppervalue: '07/03/2024' } } })), [2, 3]);
    });

    it('unknown table 404 4023, unknown database 404 4094, unknown index 404 4045', async () => {
      bad(await post('/query/main/nosuch/by_n?top=1', all('n', 1)), 404, 4023);
      bad(await post('/query/nodb/nums/by_n?top=1', all('n', 1)), 404, 4094);
      bad(await post('/query/main/nums/nosuch?top=1', all('n', 1)), 404, 4045);
    });

    it('on a compound index, find bounds the first segment and results follow the full index order', async () => {
      await table('comp', [{ name: 'a', type: 'integer' }, { name: 'b', type: 'varchar', length: 5 }]);
      await index('comp', 'by_a_b', { fields: [{ name: 'a' }, { name: 'b', ascending: false }] });
      await insert('comp', [{ a: 2, b: 'x' }, { a: 1, b: 'a' }, { a: 2, b: 'z' }, { a: 1, b: 'c' }, { a: 3, b: 'm' }]);
      const recs = await query('comp', 'by_a_b', { find: { a: { operator: '<=', value: 2 } } });
      assert.deepEqual(recs.map((r) => `${r.a}${r.b}`), ['1c', '1a', '2z', '2x']);
      const eq = await query('comp', 'by_a_b', { find: { a: { operator: '=', value: 2 } }, reverse: true });
      assert.deepEqual(eq.map((r) => `${r.a}${r.b}`), ['2x', '2z']);
    });

    it('_id in query results is the record ID even when a table has a column named "_id" (or such a column is refused)', async () => {
      const created = await post('/table/main/col_id', { fields: [{ name: '_id', type: 'integer' }, { name: 'v', type: 'integer' }] });
      if (created.status !== 200) { bad(created, 400); return; }
      await index('col_id', 'by_v', { fields: [{ name: 'v' }] });
      const [recordId] = await insert('col_id', { _id: 500, v: 1 });
      const recs = await query('col_id', 'by_v', all('v', 0));
      assert.equal(recs.length, 1);
      assert.equal(recs[0]._id, recordId, `query result _id must address the record (GET /record/main/col_id/${recs[0]._id})`);
    });

    it('docs: the automatic id index id_pk can be queried by name', async () => {
      const recs = await query('nums', 'id_pk', { find: { id: { operator: '>=', value: ids[8] } } });
      assert.deepEqual(recs.map((r) => r._id), [ids[8], ids[9]]);
    });

    it('nulls sort before every value in an ascending segment', async () => {
      await table('nulls', [{ name: 'grp', type: 'integer' }, { name: 'n', type: 'integer' }]);
      await index('nulls', 'by_grp_n', { fields: [{ name: 'grp' }, { name: 'n' }] });
      await insert('nulls', [{ grp: 1, n: 5 }, { grp: 1, n: null }, { grp: 1, n: -3 }, { grp: 2, n: null }, { grp: 0, n: 1 }]);
      const eq = await query('nulls', 'by_grp_n', { find: { grp: { operator: '=', value: 1 } } });
      assert.deepEqual(eq.map((r) => r.n), [null, -3, 5]);
      const set = await query('nulls', 'by_grp_n', { advanced_find: { find_set: { length: 4, fields: { grp: 1 } } } });
      assert.deepEqual(set.map((r) => r.n), [null, -3, 5]);
      const allRows = await query('nulls', 'by_grp_n', { find: { grp: { operator: '>=', value: 0 } } });
      assert.deepEqual(allRows.map((r) => [r.grp, r.n]), [[0, 1], [1, null], [1, -3], [1, 5], [2, null]]);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('queries: filter', () => {
    let ids: number[] = [];
    const f = async (filter: string) => (await query('flt', 'by_n', { ...all('n', 0), filter })).map((r) => r.n);
    before(async () => {
      await table('flt', [{ name: 'n', type: 'integer' }, { name: 's', type: 'varchar', length: 20 }, { name: 'b', type: 'bit' }, { name: 'x', type: 'integer' }]);
      await index('flt', 'by_n', { fields: [{ name: 'n' }] });
      ids = await insert('flt', [
        { n: 1, s: 'alpha', b: true, x: null },
        { n: 2, s: "bet'a", b: false, x: 5 },
        { n: 3, s: 'gam"ma', b: true, x: 10 },
        { n: 4, s: 'delta', b: false, x: null },
      ]);
    });

    it('comparison operators == != < <= > >= and = <>', async () => {
      assert.deepEqual(await f('n == 2'), [2]);
      assert.deepEqual(await f('n = 2'), [2]);
      assert.deepEqual(await f('n != 2'), [1, 3, 4]);
      assert.deepEqual(await f('n <> 2'), [1, 3, 4]);
      assert.deepEqual(await f('n < 3'), [1, 2]);
      assert.deepEqual(await f('n <= 3'), [1, 2, 3]);
      assert.deepEqual(await f('n > 3'), [4]);
      assert.deepEqual(await f('n >= 3'), [3, 4]);
      assert.deepEqual(await f('x > 4'), [2, 3]);
    });

    it('&& || ! and and/or/not (any case), with parentheses and precedence', async () => {
      assert.deepEqual(await f('n > 1 && n < 4'), [2, 3]);
      assert.deepEqual(await f('n > 1 and n < 4'), [2, 3]);
      assert.deepEqual(await f('n == 1 || n == 4'), [1, 4]);
      assert.deepEqual(await f('n = 1 or n = 4'), [1, 4]);
      assert.deepEqual(await f('n = 1 OR n = 4'), [1, 4]);
      assert.deepEqual(await f('!(n == 1)'), [2, 3, 4]);
      assert.deepEqual(await f('not (n == 1)'), [2, 3, 4]);
      assert.deepEqual(await f('NOT (n == 1) AND n < 3'), [2]);
      assert.deepEqual(await f('(n == 1 || n == 2) && b == false'), [2]);
      assert.deepEqual(await f('n == 1 || n == 2 && b == false'), [1, 2]);
      assert.deepEqual(await f('n == 1 || (n == 2 && b == true)'), [1]);
      assert.deepEqual(await f('((n >= 2))'), [2, 3, 4]);
    });

    it('string literals in double and single quotes (with the other quote inside)', async () => {
      assert.deepEqual(await f('s == "alpha"'), [1]);
      assert.deepEqual(await f("s == 'alpha'"), [1]);
      assert.deepEqual(await f('s == "bet\'a"'), [2]);
      assert.deepEqual(await f("s == 'gam\"ma'"), [3]);
      assert.deepEqual(await f('s != "alpha" and s != \'delta\''), [2, 3]);
    });

    it('null, true and false literals', async () => {
      assert.deepEqual(await f('x == null'), [1, 4]);
      assert.deepEqual(await f('x != null'), [2, 3]);
      assert.deepEqual(await f('b == true'), [1, 3]);
      assert.deepEqual(await f('b == false'), [2, 4]);
      assert.deepEqual(await f('b = TRUE'), [1, 3]);
      assert.deepEqual(await f('b'), [1, 3]);
      assert.deepEqual(await f('!b'), [2, 4]);
    });

    it('filter combines with find, reverse, select, skip and top', async () => {
      const recs = await query('flt', 'by_n', { find: { n: { operator: '>=', value: 2 } }, filter: 'b == false', reverse: true, select: ['s'] }, 'top=1&skip=0');
      assert.deepEqual(recs, [{ _id: ids[3], s: 'delta' }]);
      const skipped = await query('flt', 'by_n', { find: { n: { operator: '>=', value: 1 } }, filter: 'b == true' }, 'top=5&skip=1');
      assert.deepEqual(skipped.map((r) => r.n), [3]);
    });

    it('syntax errors are 400 4072 with the (1-based) position in the message', async () => {
      const cases: Array<[string, number]> = [
        ['n == 1 & n == 2', 8],
        ['n == ', 6],
        ['(n == 1', 8],
        ['n == 1)', 7],
        ["s == 'abc", 6],
        ['== 1', 1],
      ];
      for (const [filter, pos] of cases) {
        const res = await post('/query/main/flt/by_n?top=10', { ...all('n', 0), filter });
        bad(res, 400, 4072, /position/);
        const m = /position (\d+)/.exec(res.json.errorMessage);
        assert.ok(m, res.text);
        // the position points at or near the error (allow the end-of-input form to be off by one)
        assert.ok(Math.abs(Number(m![1]) - pos) <= 1, `filter ${JSON.stringify(filter)}: expected position ≈${pos}, got ${res.json.errorMessage}`);
      }
      // an empty filter is either "no filter" (the spec's default) or a 400; never a crash
      const empty = await post('/query/main/flt/by_n?top=10', { ...all('n', 0), filter: '' });
      assert.ok(empty.status === 200 || empty.status === 400, empty.text);
    });

    it('a filter may name any column, including one called "constructor"', async () => {
      await table('flt_kw', [{ name: 'constructor', type: 'integer' }, { name: 'n', type: 'integer' }]);
      await index('flt_kw', 'by_n', { fields: [{ name: 'n' }] });
      const ids = await insert('flt_kw', [{ constructor: 1, n: 1 }, { constructor: 5, n: 2 }]);
      // the column itself is fine everywhere else: records, indexes, select
      assert.deepEqual(ok(await get(`/record/main/flt_kw/${ids[1]}`)), { constructor: 5, n: 2 });
      const res = await post('/query/main/flt_kw/by_n?top=10', { ...all('n', 0), filter: 'constructor == 5' });
      assert.deepEqual(ok(res)._records, [{ _id: ids[1], constructor: 5, n: 2 }]);
    });

    it('an unknown column in a filter is 400 with its position', async () => {
      const res = await post('/query/main/flt/by_n?top=10', { ...all('n', 0), filter: 'n == 1 || zz == 1' });
      bad(res, 400, undefined, /position 11/);
    });

    it('filter is not eval: JavaScript-looking input is a syntax error', async () => {
      bad(await post('/query/main/flt/by_n?top=10', { ...all('n', 0), filter: 'process.exit(1)' }), 400);
      bad(await post('/query/main/flt/by_n?top=10', { ...all('n', 0), filter: 'n == 1; n == 2' }), 400);
      ok(await get('/table/main'));
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('queries: advanced_find', () => {
    const cities = (recs: any[]) => recs.map((r) => `${r.city}/${r.age}`);
    before(async () => {
      await table('cities', [{ name: 'city', type: 'varchar', length: 10 }, { name: 'age', type: 'integer' }]);
      await index('cities', 'by_city_age', { fields: [{ name: 'city' }, { name: 'age' }] });
      await index('cities', 'by_city_agedesc', { fields: [{ name: 'city' }, { name: 'age', ascending: false }] });
      const ids = await insert('cities', [
        { city: 'Bonn', age: 41 }, { city: 'Rome', age: 30 }, { city: 'Bonnie', age: 40 }, { city: 'Bonn', age: 40 },
        { city: 'Riga', age: 20 }, { city: 'Oslo', age: 30 }, { city: 'Oslo', age: 35 }, { city: 'Bonn', age: -5 },
      ]);
      assert.equal(ids.length, 8);
    });

    it('find_set: length counts bytes; varchar(10) is padded to 40 bytes (4 per character), integer is 4 bytes', async () => {
      const fs = (length: number, fields: object) => query('cities', 'by_city_age', { advanced_find: { find_set: { length, fields } } }).then(cities);
      assert.deepEqual(await fs(1, { city: 'R' }), ['Riga/20', 'Rome/30']);
      assert.deepEqual(await fs(4, { city: 'Bonn' }), ['Bonn/-5', 'Bonn/40', 'Bonn/41', 'Bonnie/40']);
      assert.deepEqual(await fs(10, { city: 'Bonn' }), ['Bonn/-5', 'Bonn/40', 'Bonn/41']);
      assert.deepEqual(await fs(40, { city: 'Bonn', age: 40 }), ['Bonn/-5', 'Bonn/40', 'Bonn/41']);
      assert.deepEqual(await fs(44, { city: 'Bonn', age: 40 }), ['Bonn/40']);
      assert.deepEqual(await fs(44, { age: 30, city: 'Oslo' }), ['Oslo/30']);
      assert.deepEqual(await fs(44, { city: 'Bonn', age: -5 }), ['Bonn/-5']);
      assert.deepEqual(await fs(1, { city: 'Z' }), []);
    });

    it('find_set: length longer than the key is 400; a field not in the index is 400; length and fields are required', async () => {
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_set: { length: 45, fields: { city: 'Bonn', age: 40 } } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_set: { length: 1, fields: { nosuch: 'B' } } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_set: { fields: { city: 'B' } } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_set: { length: 1 } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: {} }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_set: { length: 1, fields: { city: 'B' } }, find_record: { operator: '=', fields: { city: 'Bonn', age: 40 } } } }), 400);
    });

    it('docs: find_set fields with a gap (a later segment without the earlier one) is 400', async () => {
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_set: { length: 4, fields: { age: 40 } } } }), 400);
    });

    it('find_set with reverse, skip, top and select', async () => {
      const recs = await query('cities', 'by_city_age', { advanced_find: { find_set: { length: 4, fields: { city: 'Bonn' } } }, reverse: true, select: ['age'] }, 'top=2&skip=1');
      assert.deepEqual(recs.map((r) => r.age), [41, 40]);
      assert.deepEqual(Object.keys(recs[0]).sort(), ['_id', 'age']);
    });

    it('find_set on a descending second segment returns that segment largest first', async () => {
      const recs = await query('cities', 'by_city_agedesc', { advanced_find: { find_set: { length: 10, fields: { city: 'Bonn' } } } });
      assert.deepEqual(cities(recs), ['Bonn/41', 'Bonn/40', 'Bonn/-5']);
    });

    it('find_record with every operator compares the whole key in index order', async () => {
      const fr = (operator: string, fields: object) => query('cities', 'by_city_age', { advanced_find: { find_record: { operator, fields } } }).then(cities);
      assert.deepEqual(await fr('=', { city: 'Bonn', age: 40 }), ['Bonn/40']);
      assert.deepEqual(await fr('>', { city: 'Oslo', age: 30 }), ['Oslo/35', 'Riga/20', 'Rome/30']);
      assert.deepEqual(await fr('>=', { city: 'Oslo', age: 30 }), ['Oslo/30', 'Oslo/35', 'Riga/20', 'Rome/30']);
      assert.deepEqual(await fr('<', { city: 'Bonn', age: 41 }), ['Bonn/-5', 'Bonn/40']);
      assert.deepEqual(await fr('<=', { city: 'Bonn', age: 41 }), ['Bonn/-5', 'Bonn/40', 'Bonn/41']);
      assert.deepEqual(await fr('=', { city: 'Bonn', age: 42 }), []);
    });

    it('find_record: a missing segment, a missing operator or an unknown operator is 400', async () => {
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_record: { operator: '=', fields: { city: 'Bonn' } } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_record: { fields: { city: 'Bonn', age: 40 } } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_record: { operator: 'like', fields: { city: 'Bonn', age: 40 } } } }), 400);
      bad(await post('/query/main/cities/by_city_age?top=10', { advanced_find: { find_record: { operator: '=' } } }), 400);
    });

    it('docs: find_record on (city ASC, age DESC) ">" (Oslo, 30) returns the records after it in index order', async () => {
      const recs = await query('cities', 'by_city_agedesc', { advanced_find: { find_record: { operator: '>', fields: { city: 'Oslo', age: 30 } } } });
      assert.deepEqual(cities(recs), ['Riga/20', 'Rome/30']);
      const ge = await query('cities', 'by_city_agedesc', { advanced_find: { find_record: { operator: '>=', fields: { city: 'Oslo', age: 35 } } } });
      assert.deepEqual(cities(ge), ['Oslo/35', 'Oslo/30', 'Riga/20', 'Rome/30']);
    });

    it('find_set byte widths of tinyint (1), smallint (2), integer (4), bigint (8)', async () => {
      await table('widths', [{ name: 't', type: 'tinyint' }, { name: 'sm', type: 'smallint' }, { name: 'i', type: 'integer' }, { name: 'bg', type: 'bigint' }, { name: 'name', type: 'varchar', length: 6 }]);
      for (const col of ['t', 'sm', 'i', 'bg']) await index('widths', `by_${col}`, { fields: [{ name: col }, { name: 'name' }] });
      await insert('widths', [
        { t: 5, sm: 5, i: 5, bg: 5, name: 'abc' }, { t: 5, sm: 5, i: 5, bg: 5, name: 'abd' }, { t: 5, sm: 5, i: 5, bg: 5, name: 'xyz' },
        { t: 6, sm: 6, i: 6, bg: 6, name: 'abc' }, { t: -5, sm: -5, i: -5, bg: -5, name: 'abc' },
      ]);
      const widths: Record<string, number> = { t: 1, sm: 2, i: 4, bg: 8 };
      for (const [col, w] of Object.entries(widths)) {
        const fs = (length: number, fields: object) => query('widths', `by_${col}`, { advanced_find: { find_set: { length, fields } } });
        assert.deepEqual((await fs(w + 2, { [col]: 5, name: 'ab' })).map((r) => r.name), ['abc', 'abd'], `${col}: length ${w}+2`);
        assert.deepEqual((await fs(w, { [col]: 5 })).map((r) => r.name), ['abc', 'abd', 'xyz'], `${col}: length ${w}`);
        assert.deepEqual((await fs(w + 24, { [col]: 5, name: 'abc' })).map((r) => r.name), ['abc'], `${col}: whole key (varchar(6) holds 24 bytes)`);
        assert.deepEqual((await fs(w, { [col]: -5 })).map((r) => r[col]), [-5], `${col}: negative`);
        bad(await post(`/query/main/widths/by_${col}?top=10`, { advanced_find: { find_set: { length: w + 25, fields: { [col]: 5, name: 'abc' } } } }), 400);
      }
      // signed order: negatives first
      const allT = await query('widths', 'by_t', { find: { t: { operator: '>=', value: -128 } } });
      assert.deepEqual(allT.map((r) => r.t), [-5, 5, 5, 5, 6]);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('authentication, roles, transport, limits', () => {
    it('no credentials → 401 with WWW-Authenticate: Basic and an error body', async () => {
      const res = await get('/table/main', null);
      bad(res, 401, 12033);
      assert.match(String(res.headers['www-authenticate']), /^Basic/i);
    });

    it('wrong password / unknown account → 401 on every kind of route', async () => {
      bad(await get('/table/main', ['admin', 'wrong']), 401);
      bad(await get('/table/main', ['nobody', 'ADMIN']), 401);
      bad(await post('/record/main/people', { name: 'x' }, ['admin', 'wrong']), 401);
      bad(await post('/query/main/nums/by_n?top=1', all('n', 1), null), 401);
      bad(await get('/openapi', null), 401);
      const res = await call('GET', `${srv.http}${P}/table/main`, { auth: null, headers: { authorization: 'Bearer abc' } });
      bad(res, 401);
      assert.match(String(res.headers['www-authenticate']), /Basic/i);
    });

    it('account names are case-insensitive', async () => {
      ok(await get('/table/main', ['ADMIN', 'ADMIN']));
    });

    it('a reader role may list, read and query but gets 403 (12030) on writes, which store nothing', async () => {
      const token = await actionSession();
      await action(token, 'admin', 'createAccount', { username: 'reader1', password: 'secret99', roles: ['reader'] });
      const auth: Auth = ['reader1', 'secret99'];
      await table('roles_t', [{ name: 'n', type: 'integer' }]);
      await index('roles_t', 'by_n', { fields: [{ name: 'n' }] });
      const [id] = await insert('roles_t', { n: 1 });
      ok(await get('/table/main', auth));
      ok(await get('/index/main/roles_t', auth));
      ok(await get('/index/main/roles_t/by_n', auth));
      assert.deepEqual(ok(await get(`/record/main/roles_t/${id}`, auth)), { n: 1 });
      assert.equal(ok(await post('/query/main/roles_t/by_n?top=10', all('n', 0), auth))._records.length, 1);
      bad(await post('/record/main/roles_t', { n: 2 }, auth), 403, 12030);
      bad(await put(`/record/main/roles_t/${id}`, { n: 3 }, auth), 403, 12030);
      bad(await patch(`/record/main/roles_t/${id}`, { n: 3 }, auth), 403, 12030);
      bad(await del(`/record/main/roles_t/${id}`, auth), 403, 12030);
      bad(await post('/table/main/roles_t2', { fields: [{ name: 'a', type: 'integer' }] }, auth), 403, 12030);
      bad(await del('/table/main/roles_t', auth), 403, 12030);
      bad(await post('/index/main/roles_t/i2', { fields: [{ name: 'n' }] }, auth), 403, 12030);
      bad(await del('/index/main/roles_t/by_n', auth), 403, 12030);
      assert.deepEqual(ok(await get(`/record/main/roles_t/${id}`)), { n: 1 });
      assert.equal((await query('roles_t', 'by_n', all('n', 0))).length, 1);
      ok(await get('/index/main/roles_t/by_n'));
      assert.ok(!(ok(await get('/table/main'))._tables as string[]).includes('roles_t2'));
    });

    it('HTTPS (self-signed) serves the same interface', async () => {
      assert.ok(srv.https, 'no HTTPS listener');
      const list = ok(await call('GET', `${srv.https}${P}/table/main`));
      assert.ok(Array.isArray(list._tables));
      const res = await call('POST', `${srv.https}${P}/record/main/people`, { body: { name: 'Tls', age: 9 } });
      const [id] = ok(res)._ids;
      assert.equal(ok(await get(`/record/main/people/${id}`)).name, 'Tls');
      bad(await call('GET', `${srv.https}${P}/table/main`, { auth: null }), 401);
    });

    it('GET /openapi answers an OpenAPI 3 document', async () => {
      const doc = ok(await get('/openapi'));
      assert.match(String(doc.openapi), /^3\./);
      assert.ok(doc.paths && Object.keys(doc.paths).length >= 8);
    });

    it('a body over body_limit_bytes is 413 (12028), stores nothing, and the server keeps serving', async () => {
      const small = await startServer({ body_limit_bytes: 2048 });
      try {
        const B = small.http;
        ok(await call('POST', `${B}${P}/table/main/big`, { body: { fields: [{ name: 's', type: 'lvarchar' }, { name: 'k', type: 'integer' }] } }));
        ok(await call('POST', `${B}${P}/index/main/big/by_k`, { body: { fields: [{ name: 'k' }] } }));
        const res = await call('POST', `${B}${P}/record/main/big`, { body: { k: 1, s: 'x'.repeat(5000) } });
        bad(res, 413, 12028);
        const q = ok(await call('POST', `${B}${P}/query/main/big/by_k?top=10`, { body: all('k', 0) }));
        assert.deepEqual(q._records, []);
        ok(await call('POST', `${B}${P}/record/main/big`, { body: { k: 2, s: 'small' } }));
      } finally {
        await small.close();
      }
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('durability', () => {
    it('the record-ID counter survives a restart: IDs of deleted records are not handed out again', async () => {
      const dataDir = tempDataDir('engine-acc-ids');
      let s = await startServer({ data_dir: dataDir });
      const issued: number[] = [];
      try {
        ok(await call('POST', `${s.http}${P}/table/main/ids`, { body: { fields: [{ name: 'a', type: 'integer' }] } }));
        issued.push(...ok(await call('POST', `${s.http}${P}/record/main/ids`, { body: [{ a: 1 }, { a: 2 }] }))._ids);
        ok(await call('DELETE', `${s.http}${P}/record/main/ids/${issued[1]}`));
        // while running, the deleted ID is not re-used
        const [again] = ok(await call('POST', `${s.http}${P}/record/main/ids`, { body: { a: 3 } }))._ids;
        assert.ok(!issued.includes(again), `re-used ${again}`);
        issued.push(again);
        ok(await call('DELETE', `${s.http}${P}/record/main/ids/${again}`));
      } finally {
        await s.close({ keepData: true });
      }
      s = await startServer({ data_dir: dataDir });
      try {
        const [fresh] = ok(await call('POST', `${s.http}${P}/record/main/ids`, { body: { a: 4 } }))._ids;
        assert.ok(!issued.includes(fresh), `record ID ${fresh} was issued (and deleted) before the restart and is handed out again after it; issued before: ${issued.join(', ')}`);
      } finally {
        await s.close();
      }
    });

    it('tables, indexes and records (after PUT/PATCH/DELETE) survive a restart; new ids do not collide', async () => {
      const dataDir = tempDataDir('engine-acc');
      let s = await startServer({ data_dir: dataDir });
      const B = () => `${s.http}${P}`;
      let ids: number[];
      try {
        ok(await call('POST', `${B()}/table/main/dur`, { body: { fields: [{ name: 'name', type: 'varchar', length: 20 }, { name: 'n', type: 'integer' }, { name: 'when', type: 'timestamp' }, { name: 'bin', type: 'binary', length: 3 }] } }));
        ok(await call('POST', `${B()}/index/main/dur/by_n`, { body: { fields: [{ name: 'n', ascending: false }], unique: true } }));
        ids = ok(await call('POST', `${B()}/record/main/dur`, { body: [{ name: 'a', n: 1, when: '01/02/2024 3:04:05.678', bin: '01' }, { name: 'b', n: 2 }, { name: 'c', n: 3 }] }))._ids;
        ok(await call('PATCH', `${B()}/record/main/dur/${ids[0]}`, { body: { name: 'a2' } }));
        ok(await call('PUT', `${B()}/record/main/dur/${ids[1]}`, { body: { name: 'b2', n: 20 } }));
        ok(await call('DELETE', `${B()}/record/main/dur/${ids[2]}`));
      } finally {
        await s.close({ keepData: true });
      }
      s = await startServer({ data_dir: dataDir });
      try {
        assert.ok(ok(await call('GET', `${B()}/table/main`))._tables.includes('dur'));
        assert.deepEqual(ok(await call('GET', `${B()}/index/main/dur`)), { _indexes: ['by_n'] });
        assert.deepEqual(ok(await call('GET', `${B()}/index/main/dur/by_n`)), { unique: true, fields: [{ name: 'n', ascending: false }] });
        const r0 = ok(await call('GET', `${B()}/record/main/dur/${ids![0]}`));
        assert.equal(r0.name, 'a2');
        assert.match(r0.when, /^01\/02\/2024 0?3:04:05\.678$/);
        assert.equal(String(r0.bin).toUpperCase(), '010000');
        assert.deepEqual(ok(await call('GET', `${B()}/record/main/dur/${ids![1]}`)), { name: 'b2', n: 20, when: null, bin: null });
        bad(await call('GET', `${B()}/record/main/dur/${ids![2]}`), 404, 101);
        const recs = ok(await call('POST', `${B()}/query/main/dur/by_n?top=10`, { body: all('n', 0) }))._records;
        assert.deepEqual(recs.map((r: any) => r.n), [20, 1]);
        bad(await call('POST', `${B()}/record/main/dur`, { body: { name: 'dup', n: 20 } }), 400, 2);
        const [fresh] = ok(await call('POST', `${B()}/record/main/dur`, { body: { name: 'd', n: 4 } }))._ids;
        assert.ok(!ids!.slice(0, 2).includes(fresh), 'a new record must not reuse a live id');
        assert.equal(ok(await call('GET', `${B()}/record/main/dur/${ids![0]}`)).name, 'a2');
      } finally {
        await s.close();
      }
    });
  });
});
