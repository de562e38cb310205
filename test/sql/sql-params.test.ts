/**
 * Parameters: runSqlStatements takes each statement's own values (sqlParams: one list per
 * statement, or the one statement's list; `inParams` as the MCP server sends it), and a
 * `{name, value}` whose name the statement does not have fills its next `?` (the MCP server
 * names positional values p1, p2 …), in both actions.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, fails, login, ok } from '../actions/action-client';
import { query, startSqlServer, statements } from './sql-client';

describe('sql: parameters of runSqlStatements and named values for ?', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer();
    token = await login(server);
    await ok(server, statements(token, ['CREATE TABLE stock (sku VARCHAR(16), qty INTEGER)']));
  });
  after(() => server.close());

  it('binds each statement its own sqlParams list, and the rows are records the db actions read', async function () {
    const ran = await ok(server, statements(token, [
      'INSERT INTO stock (sku, qty) VALUES (?, ?)',
      "INSERT INTO stock (sku, qty) VALUES ('fixed', 1)",
      'UPDATE stock SET qty = qty + :add WHERE sku = :sku',
      'SELECT sku, qty FROM stock WHERE qty >= ? ORDER BY sku',
    ], { sqlParams: [['bolt', 10], null, [{ name: 'add', value: 5 }, { name: 'sku', value: 'bolt' }], [2]] }));
    assert.deepEqual(ran.data.map((s: any) => s.errorCode), [0, 0, 0, 0]);
    assert.deepEqual(ran.data.map((s: any) => s.affectedRows), [1, 1, 1, 0]);
    assert.deepEqual(ran.data[3].data, [{ sku: 'bolt', qty: 15 }]);
    const records = await ok(server, db('getRecordsByTable', token, { tableName: 'stock' }, { responseOptions: { dataFormat: 'objects' } }));
    assert.deepEqual(records.data.map((r: any) => [r.sku, r.qty]).sort(), [['bolt', 15], ['fixed', 1]]);
  });

  it('takes the one statement\'s flat list, and inParams named p1, p2 for its ? (what the MCP server sends)', async function () {
    const flat = await ok(server, statements(token, ['INSERT INTO stock (sku, qty) VALUES (?, ?)'], { sqlParams: ['nut', 3] }));
    assert.equal(flat.data[0].errorCode, 0);
    const named = await ok(server, statements(token, ['DELETE FROM stock WHERE sku = ? AND qty = ?'], { inParams: [{ name: 'p1', value: 'nut' }, { name: 'p2', value: 3 }] }));
    assert.equal(named.data[0].errorCode, 0);
    assert.equal(named.data[0].affectedRows, 1);
  });

  it('binds getRecordsUsingSql values named p1 to its ? as well', async function () {
    const found = await ok(server, query(token, 'SELECT qty FROM stock WHERE sku = ?', { sqlParams: [{ name: 'p1', value: 'bolt' }] }));
    assert.deepEqual(found.data, [{ qty: 15 }]);
  });

  it('refuses more parameter lists than statements, and a value for a statement without parameters', async function () {
    await fails(server, statements(token, ['SELECT 1'], { sqlParams: [[], []] }), 12012);
    const ran = await ok(server, statements(token, ['SELECT 1 AS one'], { sqlParams: [[7]] }));
    assert.equal(ran.data[0].errorCode, 12012);
  });

  it('refuses a statement with a parameter that got no value, naming it, instead of running it as NULL (the SQLAlchemy dialect sends DML without its values)', async function () {
    const ran = await ok(server, statements(token, ['INSERT INTO stock (sku, qty) VALUES (?, ?)', 'UPDATE stock SET qty = :qty WHERE sku = :sku'], { sqlParams: [['half'], [{ name: 'sku', value: 'bolt' }]] }));
    assert.deepEqual(ran.data.map((s: any) => s.errorCode), [12012, 12012]);
    assert.match(ran.data[0].errorMessage, /2 parameters and 1 values were given: parameter 2 has none/);
    assert.match(ran.data[1].errorMessage, /":qty" has none/);
    const unsent = await ok(server, statements(token, ['INSERT INTO stock (sku, qty) VALUES (?, ?)']));
    assert.equal(unsent.data[0].errorCode, 12012);
    await fails(server, query(token, 'SELECT qty FROM stock WHERE sku = ?'), 12012);
    const records = await ok(server, db('getRecordsByTable', token, { tableName: 'stock' }, { responseOptions: { dataFormat: 'objects' } }));
    assert.deepEqual(records.data.map((r: any) => [r.sku, r.qty]).sort(), [['bolt', 15], ['fixed', 1]], 'no row of NULLs stored, bolt unchanged');
  });
});
