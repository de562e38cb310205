import assert from 'node:assert/strict';
import type { CommandContext } from '../../kernel/bus/command';
import type { ApiSessionSettings } from '../../kernel/sessions/api-sessions';
import type { ReadSlices, RecordCursor } from '../../kernel/storage/storage-port';
import type { StoragePort } from '../../kernel/storage/storage-port';
import { CursorRegistry } from '../../plugins/data/cursor-registry';
import { TransactionRegistry } from '../../plugins/data/transaction-commands';
import { IdleExpiry } from '../../kernel/idle-expiry';
import { ManualClock } from '../helpers/manual-clock';
import { startData, type DataFixture } from './data-helpers';

const SESSION_SETTINGS: ApiSessionSettings = {
  description: '', defaultApi: 'db', defaultDatabaseName: 'main', defaultOwnerName: 'admin',
  defaultBinaryFormat: 'hex', defaultVariantFormat: 'json', defaultNumberFormat: 'number', defaultValidateMqttPayload: true,
  defaultResponseOptions: {}, idleConnectionTimeoutSeconds: 3600, idleCursorTimeoutSeconds: 600,
};

describe('data commands: cursors and transactions', () => {
  let f: DataFixture;
  let reader: CommandContext;
  let other: CommandContext;
  const T = { database: 'main', table: 'nums' };

  const sessionCtx = (account: string): { ctx: CommandContext; token: string } => {
    const session = f.server.engine.apiSessions.create(account, SESSION_SETTINGS);
    return { ctx: { principal: f.server.engine.accounts.principal(account), origin: 'actions', sessionId: session.id }, token: session.authToken };
  };

  before(async () => {
    f = await startData();
    await f.server.engine.accounts.create('reader4', 'secret-password', ['reader']);
    await f.server.engine.accounts.create('admin2', 'secret-password', ['admin']);
    reader = { principal: f.server.engine.accounts.principal('reader4'), origin: 'internal' };
    other = { principal: f.server.engine.accounts.principal('admin2'), origin: 'internal' };
    await f.exec('table.create', { ...T, fields: [{ name: 'n', type: 'integer' }, { name: 'label', type: 'varchar', length: 10 }] });
    await f.exec('record.insert', { ...T, records: Array.from({ length: 10 }, (_, i) => ({ n: i, label: `l${i}` })) });
    await f.exec('index.create', { ...T, index: 'by_n_desc', fields: [{ name: 'n', ascending: false }] });
  });
  after(async () => { await f.server.close(); });

  const ns = (result: any): number[] => result.records.map((r: any) => r.n);

  describe('cursor.*', () => {
    it('opens, fetches pages forward and backward, and closes', async () => {
      const { cursorId, fields } = await f.exec('cursor.open', { ...T, index: 'by_n_desc', skip: 2, select: ['n'] });
      assert.equal(typeof cursorId, 'string');
      assert.ok(cursorId.length >= 20);
      assert.deepEqual(fields.map((c: any) => c.name), ['n']);
      let page = await f.exec('cursor.fetch', { cursorId, count: 3 });
      assert.deepEqual(ns(page), [7, 6, 5]);
      assert.equal(page.more, true);
      assert.deepEqual(Object.keys(page.records[0]).sort(), ['id', 'n']);
      page = await f.exec('cursor.fetch', { cursorId, count: 2, skip: 1 });
      assert.deepEqual(ns(page), [3, 2]);
      page = await f.exec('cursor.fetch', { cursorId, count: 10 });
      assert.deepEqual(ns(page), [1, 0]);
      assert.equal(page.more, false);
      page = await f.exec('cursor.fetch', { cursorId, count: 2, direction: 'backward' });
      assert.equal(page.records.length, 2);
      page = await f.exec('cursor.fetch', { cursorId, count: 1, format: { numberFormat: 'string' } });
      assert.equal(typeof page.records[0].n, 'string');
      assert.deepEqual(await f.exec('cursor.close', { cursorId }), {});
      await f.fails('cursor.fetch', { cursorId, count: 1 }, 'CURSOR_NOT_FOUND');
      await f.fails('cursor.close', { cursorId }, 'CURSOR_NOT_FOUND');
    });

    it('applies bounds and filters like record.find', async () => {
      const { cursorId } = await f.exec('cursor.open', { ...T, lower: { values: [3] }, filter: 'n < 6', reverse: true });
      const page = await f.exec('cursor.fetch', { cursorId, count: 10 });
      assert.deepEqual(ns(page), [5, 4, 3, 2]); // record ids 3.. hold n 2..
      await f.exec('cursor.close', { cursorId });
    });

    it('validates its params like record.find', async () => {
      await f.fails('cursor.open', { ...T, index: 'nosuch' }, 'INDEX_NOT_FOUND');
      await f.fails('cursor.open', { database: 'main', table: 'nosuch' }, 'TABLE_NOT_FOUND');
      await f.fails('cursor.open', { ...T, filter: 'n ==' }, 'FILTER_SYNTAX');
      await f.fails('cursor.open', { ...T, lower: { values: [1, 2] } }, 'INVALID_QUERY');
      await f.fails('cursor.fetch', { cursorId: 'x' }, 'MISSING_PARAMETER');
      await f.fails('cursor.fetch', { cursorId: 'x', count: 0 }, 'INVALID_PARAMETER');
      await f.fails('cursor.fetch', { cursorId: 'x', count: 1, direction: 'sideways' }, 'INVALID_PARAMETER');
      await f.fails('cursor.fetch', { cursorId: 'nosuch', count: 1 }, 'CURSOR_NOT_FOUND');
      await f.fails('cursor.close', {}, 'MISSING_PARAMETER');
    });

    it('a cursor of another account or session is CURSOR_NOT_FOUND', async () => {
      const { cursorId } = await f.exec('cursor.open', { ...T });
      await f.fails('cursor.fetch', { cursorId, count: 1 }, 'CURSOR_NOT_FOUND', other);
      await f.fails('cursor.close', { cursorId }, 'CURSOR_NOT_FOUND', other);
      const { ctx } = sessionCtx('admin');
      await f.fails('cursor.fetch', { cursorId, count: 1 }, 'CURSOR_NOT_FOUND', ctx);
      assert.equal((await f.exec('cursor.fetch', { cursorId, count: 1 })).records.length, 1);
      await f.exec('cursor.close', { cursorId });
    });

    it('closes a session\'s cursors when the session ends', async () => {
      const { ctx, token } = sessionCtx('admin');
      const { cursorId } = await f.exec('cursor.open', { ...T }, ctx);
      await f.exec('cursor.fetch', { cursorId, count: 1 }, ctx);
      f.server.engine.apiSessions.end(token);
      await f.fails('cursor.fetch', { cursorId, count: 1 }, 'CURSOR_NOT_FOUND', ctx);
    });

    it('closes cursors of a deleted table', async () => {
      await f.exec('table.create', { database: 'main', table: 'gone', fields: [{ name: 'a', type: 'integer' }] });
      const { cursorId } = await f.exec('cursor.open', { database: 'main', table: 'gone' });
      await f.exec('table.delete', { database: 'main', tables: ['gone'] });
      await f.fails('cursor.fetch', { cursorId, count: 1 }, 'CURSOR_NOT_FOUND');
    });

    it('a reader may use cursors', async () => {
      const { cursorId } = await f.exec('cursor.open', { ...T }, reader);
      assert.equal((await f.exec('cursor.fetch', { cursorId, count: 2 }, reader)).records.length, 2);
      await f.exec('cursor.close', { cursorId }, reader);
    });

    it('the registry expires idle cursors on the engine clock', () => {
      let closed = 0;
      const done = <T>(value: T): ReadSlices<T> => ({ next: () => ({ done: true, value }) });
      const fake: RecordCursor = { fetch: () => done([]), skip: () => done(0), hasMore: () => done(false), moveTo: () => undefined, close: () => { closed++; } };
      const clock = new ManualClock(0);
      const expiry = new IdleExpiry(clock);
      const registry = new CursorRegistry(expiry, () => 1000);
      const base = { owner: 'a', database: 'main', table: {} as any, index: undefined, cursor: fake, select: undefined, format: {} as any, fields: [], encoder: {} as any, filtered: false };
      const one = registry.add(base);
      const two = registry.add(base);
      clock.advanceSeconds(0.9);
      registry.use('a', one.id);
      clock.advanceSeconds(0.6);
      assert.throws(() => registry.use('a', two.id), /does not exist or has expired/);
      assert.equal(closed, 1);
      clock.advanceSeconds(1);
      expiry.sweep();
      assert.equal(registry.size, 0);
      assert.equal(closed, 2);
      expiry.close();
    });
  });

  describe('transaction.*', () => {
    it('writes inside a transaction are invisible until commit', async () => {
      const { transactionId } = await f.exec('transaction.begin', {});
      const { ids } = await f.exec('record.insert', { ...T, records: [{ n: 100 }], transactionId });
      assert.equal((await f.exec('record.get', { ...T, ids })).records[0], null);
      assert.equal((await f.exec('record.get', { ...T, ids, transactionId })).records[0].n, 100);
      // (range reads in a transaction do not merge its own uncommitted writes: storage-lmdb docs)
      await f.exec('record.find', { ...T, filter: 'n == 100', limit: 5, transactionId });
      await f.exec('record.patch', { ...T, records: [{ id: ids[0], values: { label: 'tx' } }], transactionId });
      assert.deepEqual(await f.exec('transaction.commit', { transactionId }), { transactionId });
      assert.equal((await f.exec('record.get', { ...T, ids })).records[0].label, 'tx');
      await f.fails('transaction.commit', { transactionId }, 'TRANSACTION_NOT_FOUND');
    });

    it('rollback discards the writes', async () => {
      const { transactionId } = await f.exec('transaction.begin', {});
      const { ids } = await f.exec('record.insert', { ...T, records: [{ n: 200 }], transactionId });
      assert.deepEqual(await f.exec('transaction.rollback', { transactionId }), { transactionId });
      assert.equal((await f.exec('record.get', { ...T, ids })).records[0], null);
      await f.fails('transaction.rollback', { transactionId }, 'TRANSACTION_NOT_FOUND');
      await f.fails('record.insert', { ...T, records: [{ n: 201 }], transactionId }, 'TRANSACTION_NOT_FOUND');
    });

    it('a transaction of another account or session is TRANSACTION_NOT_FOUND', async () => {
      const { transactionId } = await f.exec('transaction.begin', {});
      await f.fails('transaction.commit', { transactionId }, 'TRANSACTION_NOT_FOUND', other);
      await f.fails('transaction.rollback', { transactionId }, 'TRANSACTION_NOT_FOUND', other);
      await f.fails('record.insert', { ...T, records: [{ n: 300 }], transactionId }, 'TRANSACTION_NOT_FOUND', other);
      await f.fails('record.get', { ...T, ids: [1], transactionId }, 'TRANSACTION_NOT_FOUND', other);
      await f.fails('record.find', { ...T, limit: 1, transactionId }, 'TRANSACTION_NOT_FOUND', other);
      const { ctx } = sessionCtx('admin');
      await f.fails('transaction.commit', { transactionId }, 'TRANSACTION_NOT_FOUND', ctx);
      await f.exec('transaction.rollback', { transactionId });
    });

    it('rolls back a session\'s transactions when the session ends', async () => {
      const { ctx, token } = sessionCtx('admin');
      const { transactionId } = await f.exec('transaction.begin', {}, ctx);
      const { ids } = await f.exec('record.insert', { ...T, records: [{ n: 400 }], transactionId }, ctx);
      f.server.engine.apiSessions.end(token);
      await f.fails('transaction.commit', { transactionId }, 'TRANSACTION_NOT_FOUND', ctx);
      assert.equal((await f.exec('record.get', { ...T, ids })).records[0], null);
    });

    it('validates params', async () => {
      await f.fails('transaction.commit', {}, 'MISSING_PARAMETER');
      await f.fails('transaction.commit', { transactionId: 5 }, 'INVALID_PARAMETER');
      await f.fails('transaction.rollback', { transactionId: 'nosuch' }, 'TRANSACTION_NOT_FOUND');
      await f.fails('record.insert', { ...T, records: [{ n: 1 }], transactionId: 'nosuch' }, 'TRANSACTION_NOT_FOUND');
    });

    it('the registry rolls back transactions left unused too long, on the engine clock', () => {
      let rolledBack = 0;
      const storage = { beginTransaction: () => `t${rolledBack}-${Math.random()}`, rollbackTransaction: () => { rolledBack++; } } as unknown as StoragePort;
      const clock = new ManualClock(0);
      const expiry = new IdleExpiry(clock);
      const registry = new TransactionRegistry(expiry, () => storage, () => 60_000, () => undefined);
      registry.begin('a');
      clock.advanceSeconds(60);
      registry.begin('b');
      assert.equal(registry.size, 2);
      clock.advanceSeconds(1);
      expiry.sweep();
      assert.equal(registry.size, 1);
      assert.equal(rolledBack, 1);
      registry.rollbackAll();
      assert.equal(registry.size, 0);
      expiry.close();
    });

    it('a reader may begin a transaction but not write in it', async () => {
      const { transactionId } = await f.exec('transaction.begin', {}, reader);
      await f.fails('record.insert', { ...T, records: [{ n: 1 }], transactionId }, 'NOT_AUTHORIZED', reader);
      await f.exec('transaction.rollback', { transactionId }, reader);
    });
  });
});
