/**
 * getRecordsUsingSql and runSqlStatements through POST /api: SELECTs with joins, aggregates,
 * TOP/SKIP, parameters, result formats and cursors over the engine's tables; DDL and DML that
 * REST sees; an MQTT message read as a row; authorization of every table; errors and limits.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { call, type TestServer } from '../helpers/server';
import { admin, db, fails, login, ok, send } from '../actions/action-client';
import { brokerUrl } from '../mqtt/mqtt-helpers';
import { query, startSqlServer, statements } from './sql-client';

describe('sql: getRecordsUsingSql and runSqlStatements', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer({ sql_max_statements: 50 });
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'customers', fields: [{ name: 'name', type: 'varchar', length: 30 }, { name: 'city', type: 'varchar', length: 20 }] }));
    await ok(server, db('createTable', token, {
      tableName: 'orders',
      fields: [{ name: 'customer', type: 'bigint' }, { name: 'amount', type: 'number', length: 10, scale: 2 }, { name: 'placed', type: 'timestamp' }, { name: 'note', type: 'varbinary', length: 8 }],
    }));
    await ok(server, db('createIndex', token, { tableName: 'orders', indexName: 'by_customer', fields: [{ name: 'customer' }] }));
    await ok(server, db('insertRecords', token, { tableName: 'customers', sourceData: [{ name: 'Ann', city: 'Oslo' }, { name: 'Bob', city: 'Rome' }, { name: 'Cy', city: 'Oslo' }] }));
    await ok(server, db('insertRecords', token, {
      tableName: 'orders',
      sourceData: [
        { customer: 1, amount: 10.5, placed: '2024-01-02T10:00:00.000', note: 'cafe' },
        { customer: 1, amount: 4.25, placed: '2024-01-03T11:30:00.000', note: null },
        { customer: 2, amount: 100, placed: '2024-02-01T09:15:00.000', note: 'beef' },
      ],
    }));
  });
  after(() => server.close());

  describe('SELECT', function () {
    it('joins two tables and aggregates per group', async function () {
      const result = await ok(server, query(token, 'SELECT c.name, count(*) AS orders, sum(o.amount) AS total FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.name ORDER BY c.name'));
      assert.deepEqual(result.data, [{ name: 'Ann', orders: 2, total: 14.75 }, { name: 'Bob', orders: 1, total: 100 }]);
      assert.deepEqual(result.fields.map((field: any) => [field.name, field.type]), [['name', 'varchar'], ['orders', 'bigint'], ['total', 'float']]);
      assert.equal(result.returnedRecordCount, 2);
      assert.equal(result.moreRecords, false);
    });

    it('answers objects by default and arrays when responseOptions ask', async function () {
      const objects = await ok(server, query(token, 'SELECT name FROM customers ORDER BY id'));
      assert.equal(objects.dataFormat, 'objects');
      assert.deepEqual(objects.data, [{ name: 'Ann' }, { name: 'Bob' }, { name: 'Cy' }]);
      const arrays = await ok(server, query(token, 'SELECT name, city FROM customers ORDER BY id', {}, { responseOptions: { dataFormat: 'arrays' } }));
      assert.equal(arrays.dataFormat, 'arrays');
      assert.deepEqual(arrays.data[0], ['Ann', 'Oslo']);
    });

    it('honours numberFormat, binaryFormat and includeFields, and reads timestamps in ISO form', async function () {
      const result = await ok(server, query(token, 'SELECT id, amount, placed, note FROM orders WHERE id = 1', {}, { responseOptions: { numberFormat: 'string', binaryFormat: 'base64', includeFields: ['amount', 'placed', 'note'] } }));
      assert.deepEqual(result.fields.map((field: any) => field.name), ['amount', 'placed', 'note']);
      assert.deepEqual(result.data, [{ amount: '10.5', placed: '2024-01-02T10:00:00.000', note: Buffer.from('cafe', 'hex').toString('base64') }]);
      const field = result.fields.find((f: any) => f.name === 'amount');
      assert.deepEqual([field.type, field.length, field.scale, field.nullable], ['number', 10, 2, true]);
    });

    it('reads SELECT TOP n SKIP m and LIMIT/OFFSET alike, in subqueries too', async function () {
      const top = await ok(server, query(token, 'SELECT TOP 2 SKIP 1 name FROM customers ORDER BY name'));
      assert.deepEqual(top.data, [{ name: 'Bob' }, { name: 'Cy' }]);
      const limit = await ok(server, query(token, 'SELECT name FROM customers ORDER BY name LIMIT 2 OFFSET 1'));
      assert.deepEqual(limit.data, top.data);
      const nested = await ok(server, query(token, "SELECT TOP 1 name FROM (SELECT TOP 2 name FROM customers WHERE city = 'Oslo' ORDER BY name DESC) ORDER BY name"));
      assert.deepEqual(nested.data, [{ name: 'Ann' }]);
      const words = await ok(server, query(token, "SELECT 'TOP 5' AS t FROM customers WHERE name = 'Ann'"));
      assert.deepEqual(words.data, [{ t: 'TOP 5' }]);
    });

    it('binds positional and named sqlParams', async function () {
      const positional = await ok(server, query(token, 'SELECT name FROM customers WHERE city = ? AND id > ?', { sqlParams: ['Oslo', 1] }));
      assert.deepEqual(positional.data, [{ name: 'Cy' }]);
      const named = await ok(server, query(token, 'SELECT name FROM customers WHERE city = :city ORDER BY id', { sqlParams: [{ name: 'city', value: 'Rome' }] }));
      assert.deepEqual(named.data, [{ name: 'Bob' }]);
      await fails(server, query(token, 'SELECT name FROM customers WHERE city = :city', { sqlParams: [{ name: 'town', value: 'Rome' }] }), 12012);
    });

    it('bounds results by maxRecords and skipRecords, counts with forceRecordCount', async function () {
      const result = await ok(server, query(token, 'SELECT name FROM customers ORDER BY id', { maxRecords: 1, skipRecords: 1, forceRecordCount: true }));
      assert.deepEqual(result.data, [{ name: 'Bob' }]);
      assert.equal(result.moreRecords, true);
      assert.equal(result.requestedRecordCount, 1);
      assert.equal(result.totalRecordCount, 3);
    });

    it('returns a cursor that getRecordsFromCursor pages and closeCursor closes', async function () {
      const opened = await ok(server, query(token, 'SELECT name FROM customers ORDER BY id', { returnCursor: true }));
      assert.match(opened.cursorId, /^sql-/);
      const first = await ok(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: 2 }));
      assert.deepEqual(first.data, [{ name: 'Ann' }, { name: 'Bob' }]);
      assert.equal(first.moreRecords, true);
      const rest = await ok(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId, fetchRecords: 2 }));
      assert.deepEqual(rest.data, [{ name: 'Cy' }]);
      assert.equal(rest.moreRecords, false);
      const other = await login(server);
      await fails(server, db('getRecordsFromCursor', other, { cursorId: opened.cursorId }), 4080);
      await ok(server, db('closeCursor', token, { cursorId: opened.cursorId }));
      await fails(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId }), 4080);
    });

    it('reads the catalog tables under the owner', async function () {
      const tables = await ok(server, query(token, "SELECT tbl FROM admin.systables WHERE tbltype = 'T' ORDER BY tbl"));
      assert.deepEqual(tables.data.map((row: any) => row.tbl).filter((name: string) => ['customers', 'orders'].includes(name)), ['customers', 'orders']);
      const columns = await ok(server, query(token, "SELECT col, coltype FROM ADMIN.syscolumns WHERE tbl = 'orders' ORDER BY id"));
      assert.deepEqual(columns.data.map((row: any) => row.col), ['id', 'customer', 'amount', 'placed', 'note']);
      const indexes = await ok(server, query(token, "SELECT idxname, colname FROM sysindexes WHERE tbl = 'orders' AND idxname = 'by_customer'"));
      assert.deepEqual(indexes.data, [{ idxname: 'by_customer', colname: 'customer' }]);
      const denied = await send(server, statements(token, ["DELETE FROM systables"]));
      assert.notEqual(denied.result.data[0].errorCode, 0);
    });

    it('hands text of every UTF-8 width, and longer than the scratch area, into SQLite and back unchanged, on the main thread and on a worker', async function () {
      // 1-, 2-, 3- and 4-byte characters, and a value longer than fast-values.ts's 64 KiB scratch area (written there as UTF-8).
      const texts = ['plain ascii', 'café Zürich', '東京 ﬁ €', 'emoji 😀🎉', 'é'.repeat(10_000), `${'é'.repeat(30_000)}😀${'x'.repeat(20_000)}`];
      await ok(server, db('createTable', token, { tableName: 'texts', fields: [{ name: 'n', type: 'integer' }, { name: 't', type: 'lvarchar' }] }));
      await ok(server, db('createIndex', token, { tableName: 'texts', indexName: 'by_n', fields: [{ name: 'n' }] }));
      // 100 rows per text: a range over them all reads more than the main-thread slice's 64 records, so a worker answers it.
      const sourceData = Array.from({ length: 100 * texts.length }, (_, i) => ({ n: i, t: texts[i % texts.length] }));
      await ok(server, db('insertRecords', token, { tableName: 'texts', sourceData }));
      for (const [i, text] of texts.entries()) {
        // Compared inside SQLite (t is not indexed): the bytes SQLite got are the text's UTF-8.
        const point = await ok(server, query(token, 'SELECT n, t, length(t) AS chars FROM texts WHERE n = ? AND t = ?', { sqlParams: [i, text] }));
        assert.deepEqual(point.data, [{ n: i, t: text, chars: [...text].length }]);
      }
      const range = await ok(server, query(token, 'SELECT n, t FROM texts WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [0, sourceData.length], maxRecords: sourceData.length }));
      assert.equal(range.data.length, sourceData.length);
      assert.deepEqual(range.data, sourceData);
    });

    it('refuses a statement that is not a query', async function () {
      await fails(server, query(token, "DELETE FROM customers"), 12012);
      await fails(server, query(token, "CREATE TABLE nope (a INTEGER)"), 12012);
    });
  });

  describe('runSqlStatements', function () {
    it('creates a table and index by DDL that REST and the db actions see, and writes rows REST reads', async function () {
      const ran = await ok(server, statements(token, [
        'CREATE TABLE items (sku VARCHAR(12) NOT NULL, qty INTEGER DEFAULT 1, price DECIMAL(8,2), UNIQUE (sku))',
        'CREATE INDEX items_by_qty ON items (qty DESC)',
        "INSERT INTO items (sku, qty, price) VALUES ('a-1', 5, 2.5), ('b-2', 7, 1.25)",
        "INSERT INTO items (sku) VALUES ('c-3')",
        "UPDATE items SET qty = qty + 1 WHERE sku = 'a-1'",
        "DELETE FROM items WHERE sku = 'b-2'",
      ]));
      assert.deepEqual(ran.data.map((s: any) => [s.errorCode, s.affectedRows]), [[0, 0], [0, 0], [0, 2], [0, 1], [0, 1], [0, 1]]);
      assert.equal(ran.affectedRecordCount, 5);
      const described = await ok(server, db('describeTables', token, { tableNames: ['items'] }));
      const table = described.data[0];
      assert.deepEqual(table.fields.map((f: any) => [f.name, f.type]), [['id', 'bigint'], ['sku', 'varchar'], ['qty', 'integer'], ['price', 'number']]);
      const qtyIndex = table.indexes.find((index: any) => index.indexName === 'items_by_qty');
      assert.deepEqual(qtyIndex.fields.map((f: any) => [f.name, f.ascending]), [['qty', false]]);
      assert.ok(table.indexes.some((index: any) => index.unique && index.fields[0].name === 'sku'));
      const rest = await call('GET', `${server.http}/engine/api/v1/record/main/items/1`, { auth: ['admin', 'ADMIN'] });
      assert.equal(rest.status, 200, rest.text);
      assert.equal(rest.json.qty, 6);
      const defaulted = await ok(server, query(token, "SELECT qty FROM items WHERE sku = 'c-3'"));
      assert.deepEqual(defaulted.data, [{ qty: 1 }]);
    });

    it('applies unique keys and types as every other path does', async function () {
      const ran = await ok(server, statements(token, ["INSERT INTO items (sku) VALUES ('a-1')", "INSERT INTO items (sku, qty) VALUES ('z', 'many')"]));
      assert.equal(ran.data[0].errorCode, 2);
      assert.notEqual(ran.data[1].errorCode, 0);
      assert.equal(ran.committed, false);
    });

    it('rolls back the transaction on error by default, keeps it with atEnd commit, stops with onError stop', async function () {
      await ok(server, statements(token, ['CREATE TABLE ledger (n INTEGER)']));
      const failed = await ok(server, statements(token, ['INSERT INTO ledger (n) VALUES (1)', 'INSERT INTO nowhere VALUES (1)', 'INSERT INTO ledger (n) VALUES (2)']));
      assert.deepEqual(failed.data.map((s: any) => s.errorCode), [0, 4023, 0]);
      assert.deepEqual((await ok(server, query(token, 'SELECT n FROM ledger'))).data, []);
      const kept = await ok(server, statements(token, ['INSERT INTO ledger (n) VALUES (1)', 'INSERT INTO nowhere VALUES (1)', 'INSERT INTO ledger (n) VALUES (2)'], { atEnd: 'commit' }));
      assert.equal(kept.committed, true);
      assert.deepEqual((await ok(server, query(token, 'SELECT n FROM ledger ORDER BY n'))).data, [{ n: 1 }, { n: 2 }]);
      const stopped = await ok(server, statements(token, ['INSERT INTO nowhere VALUES (1)', 'INSERT INTO ledger (n) VALUES (3)'], { onError: 'stop', atEnd: 'commit' }));
      assert.equal(stopped.data.length, 1);
      const rolledBack = await ok(server, statements(token, ['INSERT INTO ledger (n) VALUES (4)'], { atEnd: 'rollback' }));
      assert.equal(rolledBack.committed, false);
      assert.deepEqual((await ok(server, query(token, 'SELECT n FROM ledger ORDER BY n'))).data, [{ n: 1 }, { n: 2 }]);
    });

    it('undoes a failing statement\'s own rows (a savepoint per statement) and keeps the statements before and after it', async function () {
      await ok(server, statements(token, ['CREATE TABLE keyed (k INTEGER, tag VARCHAR(10))', 'CREATE UNIQUE INDEX keyed_k ON keyed (k)', 'CREATE TABLE source (k INTEGER)']));
      await ok(server, statements(token, ['INSERT INTO source (k) VALUES (1), (2), (3), (4)', 'INSERT INTO keyed (k, tag) VALUES (3, \'old\')'], { atEnd: 'commit' }));
      const ran = await ok(server, statements(token, [
        "INSERT INTO keyed (k, tag) VALUES (10, 'before')",
        // rows 1 and 2 go in, then 3 meets the unique key: 1 and 2 must go too
        "INSERT INTO keyed (k, tag) SELECT k, 'copied' FROM source ORDER BY k",
        // the first of the two rows becomes 20, the second meets it: the first must get its key back
        "UPDATE keyed SET k = 20 WHERE tag IN ('old', 'before')",
        // takes 20: refused if the UPDATE's first row had kept it
        "INSERT INTO keyed (k, tag) VALUES (20, 'after')",
      ], { onError: 'continue', atEnd: 'commit' }));
      assert.deepEqual(ran.data.map((s: any) => s.errorCode), [0, 2, 2, 0]);
      assert.equal(ran.committed, true);
      const rows = (await ok(server, query(token, 'SELECT k, tag FROM keyed ORDER BY k'))).data;
      assert.deepEqual(rows, [{ k: 3, tag: 'old' }, { k: 10, tag: 'before' }, { k: 20, tag: 'after' }]);
    });

    it('lists each statement\'s outcome under reactions too (what public scripts read), beside data', async function () {
      await ok(server, statements(token, ['CREATE TABLE reacted (n INTEGER)']));
      const ran = await ok(server, statements(token, ['INSERT INTO reacted (n) VALUES (7)', 'INSERT INTO nowhere VALUES (1)', 'SELECT 1 AS one'], { atEnd: 'rollback' }));
      assert.deepEqual(ran.reactions.map((r: any) => [r.errorCode, r.affectedRows]), [[0, 1], [4023, 0], [0, 0]]);
      assert.match(ran.reactions[1].errorMessage, /nowhere/);
      assert.equal(ran.reactions[0].sqlStatement, 'INSERT INTO reacted (n) VALUES (7)');
      // the rows stay in data only
      assert.equal(ran.reactions[2].data, undefined);
      assert.deepEqual(ran.data[2].data, [{ one: 1 }]);
      assert.deepEqual(ran.data.map((s: any) => s.errorCode), [0, 4023, 0]);
    });

    it('refuses statements that would change the connection other callers share', async function () {
      const ran = await ok(server, statements(token, [
        'CREATE VIEW v AS SELECT 1', 'CREATE TEMP TABLE tt (a)', "ATTACH ':memory:' AS other", 'PRAGMA writable_schema = 1', 'BEGIN', 'SELECT 4 AS four',
      ], { atEnd: 'commit' }));
      assert.deepEqual(ran.data.map((s: any) => s.errorCode), [4075, 4075, 4075, 4075, 4075, 0]);
      assert.match(ran.data[0].errorMessage, /CREATE VIEW is not supported/);
      await fails(server, query(token, 'SELECT * FROM v'), 4023);
    });

    it('drops an index and a table by DDL', async function () {
      const ran = await ok(server, statements(token, ['CREATE TABLE scratch (a INTEGER)', 'CREATE INDEX scratch_a ON scratch (a)', 'DROP INDEX scratch_a', 'DROP TABLE scratch']));
      assert.deepEqual(ran.data.map((s: any) => s.errorCode), [0, 0, 0, 0]);
      await fails(server, db('describeTables', token, { tableNames: ['scratch'] }), 4023);
    });
  });

  describe('integration tables', function () {
    it('finds a message published over MQTT as a row', async function () {
      const client = await mqtt.connectAsync(brokerUrl(server), { username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
      await client.publishAsync('plant/line-1', JSON.stringify({ temp: 21.5 }), { qos: 1 });
      await client.endAsync();
      const result = await ok(server, query(token, "SELECT source_payload, mqtt_qos FROM mqtt_msg_plant_line_1 WHERE json_extract(source_payload, '$.temp') > 20"));
      // source_payload is a variant: a JSON payload reads as its JSON value (variantFormat json).
      assert.deepEqual(result.data, [{ source_payload: { temp: 21.5 }, mqtt_qos: 1 }]);
      const written = await ok(server, statements(token, ["INSERT INTO mqtt_msg_plant_line_1 (mqtt_qos) VALUES (0)"]));
      assert.equal(written.data[0].errorCode, 4025);
    });
  });

  describe('authorization', function () {
    before(async () => {
      await ok(server, admin('createRole', token, {
        roleName: 'no_orders', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['*'], resources: ['table:main/orders'] }],
      }));
      await ok(server, admin('createAccount', token, { username: 'limited', password: 'pw-limited', roles: ['no_orders'] }));
      await ok(server, admin('createAccount', token, { username: 'looker', password: 'pw-looker', roles: ['reader'] }));
    });

    it('decides every table a statement reads by the kernel, even one it never scans', async function () {
      const limited = await login(server, 'limited', 'pw-limited');
      await ok(server, query(limited, 'SELECT count(*) AS n FROM customers'));
      await fails(server, query(limited, 'SELECT * FROM customers c JOIN orders o ON o.customer = c.id'), 12030);
      await fails(server, query(limited, 'SELECT * FROM orders WHERE 0'), 12030);
      const listed = await ok(server, query(limited, 'SELECT tbl FROM systables'));
      assert.ok(!listed.data.some((row: any) => row.tbl === 'orders'));
    });

    it('numbers the catalog\'s tables among those the caller may read only (tblid shows no gap where a hidden table is)', async function () {
      await ok(server, db('createTable', token, { tableName: 'a_secret', fields: [{ name: 'x', type: 'integer' }] }));
      await ok(server, admin('createRole', token, {
        roleName: 'no_secret', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['*'], resources: ['table:main/a_secret'] }],
      }));
      await ok(server, admin('createAccount', token, { username: 'unaware', password: 'pw-unaware', roles: ['no_secret'] }));
      const unaware = await login(server, 'unaware', 'pw-unaware');
      const listed = await ok(server, query(unaware, 'SELECT tbl, tblid FROM systables ORDER BY tblid'));
      assert.ok(listed.data.length > 0);
      assert.ok(!listed.data.some((row: any) => row.tbl === 'a_secret'));
      assert.deepEqual(listed.data.map((row: any) => row.tblid), listed.data.map((_: unknown, i: number) => i + 1));
    });

    it('decides an integration table by its topic', async function () {
      await ok(server, admin('createRole', token, {
        roleName: 'no_plant', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['*'], resources: ['topic:plant/#'] }],
      }));
      await ok(server, admin('createAccount', token, { username: 'outsider', password: 'pw-outsider', roles: ['no_plant'] }));
      const outsider = await login(server, 'outsider', 'pw-outsider');
      await fails(server, query(outsider, 'SELECT count(*) AS n FROM mqtt_msg_plant_line_1'), 12030);
      await ok(server, query(outsider, 'SELECT count(*) AS n FROM customers'));
    });

    it('lets a reader read and not write', async function () {
      const looker = await login(server, 'looker', 'pw-looker');
      await ok(server, query(looker, 'SELECT name FROM customers'));
      const ran = await send(server, statements(looker, ["INSERT INTO customers (name) VALUES ('Eve')"]));
      assert.notEqual(ran.errorCode === 0 ? ran.result.data[0].errorCode : ran.errorCode, 0);
      const count = await ok(server, query(token, "SELECT count(*) AS n FROM customers WHERE name = 'Eve'"));
      assert.deepEqual(count.data, [{ n: 0 }]);
    });
  });

  describe('bad input', function () {
    it('answers a syntax error with 4074 and its position', async function () {
      const response = await fails(server, query(token, 'SELECT name FROM customers WHERE'), 4074);
      assert.match(response.errorMessage, /position \d+/);
    });

    it('answers an unknown table with 4023', async function () {
      await fails(server, query(token, 'SELECT * FROM missing_table'), 4023);
    });

    it('bounds statements per call and statement length', async function () {
      await fails(server, statements(token, Array.from({ length: 51 }, () => 'SELECT 1')), 12012);
      await fails(server, query(token, `SELECT '${'x'.repeat(1_048_577)}'`), 12012);
    });
  });

  describe('envelope', function () {
    it('matches action names without regard to case and ignores unknown envelope members', async function () {
      const result = await ok(server, { schema: 'jsonCommand.org/v1', api: 'db', action: 'GETRECORDSUSINGSQL', params: { sql: 'SELECT 1 AS one' }, authToken: token });
      assert.deepEqual(result.data, [{ one: 1 }]);
      await ok(server, db('listtables', token));
    });

    it('answers POST /api/<api> and POST /api/v1/action', async function () {
      const byPath = await call('POST', `${server.http}/api/db`, { body: { action: 'getRecordsUsingSQL', params: { sql: 'SELECT 2 AS two' }, authToken: token }, auth: null });
      assert.equal(byPath.json.errorCode, 0, byPath.text);
      assert.deepEqual(byPath.json.result.data, [{ two: 2 }]);
      const v1 = await call('POST', `${server.http}/api/v1/action`, { body: { api: 'db', action: 'runSqlStatements', params: { sqlStatements: ['SELECT 3 AS three'] }, authToken: token }, auth: null });
      assert.equal(v1.json.errorCode, 0, v1.text);
      assert.deepEqual(v1.json.result.data[0].data, [{ three: 3 }]);
    });
  });
});
