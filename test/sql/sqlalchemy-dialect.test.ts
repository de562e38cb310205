/**
 * The requests the SQLAlchemy dialect `toddstoffel/sqlalchemy-faircom` sends, byte for byte in
 * their envelope (read from its faircom_jsonapi/client.py, dbapi.py and sqlalchemy_dialect.py),
 * and the parts of the answers it relies on:
 * - it posts every request to `/api/db`, with `schema`, a numeric `requestId`, `api`,
 *   `apiVersion` and `action`; createSession goes there too, with `api: "admin"`;
 * - a statement starting with SELECT or WITH is sent as getRecordsUsingSQL with
 *   `{databaseName, sql, sqlParams}`, anything else as runSqlStatements with
 *   `{databaseName, sqlStatements: [sql]}`; it raises on a non-zero top-level errorCode only;
 * - it turns `LIMIT n [OFFSET m]` into `SELECT TOP n [SKIP m]` and quotes reserved words after AS;
 * - it reads `result.fields[].name` and `.type` (the cursor description), `result.data` as rows
 *   read by field name (`row.get(name)`: objects), and `affectedRecordCount` (else
 *   `returnedRecordCount`) as the rowcount;
 * - introspection: `SELECT tbl FROM <user>.systables WHERE tbltype = 'T' ORDER BY tbl` (and 'V'
 *   for views), `SELECT TOP 1 * FROM <table>` for columns and for has_table.
 * None of the dialect's code is here; the SQL below is what it produces for these calls.
 */
import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { startSqlServer } from './sql-client';

