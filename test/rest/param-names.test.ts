/**
 * REST validation messages name the parameter as the client sent it: `top` (not the data
 * command's `limit`), the path's `db`, `advanced_find.find_set.length`, a body element `[0]._id`.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

describe('REST: validation messages name the parameter sent', function () {
  let server: TestServer;
  let rest: RestClient;

  before(async function () {
    server = await startRestServer();
    rest = restClient(server.http);
    ok(await rest.post('/table/main/people', { fields: [{ name: 'name', type: 'varchar', length: 20 }, { name: 'age', type: 'integer' }] }));
    ok(await rest.post('/index/main/people/by_name', { fields: [{ name: 'name' }] }));
    ok(await rest.post('/record/main/people', { name: 'Ann', age: 40 }));
  });
  after(async function () {
    await server?.close();
  });

  const byName = { find: { name: { operator: '>=', value: 'A' } } };

  /** The quoted parameter of an INVALID_PARAMETER / MISSING_PARAMETER message. */
  function paramOf(message: string): string {
    const match = /^(?:invalid value for|missing required parameter) "([^"]*)"/.exec(message);
    assert.ok(match, message);
    return match[1];
  }

  it('names ?top, whether the route or the query command refuses it', async function () {
    for (const top of ['0', '2000000', 'x']) {
      const result = await rest.post(`/query/main/people/by_name?top=${top}`, byName);
      fails(result, 400, 12012);
      assert.equal(paramOf(result.json.errorMessage), 'top', result.text);
    }
    const missing = await rest.post('/query/main/people/by_name', byName);
    fails(missing, 400, 12025);
    assert.equal(paramOf(missing.json.errorMessage), 'top');
  });

  it('names ?skip', async function () {
    const result = await rest.post('/query/main/people/by_name?top=1&skip=-1', byName);
    fails(result, 400, 12012);
    assert.equal(paramOf(result.json.errorMessage), 'skip');
  });

  it('names the path\'s {db}, {table} and {index}', async function () {
    const longDb = await rest.post(`/record/${'d'.repeat(65)}/people`, { name: 'Bo' });
    fails(longDb, 400, 12012);
    assert.equal(paramOf(longDb.json.errorMessage), 'db');
    const controlDb = await rest.post('/table/a%01b/t', { fields: [{ name: 'v', type: 'integer' }] });
    fails(controlDb, 400, 12012);
    assert.equal(paramOf(controlDb.json.errorMessage), 'db');
    const badTable = await rest.post('/table/main/a%01b', { fields: [{ name: 'v', type: 'integer' }] });
    assert.equal(paramOf(badTable.json.errorMessage), 'table');
    const badIndex = await rest.post('/index/main/people/a%01b', { fields: [{ name: 'age' }] });
    assert.equal(paramOf(badIndex.json.errorMessage), 'index');
  });

  it('names find_set.length, not the command\'s prefix', async function () {
    const result = await rest.post('/query/main/people/by_name?top=5', { advanced_find: { find_set: { length: 0, fields: { name: 'A' } } } });
    fails(result, 400, 12012);
    assert.equal(paramOf(result.json.errorMessage), 'advanced_find.find_set.length');
  });

  it('names the filter', async function () {
    const result = await rest.post('/query/main/people/by_name?top=5', { ...byName, filter: `age > 1${' '.repeat(70_000)}` });
    fails(result, 400, 12012);
    assert.equal(paramOf(result.json.errorMessage), 'filter');
  });

  it('names the body element that is wrong, not the alternative it did not try', async function () {
    const badId = await rest.patch('/record/main/people/1', [{ _id: 0, age: 41 }]);
    fails(badId, 400, 12012, /must be >= 1/);
    assert.equal(paramOf(badId.json.errorMessage), '[0]._id');
    const notObject = await rest.post('/record/main/people', [{ name: 'Cy' }, 7]);
    fails(notObject, 400, 12012, /must be object/);
    assert.equal(paramOf(notObject.json.errorMessage), '[1]');
    const empty = await rest.post('/record/main/people', []);
    fails(empty, 400, 12012, /fewer than 1 items/);
    assert.equal(paramOf(empty.json.errorMessage), 'body');
    const scalar = await rest.post('/record/main/people', '5');
    fails(scalar, 400, 12012, /must be object or array/);
  });

  it('names body properties by their path', async function () {
    const missing = await rest.post('/table/main/t2', { fields: [{ name: 'v' }] });
    fails(missing, 400, 12025);
    assert.equal(paramOf(missing.json.errorMessage), 'fields[0].type');
    const unknown = await rest.post('/query/main/people/by_name?top=1', { ...byName, revers: true });
    fails(unknown, 400, 12012, /unknown property/);
    assert.equal(paramOf(unknown.json.errorMessage), 'revers');
  });

  it('a query value that does not fit names the column the client named, in no command terms', async function () {
    ok(await rest.post('/index/main/people/by_age', { fields: [{ name: 'age' }] }));
    const value = await rest.post('/query/main/people/by_age?top=5', { find: { age: { operator: '>=', value: 'abc' } } });
    fails(value, 400, 4031, /column "age"/);
    assert.doesNotMatch(value.json.errorMessage, /bound|values?\b \d/, value.text);
    const length = await rest.post('/query/main/people/by_age?top=5', { advanced_find: { find_set: { length: 999, fields: { age: 1 } } } });
    fails(length, 400, 4073, /key prefix of 999 bytes .* 4 key bytes of index "by_age"/);
    assert.doesNotMatch(length.json.errorMessage, /byteLength/, length.text);
  });
});
