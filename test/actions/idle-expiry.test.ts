/**
 * Idle expiry of sessions, cursors and transactions through POST /api on a real data folder. The
 * server runs on a clock the test advances (EngineOptions.clock): no sleeps, no timing.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { ManualClock } from '../helpers/manual-clock';
import { admin, db, fails, login, ok, startActionServer } from './action-client';

const EXPIRED_TOKEN = 12031;
const CURSOR_NOT_FOUND = 4080;
const TRANSACTION_NOT_FOUND = 4081;

describe('actions: idle expiry on the engine clock', function () {
  this.timeout(30_000);
  const clock = new ManualClock();
  let server: TestServer;
  let root: string;

  before(async function () {
    server = await startActionServer({
      session_max_idle_timeout_seconds: 600,
      session_max_lifetime_seconds: 3600,
      cursor_idle_timeout_seconds: 120,
      transaction_idle_timeout_seconds: 300,
    }, true, { clock });
    root = await login(server);
    await ok(server, db('createTable', root, { tableName: 'things', fields: [{ name: 'n', type: 'integer' }] }));
    await ok(server, db('insertRecords', root, { tableName: 'things', sourceData: [{ n: 1 }, { n: 2 }, { n: 3 }] }));
  });
  after(async function () {
    await server?.close();
  });
  // the clock moves across tests: every test starts with a fresh session
  beforeEach(async function () {
    root = await login(server);
  });

  const count = async (token: string): Promise<number> => (await ok(server, db('getRecordsByTable', token, { tableName: 'things' }))).totalRecordCount;

  describe('sessions', function () {
    it('expire after idleConnectionTimeoutSeconds without a request; each request resets the idle clock', async function () {
      const token = await login(server, 'admin', 'ADMIN', { idleConnectionTimeoutSeconds: 60 });
      clock.advanceSeconds(60);
      await ok(server, admin('pingSession', token));
      clock.advanceSeconds(59);
      await ok(server, db('listTables', token));
      clock.advanceSeconds(61);
      await fails(server, admin('pingSession', token), EXPIRED_TOKEN);
      await fails(server, db('listTables', token), EXPIRED_TOKEN);
    });

    it('idleConnectionTimeoutSeconds is capped by session_max_idle_timeout_seconds', async function () {
      const created = await ok(server, admin('createSession', undefined, { username: 'admin', password: 'ADMIN', idleConnectionTimeoutSeconds: 86_400 }));
      assert.equal(created.idleConnectionTimeoutSeconds, 600);
      const altered = await ok(server, admin('alterSession', created.authToken, { idleConnectionTimeoutSeconds: 7200 }));
      assert.equal(altered.idleConnectionTimeoutSeconds, 600);
      const shorter = await ok(server, admin('alterSession', created.authToken, { idleConnectionTimeoutSeconds: 30 }));
      assert.equal(shorter.idleConnectionTimeoutSeconds, 30);
      await ok(server, admin('alterSession', created.authToken, { idleConnectionTimeoutSeconds: 3600 }));
      clock.advanceSeconds(601);
      await fails(server, admin('pingSession', created.authToken), EXPIRED_TOKEN);
    });

    it('end at session_max_lifetime_seconds however often they are used', async function () {
      const token = await login(server);
      for (let elapsed = 0; elapsed <= 3600; elapsed += 400) {
        await ok(server, admin('pingSession', token));
        clock.advanceSeconds(400);
      }
      // 4000 s after createSession, last used 400 s ago (well within its idle timeout)
      await fails(server, admin('pingSession', token), EXPIRED_TOKEN);
    });

    it('an ended session takes its cursors and transactions with it (the sweeper, on the same clock)', async function () {
      const token = await login(server, 'admin', 'ADMIN', { idleConnectionTimeoutSeconds: 60 });
      const before = await count(root);
      const { transactionId } = await ok(server, db('createTransaction', token));
      await ok(server, db('insertRecords', token, { tableName: 'things', sourceData: [{ n: 99 }], transactionId }));
      clock.advanceSeconds(61);
      server.engine.idleExpiry.sweep();
      await fails(server, admin('pingSession', token), EXPIRED_TOKEN);
      assert.equal(await count(root), before);
    });
  });

  describe('cursors', function () {
    it('close after cursor_idle_timeout_seconds unused; each fetch resets the idle clock', async function () {
      const { cursorId } = await ok(server, db('getRecordsByTable', root, { tableName: 'things', returnCursor: true }));
      clock.advanceSeconds(120);
      await ok(server, db('getRecordsFromCursor', root, { cursorId, fetchRecords: 1 }));
      clock.advanceSeconds(119);
      await ok(server, db('getRecordsFromCursor', root, { cursorId, fetchRecords: 1 }));
      clock.advanceSeconds(121);
      await fails(server, db('getRecordsFromCursor', root, { cursorId, fetchRecords: 1 }), CURSOR_NOT_FOUND);
    });

    it('a session\'s idleCursorTimeoutSeconds overrides the setting', async function () {
      const token = await login(server, 'admin', 'ADMIN', { idleCursorTimeoutSeconds: 30 });
      const { cursorId } = await ok(server, db('getRecordsByTable', token, { tableName: 'things', returnCursor: true }));
      clock.advanceSeconds(31);
      await fails(server, db('getRecordsFromCursor', token, { cursorId, fetchRecords: 1 }), CURSOR_NOT_FOUND);
    });
  });

  describe('transactions', function () {
    it('are rolled back after transaction_idle_timeout_seconds unused; each use resets the idle clock', async function () {
      const before = await count(root);
      const { transactionId } = await ok(server, db('createTransaction', root));
      await ok(server, db('insertRecords', root, { tableName: 'things', sourceData: [{ n: 7 }], transactionId }));
      clock.advanceSeconds(299);
      await ok(server, db('insertRecords', root, { tableName: 'things', sourceData: [{ n: 8 }], transactionId }));
      clock.advanceSeconds(301);
      await fails(server, db('insertRecords', root, { tableName: 'things', sourceData: [{ n: 9 }], transactionId }), TRANSACTION_NOT_FOUND);
      await fails(server, db('commitTransaction', root, { transactionId }), TRANSACTION_NOT_FOUND);
      assert.equal(await count(root), before);
    });
  });
});
