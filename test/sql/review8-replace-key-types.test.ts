/**
 * Review 8: REPLACE INTO on a unique index over columns of each common key type replaces the
 * record holding the key, also when the new row writes the key another way ('1.250' for 1.25).
 * Before, CHAR, NUMBER, MONEY, BIT and a TIMESTAMP without milliseconds failed with DUPLICATE_KEY:
 * engine-tables.ts removeHolders read the key with boundValue (undefined where SQL's comparison
 * is not the index's order); it now reads the value the store will keep (decodeValue).
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { login, ok } from '../actions/action-client';
import { query, startSqlServer, statements } from './sql-client';

const CASES: Array<{ type: string; first: string; again: string }> = [
  { type: 'CHAR(4)', first: "'ab'", again: "'ab'" },
  { type: 'VARCHAR(8)', first: "'ab'", again: "'ab'" },
  { type: 'INTEGER', first: '7', again: '7' },
  { type: 'NUMBER(10,2)', first: '1.25', again: '1.25' },
  { type: 'MONEY(10,2)', first: '1.25', again: '1.25' },
  { type: 'FLOAT', first: '1.5', again: '1.5' },
  { type: 'DATE', first: "'2024-01-02'", again: "'2024-01-02'" },
  { type: 'TIMESTAMP', first: "'2024-01-02 03:04:05'", again: "'2024-01-02 03:04:05'" },
  { type: 'TIMESTAMP', first: "'2024-01-02 03:04:05.000'", again: "'2024-01-02 03:04:05.000'" },
  { type: 'BIT', first: '1', again: '1' },
  // The same key written another way: the holder is found by the value the store keeps.
  { type: 'NUMBER(10,2)', first: '1.25', again: "'1.250'" },
  { type: 'TIMESTAMP', first: "'2024-01-02 03:04:05.000'", again: "'2024-01-02T03:04:05'" },
  { type: 'INTEGER', first: '7', again: '7.0' },
];

describe('sql review8: OR REPLACE on unique keys of each column type', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer();
    token = await login(server);
  });
  after(() => server.close());

  CASES.forEach(({ type, first, again }, i) => {
    it(`REPLACE INTO with ${again} replaces the record holding the ${type} key ${first}`, async function () {
      const table = `keyed${i}`;
      await ok(server, statements(token, [
        `CREATE TABLE ${table} (k ${type}, label VARCHAR(8))`,
        `CREATE UNIQUE INDEX ${table}_k ON ${table} (k)`,
        `INSERT INTO ${table} (k, label) VALUES (${first}, 'old')`,
      ], { atEnd: 'commit' }));
      const ran = await ok(server, statements(token, [`REPLACE INTO ${table} (k, label) VALUES (${again}, 'new')`], { atEnd: 'commit' }));
      // One record, the new one: the holder was removed, not passed over.
      assert.deepEqual(ran.data.map((s: any) => [s.errorCode, s.errorMessage]), [[0, '']]);
      const read = await ok(server, query(token, `SELECT label FROM ${table}`));
      assert.deepEqual(read.data, [{ label: 'new' }]);
    });
  });

  it('REPLACE INTO on a two-column unique key (CHAR and NUMBER) replaces only the record holding both', async function () {
    await ok(server, statements(token, [
      'CREATE TABLE pairs (code CHAR(3), amount NUMBER(8,2), label VARCHAR(8))',
      'CREATE UNIQUE INDEX pairs_key ON pairs (code, amount)',
      "INSERT INTO pairs (code, amount, label) VALUES ('ab', 2.5, 'holder'), ('ab', 3, 'other'), ('cd', 2.5, 'other2')",
    ], { atEnd: 'commit' }));
    const ran = await ok(server, statements(token, ["REPLACE INTO pairs (code, amount, label) VALUES ('ab', '2.50', 'new')"], { atEnd: 'commit' }));
    assert.deepEqual(ran.data.map((s: any) => [s.errorCode, s.errorMessage]), [[0, '']]);
    const read = await ok(server, query(token, 'SELECT label FROM pairs ORDER BY label'));
    assert.deepEqual(read.data, [{ label: 'new' }, { label: 'other' }, { label: 'other2' }]);
  });
});