describe('sql: what the SQLAlchemy dialect sends', function () {
  this.timeout(60_000);
  let server: TestServer;
  let requestId = 0;
  let authToken: string | undefined;

  /** FairComClient._make_request: the same envelope, to the same path; returns `result` or throws like the client. */
  async function makeRequest(method: string, api: string, params: Record<string, unknown>): Promise<any> {
    const request: Record<string, unknown> = { schema: 'jsonCommand.org/v1', requestId: requestId++, api, apiVersion: '1.0', action: method, params };
    if (authToken) request.authToken = authToken;
    const response = await call('POST', `${server.http}/api/db`, { body: request, auth: null, headers: { 'content-type': 'application/json' } });
    assert.equal(response.status, 200, response.text);
    if ((response.json.errorCode ?? 0) !== 0) throw new Error(response.json.errorMessage ?? 'Unknown error');
    return response.json.result ?? {};
  }

  /** Cursor.execute: SELECT/WITH → getRecordsUsingSQL, else runSqlStatements; description, rows by name, rowcount. */
  async function execute(sql: string, parameters: unknown[] = []): Promise<{ description: Array<[string, string]> | undefined; rows: unknown[][]; rowcount: number }> {
    const upper = sql.trim().toUpperCase();
    const result = upper.startsWith('SELECT') || upper.startsWith('WITH')
      ? await makeRequest('getRecordsUsingSQL', 'db', { databaseName: 'main', sql, sqlParams: parameters })
      : await makeRequest('runSqlStatements', 'db', { databaseName: 'main', sqlStatements: [sql] });
    const fields: Array<{ name: string; type: string }> = result.fields ?? [];
    const description = fields.length > 0 ? fields.map((field): [string, string] => [field.name, field.type]) : undefined;
    const data: Array<Record<string, unknown>> = result.data ?? [];
    const rows = description ? data.map((row) => description.map(([name]) => row[name])) : [];
    return { description, rows, rowcount: result.affectedRecordCount ?? result.returnedRecordCount ?? data.length };
  }

  before(async () => {
    server = await startSqlServer();
  });
  after(() => server.close());

  it('logs in with createSession (api admin) posted to /api/db', async function () {
    const result = await makeRequest('createSession', 'admin', { username: 'ADMIN', password: 'ADMIN' });
    assert.equal(typeof result.authToken, 'string');
    authToken = result.authToken;
  });

  it('creates a table with the DDL SQLAlchemy compiles for this dialect (IDENTITY, BIT, PRIMARY KEY)', async function () {
    const ddl = '\nCREATE TABLE users (\n\tid INTEGER IDENTITY(1,1) NOT NULL, \n\tname VARCHAR(50) NOT NULL, \n\tactive BIT, \n\tscore FLOAT, \n\tPRIMARY KEY (id)\n)\n\n';
    const created = await execute(ddl);
    assert.equal(created.description, undefined);
    const inserted = await execute("INSERT INTO users (name, active, score) VALUES ('ann', 1, 2.5), ('bob', 0, 3.5), ('cy', 1, NULL)");
    assert.equal(inserted.rowcount, 3);
    const updated = await execute("UPDATE users SET score = 4.0 WHERE name = 'cy'");
    assert.equal(updated.rowcount, 1);
  });

  it('lists tables with its systables query (user as the owner, in upper case)', async function () {
    const tables = await execute("SELECT tbl FROM ADMIN.systables WHERE tbltype = 'T' ORDER BY tbl");
    assert.deepEqual(tables.rows, [['users']]);
    const views = await execute("SELECT tbl FROM ADMIN.systables WHERE tbltype = 'V' ORDER BY tbl");
    assert.deepEqual(views.rows, []);
  });

  it('reads columns and has_table with SELECT TOP 1 *', async function () {
    const top = await execute('SELECT TOP 1 * FROM users');
    assert.deepEqual(top.description?.map(([name]) => name), ['id', 'name', 'active', 'score']);
    assert.deepEqual(top.rows, [[1, 'ann', true, 2.5]]);
    await assert.rejects(execute('SELECT TOP 1 * FROM no_such_table'));
  });

  it('answers its LIMIT/OFFSET rewrite and quoted reserved words', async function () {
    // "SELECT name FROM users ORDER BY id LIMIT 2 OFFSET 1" as the dialect sends it:
    const page = await execute('SELECT TOP 2 SKIP 1 name FROM users ORDER BY id');
    assert.deepEqual(page.rows, [['bob'], ['cy']]);
    assert.equal(page.rowcount, 2);
    const counted = await execute('SELECT active, COUNT(*) AS "count" FROM users GROUP BY active ORDER BY "count" DESC');
    assert.deepEqual(counted.rows, [[true, 2], [false, 1]]);
    const bound = await execute('SELECT name FROM users WHERE score > ? ORDER BY name', [3]);
    assert.deepEqual(bound.rows, [['bob'], ['cy']]);
  });

  it('answers select(t).limit(n).offset(m) as the dialect sends it: TOP ? SKIP ? in front, LIMIT ? OFFSET ? kept, parameters in text order', async function () {
    // SQLAlchemy binds LIMIT/OFFSET (`LIMIT ? OFFSET ?`, values after the WHERE's); the dialect's
    // rewrite reads `?` as the limit, puts `TOP ? SKIP ?` after SELECT and leaves the LIMIT (its
    // regex removes only `LIMIT <digits>`). The parameters are those SQLAlchemy bound, in order.
    const paged = await execute('SELECT TOP ? SKIP ? users.name \nFROM users \nWHERE users.score > ? ORDER BY users.id\n LIMIT ? OFFSET ?', [3.0, 1, 1]);
    assert.deepEqual(paged.rows, [['cy']]);
    const limited = await execute('SELECT TOP ? users.name \nFROM users ORDER BY users.id\n LIMIT ?', [2]);
    assert.deepEqual(limited.rows, [['ann'], ['bob']]);
  });

  it('answers select(t).offset(m) as the dialect sends it: TOP -1 SKIP ? in front, LIMIT -1 OFFSET ? kept', async function () {
    // SQLAlchemy compiles an OFFSET alone for SQLite-like dialects as `LIMIT -1 OFFSET ?`; the
    // dialect copies it as `TOP -1 SKIP ?` (a syntax error here before the `-1` was read).
    const rest = await execute('SELECT TOP -1 SKIP ? users.name \nFROM users ORDER BY users.id\n LIMIT -1 OFFSET ?', [2]);
    assert.deepEqual(rest.rows, [['cy']]);
  });

  it('answers TOP ? SKIP ? written by hand, its values first among the positional parameters', async function () {
    const page = await execute('SELECT TOP ? SKIP ? name FROM users WHERE score > ? ORDER BY id', [1, 1, 3.0]);
    assert.deepEqual(page.rows, [['cy']]);
  });

  it('pings with SELECT 1 and answers a failing statement with an error the client raises', async function () {
    assert.deepEqual((await execute('SELECT 1')).rows, [[1]]);
    await assert.rejects(execute('SELECT FROM WHERE'));
  });
});
