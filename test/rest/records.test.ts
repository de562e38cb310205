import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

describe('REST records', () => {
  let server: TestServer;
  let rest: RestClient;

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
    ok(await rest.post('/table/main/people', {
      fields: [
        { name: 'name', type: 'VARCHAR', length: 8 },
        { name: 'age', type: 'INTEGER', length: 4 },
        { name: 'city', type: 'varchar', length: 20 },
        { name: 'born', type: 'timestamp' },
        { name: 'day', type: 'date' },
        { name: 'tag', type: 'binary', length: 4 },
        { name: 'active', type: 'bit' },
      ],
    }));
    ok(await rest.post('/index/main/people/by_name', { fields: [{ name: 'name' }], unique: true }));
  });
  after(() => server.close());

  it('creates one record and reads its declared columns (unset ones null, no id)', async () => {
    assert.deepEqual(ok(await rest.post('/record/main/people', { name: 'Ann', age: 30 })), { _ids: [1] });
    assert.deepEqual(ok(await rest.get('/record/main/people/1')), {
      name: 'Ann', age: 30, city: null, born: null, day: null, tag: null, active: null,
    });
  });

  it('creates one record per array element, IDs in creation order', async () => {
    assert.deepEqual(ok(await rest.post('/record/main/people', [{ name: 'Bob', age: 40 }, { name: 'Cy', age: 50 }])), { _ids: [2, 3] });
    assert.equal(ok(await rest.get('/record/main/people/3')).name, 'Cy');
  });

  it('round-trips REST dates (MM/DD/CCYY h:mm:ss.ttt), hex binary and booleans', async () => {
    const [id] = ok(await rest.post('/record/main/people', {
      name: 'Dee', born: '7/4/2024 9:05:01.250', day: '12/31/1999', tag: 'ABCD', active: true,
    }))._ids;
    const record = ok(await rest.get(`/record/main/people/${id}`));
    assert.equal(record.born, '07/04/2024 09:05:01.250');
    assert.equal(record.day, '12/31/1999');
    assert.equal(record.tag, 'ABCD0000');
    assert.equal(record.active, true);
  });

  it('rejects an array with one bad element as a whole (all or nothing)', async () => {
    const before = ok(await rest.post('/record/main/people', { name: 'Mark' }))._ids[0] as number;
    fails(await rest.post('/record/main/people', [{ name: 'Eve', age: 1 }, { name: 'Fay', age: 'old' }]), 400, 4031, /age/);
    fails(await rest.post('/record/main/people', [{ name: 'Eve' }, { name: 'Fay', planet: 'x' }]), 400, 4014, /planet/);
    fails(await rest.post('/record/main/people', [{ name: 'Eve' }, { name: 'Ann' }]), 400, 2);
    fails(await rest.post('/record/main/people', [{ name: 'Eve' }, { name: 'Eve' }]), 400, 2);
    const after = ok(await rest.post('/record/main/people', { name: 'Mark2' }))._ids[0] as number;
    for (let id = before + 1; id < after; id++) fails(await rest.get(`/record/main/people/${id}`), 404, 101);
    const found = ok(await rest.post('/query/main/people/by_name?top=10', { find: { name: { operator: '=', value: 'Eve' } } }));
    assert.deepEqual(found._records, []);
  });

  it('rejects bad values with 400 and stores nothing', async () => {
    fails(await rest.post('/record/main/people', { name: 'Gus', age: 'forty' }), 400, 4031, /age/);
    fails(await rest.post('/record/main/people', { name: 'Gus', age: 2 ** 31 }), 400, 4031, /age/);
    fails(await rest.post('/record/main/people', { name: 'Gus', age: 1.5 }), 400, 4031, /age/);
    fails(await rest.post('/record/main/people', { name: 'Gustavus the Great' }), 400, 4031, /name/);
    fails(await rest.post('/record/main/people', { name: 'Gus', planet: 'Mars' }), 400, 4014, /planet/);
    fails(await rest.post('/record/main/people', { name: 'Gus', born: '2024/07/04' }), 400, 4031, /born/);
    fails(await rest.post('/record/main/people', { name: 'Gus', tag: 'XYZ' }), 400, 4031, /tag/);
    fails(await rest.post('/record/main/people', { name: 'Gus', id: 77 }), 400);
    fails(await rest.post('/record/main/people', '{"name": "Gus"'), 400, 12009);
    fails(await rest.post('/record/main/people', []), 400);
    fails(await rest.post('/record/main/people', 'true'), 400);
    fails(await rest.post('/record/main/people', [1, 2]), 400);
    const found = ok(await rest.post('/query/main/people/by_name?top=10', { find: { name: { operator: '=', value: 'Gus' } } }));
    assert.deepEqual(found._records, []);
  });

  it('a body that is not JSON, sent as any content type, is refused with 400 12009 saying where the JSON breaks, not what the content type was', async () => {
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const answer = await fetch(`${server.http}/engine/api/v1/record/main/people`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('admin:ADMIN').toString('base64')}`, 'content-type': type },
        body: '{bad',
      });
      const json = await answer.json() as { errorCode: number; errorMessage: string };
      assert.equal(answer.status, 400, type);
      assert.equal(json.errorCode, 12009, type);
      assert.match(json.errorMessage, /not valid JSON: .*position 1/, type);
      assert.doesNotMatch(json.errorMessage, /content-type/i, type);
    }
  });

  it('PUT replaces the record: omitted columns become null', async () => {
    const [id] = ok(await rest.post('/record/main/people', { name: 'Hal', age: 20, city: 'Oslo' }))._ids;
    assert.deepEqual(ok(await rest.put(`/record/main/people/${id}`, { name: 'Hal', age: 21 })), {});
    const record = ok(await rest.get(`/record/main/people/${id}`));
    assert.equal(record.age, 21);
    assert.equal(record.city, null);
  });

  it('PATCH changes only the supplied columns', async () => {
    const [id] = ok(await rest.post('/record/main/people', { name: 'Ida', age: 20, city: 'Rome' }))._ids;
    assert.deepEqual(ok(await rest.patch(`/record/main/people/${id}`, { age: 22 })), {});
    const record = ok(await rest.get(`/record/main/people/${id}`));
    assert.deepEqual([record.name, record.age, record.city], ['Ida', 22, 'Rome']);
    ok(await rest.patch(`/record/main/people/${id}`, { city: null }));
    assert.equal(ok(await rest.get(`/record/main/people/${id}`)).city, null);
  });

  it('PATCH with an array changes several records by _id, all or nothing', async () => {
    const [a, b] = ok(await rest.post('/record/main/people', [{ name: 'Jo', age: 1 }, { name: 'Kim', age: 2 }]))._ids;
    ok(await rest.patch(`/record/main/people/${a}`, [{ age: 11 }, { _id: b, age: 12 }]));
    assert.equal(ok(await rest.get(`/record/main/people/${a}`)).age, 11);
    assert.equal(ok(await rest.get(`/record/main/people/${b}`)).age, 12);
    fails(await rest.patch(`/record/main/people/${a}`, [{ age: 21 }, { _id: b, age: 'x' }]), 400, 4031);
    fails(await rest.patch(`/record/main/people/${a}`, [{ age: 21 }, { _id: 99999, age: 22 }]), 404, 101);
    assert.equal(ok(await rest.get(`/record/main/people/${a}`)).age, 11);
  });

  it('accepts an _id equal to the path id in PUT/PATCH (round-tripped query results) and refuses another', async () => {
    const [id] = ok(await rest.post('/record/main/people', { name: 'Lu', age: 5 }))._ids;
    ok(await rest.patch(`/record/main/people/${id}`, { _id: id, age: 6 }));
    assert.equal(ok(await rest.get(`/record/main/people/${id}`)).age, 6);
    fails(await rest.put(`/record/main/people/${id}`, { _id: id + 1, name: 'Lu' }), 400, 12012, /_id/);
  });

  it('bad PUT/PATCH values leave the record untouched', async () => {
    const [id] = ok(await rest.post('/record/main/people', { name: 'Max', age: 30, city: 'Bonn' }))._ids;
    fails(await rest.put(`/record/main/people/${id}`, { name: 'Max', age: 'x' }), 400, 4031);
    fails(await rest.patch(`/record/main/people/${id}`, { city: 'A very long city name indeed' }), 400, 4031);
    fails(await rest.patch(`/record/main/people/${id}`, { planet: 'x' }), 400, 4014);
    fails(await rest.patch(`/record/main/people/${id}`, { name: 'Ann' }), 400, 2);
    fails(await rest.put(`/record/main/people/${id}`, '[1'), 400, 12009);
    const record = ok(await rest.get(`/record/main/people/${id}`));
    assert.deepEqual([record.name, record.age, record.city], ['Max', 30, 'Bonn']);
  });

  it('DELETE answers {} and the record is gone', async () => {
    const [id] = ok(await rest.post('/record/main/people', { name: 'Ned' }))._ids;
    assert.deepEqual(ok(await rest.del(`/record/main/people/${id}`)), {});
    fails(await rest.get(`/record/main/people/${id}`), 404, 101);
  });

  it('answers 404 (101) for a missing record on get, put, patch and delete', async () => {
    fails(await rest.get('/record/main/people/424242'), 404, 101);
    fails(await rest.put('/record/main/people/424242', { name: 'X' }), 404, 101);
    fails(await rest.patch('/record/main/people/424242', { name: 'X' }), 404, 101);
    fails(await rest.del('/record/main/people/424242'), 404, 101);
  });

  it('answers 400 for a non-numeric or negative id', async () => {
    for (const id of ['abc', '-1', '1.5', '0']) {
      fails(await rest.get(`/record/main/people/${id}`), 400, 12012, /id/);
      fails(await rest.put(`/record/main/people/${id}`, { name: 'X' }), 400, 12012);
      fails(await rest.patch(`/record/main/people/${id}`, { name: 'X' }), 400, 12012);
      fails(await rest.del(`/record/main/people/${id}`), 400, 12012);
    }
  });

  it('answers 404 for an unknown table or database', async () => {
    fails(await rest.post('/record/main/nothing', { a: 1 }), 404, 4023);
    fails(await rest.get('/record/main/nothing/1'), 404, 4023);
    fails(await rest.put('/record/nodb/people/1', { a: 1 }), 404, 4094);
    fails(await rest.del('/record/nodb/people/1'), 404, 4094);
  });

  it('shows id as a column when the table declares it, and takes supplied ids', async () => {
    ok(await rest.post('/table/main/loaded', { fields: [{ name: 'id', type: 'bigint', primaryKey: 1 }, { name: 'v', type: 'varchar', length: 10 }] }));
    assert.deepEqual(ok(await rest.post('/record/main/loaded', [{ id: 100, v: 'a' }, { v: 'b' }])), { _ids: [100, 101] });
    assert.deepEqual(ok(await rest.get('/record/main/loaded/100')), { id: 100, v: 'a' });
    assert.deepEqual(ok(await rest.get('/record/main/loaded/101')), { id: 101, v: 'b' });
    fails(await rest.post('/record/main/loaded', { id: 100, v: 'dup' }), 400);
  });

  it('reads a body sent with a non-JSON content type as JSON (curl -d), and ignores an empty DELETE body', async () => {
    const created = await call('POST', `${rest.base}/record/main/people`, {
      body: '{"name": "Oz"}', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const [id] = ok(created)._ids;
    assert.equal(ok(await rest.get(`/record/main/people/${id}`)).name, 'Oz');
    const deleted = await call('DELETE', `${rest.base}/record/main/people/${id}`, { headers: { 'content-type': 'application/json' } });
    assert.deepEqual(ok(deleted), {});
  });
});
