/**
 * Action error messages name the parameter as the action wrote it (`tableName`, `tableFilter`),
 * also when the data command under the action (`table`, `filter`) is the one that refuses it.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, fails, login, ok, startActionServer } from './action-client';

describe('actions: error messages name the parameter sent', function () {
  let server: TestServer;
  let token: string;

  before(async function () {
    server = await startActionServer({}, true);
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'people', fields: [{ name: 'name', type: 'varchar', length: 20 }] }));
  });
  after(async function () {
    await server?.close();
  });

  function paramOf(message: string): string {
    const match = /^(?:invalid value for|missing required parameter) "([^"]*)"/.exec(message);
    assert.ok(match, message);
    return match[1];
  }

  async function paramNamed(action: string, params: Record<string, unknown>): Promise<string> {
    const response = await fails(server, db(action, token, params), 12012);
    return paramOf(response.errorMessage);
  }

  it('names databaseName, tableName and indexName when storage refuses the name', async function () {
    assert.equal(await paramNamed('createDatabase', { databaseName: 'a\u0001b' }), 'databaseName');
    assert.equal(await paramNamed('createTable', { tableName: 'a\u0001b', fields: [{ name: 'v', type: 'integer' }] }), 'tableName');
    assert.equal(await paramNamed('createIndex', { tableName: 'people', indexName: 'a\u0001b', fields: [{ name: 'name' }] }), 'indexName');
  });

  it('names tableFilter when the query command refuses the filter', async function () {
    assert.equal(await paramNamed('getRecordsByTable', { tableName: 'people', tableFilter: `name > "a"${' '.repeat(70_000)}` }), 'tableFilter');
  });

  it('names the action\'s own params', async function () {
    assert.equal(await paramNamed('getRecordsByTable', { tableName: 'people', maxRecords: 0 }), 'maxRecords');
    assert.equal(await paramNamed('getRecordsByTable', { tableName: 'people', skipRecords: -1 }), 'skipRecords');
    assert.equal(await paramNamed('insertRecords', { tableName: 'people', dataFormat: 'arrays', fieldNames: ['name'], sourceData: [['a', 'b']] }), 'sourceData[0]');
    const missing = await fails(server, db('getRecordsByTable', token, {}), 12025);
    assert.equal(paramOf(missing.errorMessage), 'tableName');
  });
});
