/**
 * The store times its writes on the engine's one clock (kernel/clock.ts), not the system's: a
 * record's automatic times, a table's and a topic's createdAt (docs/storage.md "Operation entries
 * and replay"). A real engine with an injected clock set far from today, through the db api.
 */
import assert from 'node:assert/strict';
import { ManualClock } from '../helpers/manual-clock';
import type { TestServer } from '../helpers/server';
import { db, login, ok, startActionServer } from '../actions/action-client';

/** 2031-03-04T05:06:07.089Z: no system clock reads that while this test runs. */
const START = Date.UTC(2031, 2, 4, 5, 6, 7, 89);

function canonical(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}

describe('storage: writes are timed on the engine clock', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  const clock = new ManualClock(START);

  before(async function () {
    server = await startActionServer({}, true, { clock });
    token = await login(server);
  });
  after(async function () {
    await server?.close();
  });

  const fields = [
    { name: 'label', type: 'varchar', length: 20 },
    { name: 'made', type: 'timestamp', autoValue: 'timestampOnInsert' },
    { name: 'changed', type: 'timestamp', autoValue: 'timestampOnUpdateAndInsert' },
    { name: 'day', type: 'date', autoValue: 'timestampOnInsert' },
  ];

  async function record(tableName: string, id: number): Promise<any> {
    const got = await ok(server, db('getRecordsByIds', token, { tableName, ids: [id] }, { responseOptions: { dataFormat: 'objects' } }));
    return got.data[0];
  }

  it("a table's createdAt and its records' automatic times on insert and update are the clock's", async function () {
    const created = await ok(server, db('createTable', token, { tableName: 'timed', fields }));
    assert.equal(created.createdAt, new Date(START).toISOString());
    const described = await ok(server, db('describeTables', token, { tableNames: ['timed'] }));
    assert.equal(described.data[0].createdAt, new Date(START).toISOString());

    clock.advanceSeconds(60);
    const inserted = canonical(clock.now());
    const { ids } = await ok(server, db('insertRecords', token, { tableName: 'timed', sourceData: [{ label: 'a' }] }));
    const row = await record('timed', ids[0]);
    assert.equal(row.made, inserted);
    assert.equal(row.changed, inserted);
    assert.equal(row.day, inserted.slice(0, 10));

    clock.advanceSeconds(61);
    const updated = canonical(clock.now());
    await ok(server, db('updateRecords', token, { tableName: 'timed', sourceData: [{ id: ids[0], label: 'b' }] }));
    const after = await record('timed', ids[0]);
    assert.equal(after.made, inserted);
    assert.equal(after.changed, updated);
  });

  it("a transaction's inserts are timed on the clock too", async function () {
    await ok(server, db('createTable', token, { tableName: 'timed_tx', fields }));
    clock.advanceSeconds(62);
    const inserted = canonical(clock.now());
    const { transactionId } = await ok(server, db('createTransaction', token));
    const { ids } = await ok(server, db('insertRecords', token, { tableName: 'timed_tx', sourceData: [{ label: 'a' }], transactionId }));
    clock.advanceSeconds(1);
    await ok(server, db('commitTransaction', token, { transactionId }));
    const row = await record('timed_tx', ids[0]);
    assert.equal(row.made, inserted);
    assert.equal(row.day, inserted.slice(0, 10));
  });

  it("a topic the store creates before its first message has the clock's createdAt", async function () {
    clock.advanceSeconds(63);
    const info = await server.engine.need('storage').messageLog.ensureTopic('clock/topic');
    assert.equal(info.createdAt, new Date(clock.now()).toISOString());
  });
});
