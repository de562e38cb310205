/**
 * INSERT OR IGNORE, INSERT OR REPLACE and UPDATE OR IGNORE / OR REPLACE on the engine's tables
 * through runSqlStatements: a row that would repeat a unique key (a unique index or the record
 * ID) is passed over, or replaces the records holding it, as SQLite does for its own tables;
 * other modes still fail the statement. The outcome is read back through REST as well.
 */
import assert from 'node:assert/strict';
import { call, type TestServer } from '../helpers/server';
import { admin, login, ok } from '../actions/action-client';
import { query, startSqlServer, statements } from './sql-client';

describe('sql: ON CONFLICT modes on engine tables', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  const rows = async (sql: string): Promise<unknown[]> => (await ok(server, query(token, sql))).data as unknown[];

  before(async () => {
    server = await startSqlServer();
    token = await login(server);
    await ok(server, statements(token, [
      'CREATE TABLE parts (sku VARCHAR(12) NOT NULL, bin INTEGER, label VARCHAR(20))',
      'CREATE UNIQUE INDEX parts_sku ON parts (sku)',
      'CREATE UNIQUE INDEX parts_bin ON parts (bin)',
      "INSERT INTO parts (sku, bin, label) VALUES ('a', 1, 'first'), ('b', 2, 'second')",
    ], { atEnd: 'commit' }));
  });
  after(() => server.close());

  it('INSERT OR IGNORE passes over the rows that repeat a unique key, inserts the others, and counts only those', async function () {
    const ran = await ok(server, statements(token, ["INSERT OR IGNORE INTO parts (sku, bin, label) VALUES ('a', 10, 'dup sku'), ('c', 3, 'new'), ('d', 2, 'dup bin')"], { atEnd: 'commit' }));
    assert.deepEqual(ran.data.map((s: any) => [s.errorCode, s.affectedRows]), [[0, 1]]);
    assert.deepEqual(await rows('SELECT sku, bin, label FROM parts ORDER BY sku'), [
      { sku: 'a', bin: 1, label: 'first' }, { sku: 'b', bin: 2, label: 'second' }, { sku: 'c', bin: 3, label: 'new' },
    ]);
  });

  it('a plain INSERT that repeats a key still fails its statement with DUPLICATE_KEY and leaves nothing of it', async function () {
    const ran = await ok(server, statements(token, ["INSERT INTO parts (sku, bin) VALUES ('e', 5), ('a', 6)"], { onError: 'continue', atEnd: 'commit' }));
    assert.equal(ran.data[0].errorCode, 2);
    assert.deepEqual(await rows("SELECT count(*) AS n FROM parts WHERE sku = 'e'"), [{ n: 0 }]);
  });

  it('INSERT OR REPLACE removes every record holding a key of the new row (two of them here), then inserts it', async function () {
    // 'b' holds bin 2 under its sku, 'c' holds bin 3: the new row takes sku 'b' and bin 3, so both go.
    const ran = await ok(server, statements(token, ["INSERT OR REPLACE INTO parts (sku, bin, label) VALUES ('b', 3, 'replaced')"], { atEnd: 'commit' }));
    assert.deepEqual(ran.data.map((s: any) => [s.errorCode, s.affectedRows]), [[0, 1]]);
    assert.deepEqual(await rows('SELECT sku, bin, label FROM parts ORDER BY sku'), [
      { sku: 'a', bin: 1, label: 'first' }, { sku: 'b', bin: 3, label: 'replaced' },
    ]);
  });

  it('INSERT OR REPLACE with an explicit record ID replaces the record with that ID', async function () {
    await ok(server, statements(token, ['CREATE TABLE notes (id BIGINT PRIMARY KEY, body VARCHAR(20))', "INSERT INTO notes (id, body) VALUES (7, 'old')"], { atEnd: 'commit' }));
    await ok(server, statements(token, ["INSERT OR REPLACE INTO notes (id, body) VALUES (7, 'new')"], { atEnd: 'commit' }));
    assert.deepEqual(await rows('SELECT id, body FROM notes'), [{ id: 7, body: 'new' }]);
    const rest = await call('GET', `${server.http}/engine/api/v1/record/main/notes/7`, { auth: ['admin', 'ADMIN'] });
    assert.equal(rest.status, 200, rest.text);
    assert.equal(rest.json.body, 'new');
    await ok(server, statements(token, ["REPLACE INTO notes (id, body) VALUES (7, 'newer')"], { atEnd: 'commit' }));
    assert.deepEqual(await rows('SELECT id, body FROM notes'), [{ id: 7, body: 'newer' }]);
  });

  it('refuses an UPSERT (INSERT … ON CONFLICT DO) with 4075, as SQLite does for virtual tables, and changes nothing', async function () {
    const ran = await ok(server, statements(token, ["INSERT INTO notes (id, body) VALUES (7, 'upsert') ON CONFLICT DO NOTHING"], { atEnd: 'commit' }));
    assert.equal(ran.data[0].errorCode, 4075);
    assert.match(ran.data[0].errorMessage, /UPSERT/);
    assert.deepEqual(await rows('SELECT id, body FROM notes'), [{ id: 7, body: 'newer' }]);
  });

  it('UPDATE OR IGNORE leaves a row whose change would repeat a key; UPDATE OR REPLACE removes the holder', async function () {
    await ok(server, statements(token, ["INSERT INTO parts (sku, bin, label) VALUES ('x', 20, 'x'), ('y', 21, 'y')"], { atEnd: 'commit' }));
    const ignored = await ok(server, statements(token, ["UPDATE OR IGNORE parts SET bin = 21 WHERE sku = 'x'"], { atEnd: 'commit' }));
    assert.deepEqual(ignored.data.map((s: any) => [s.errorCode, s.affectedRows]), [[0, 0]]);
    assert.deepEqual(await rows("SELECT sku, bin FROM parts WHERE sku IN ('x', 'y') ORDER BY sku"), [{ sku: 'x', bin: 20 }, { sku: 'y', bin: 21 }]);
    const replaced = await ok(server, statements(token, ["UPDATE OR REPLACE parts SET bin = 21 WHERE sku = 'x'"], { atEnd: 'commit' }));
    assert.deepEqual(replaced.data.map((s: any) => [s.errorCode, s.affectedRows]), [[0, 1]]);
    assert.deepEqual(await rows("SELECT sku, bin FROM parts WHERE sku IN ('x', 'y') ORDER BY sku"), [{ sku: 'x', bin: 21 }]);
  });

  it('INSERT OR REPLACE needs the right to delete: an account that may only insert is refused and nothing is removed', async function () {
    await ok(server, admin('createRole', token, {
      roleName: 'insert_only', grants: [{ commands: ['record.insert', 'record.find'], resources: ['table:main/parts'] }],
    }));
    await ok(server, admin('createAccount', token, { username: 'filler', password: 'pw-filler', roles: ['insert_only'] }));
    const filler = await login(server, 'filler', 'pw-filler');
    const inserted = await ok(server, statements(filler, ["INSERT OR IGNORE INTO parts (sku, bin, label) VALUES ('f', 98, 'filled')"], { atEnd: 'commit' }));
    assert.deepEqual(inserted.data.map((s: any) => [s.errorCode, s.affectedRows]), [[0, 1]]);
    const ran = await ok(server, statements(filler, ["INSERT OR REPLACE INTO parts (sku, bin, label) VALUES ('a', 99, 'taken')"], { atEnd: 'commit' }));
    assert.equal(ran.data[0].errorCode, 12030);
    assert.deepEqual(await rows("SELECT sku, bin, label FROM parts WHERE sku = 'a'"), [{ sku: 'a', bin: 1, label: 'first' }]);
  });
});
