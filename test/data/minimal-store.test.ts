/**
 * The data commands over a store that implements only the required port methods (a second
 * storage plugin need not offer the optional fast paths): same results as with them.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { definePlugin } from '../../kernel/plugin';
import { registerDataCommands } from '../../plugins/data/register-data-commands';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { CommandContext } from '../../kernel/bus/command';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { startServer, type TestServer } from '../helpers/server';

const OPTIONAL = new Set(['insertValues']);

/** The LMDB store seen through the required methods only. */
function requiredOnly(store: StoragePort): StoragePort {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === 'string' && OPTIONAL.has(property)) return undefined;
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function start(minimal: boolean): Promise<{ server: TestServer; exec: <R = any>(name: string, params: unknown) => Promise<R> }> {
  const storagePlugin = definePlugin({
    name: 'storage-under-test',
    async register(engine) {
      const store = await openLmdbStorage({ dataDir: resolve(engine.settings.data_dir), defaultDatabase: engine.settings.default_database_name });
      engine.provide('storage', minimal ? requiredOnly(store) : store);
      registerDataCommands(engine);
      engine.onClose(() => store.close());
    },
  });
  const server = await startServer({ plugins: [], listening_http_port: null, listening_https_port: null }, { extraPlugins: [storagePlugin] });
  const ctx: CommandContext = { principal: server.engine.accounts.principal('admin'), origin: 'internal' };
  return { server, exec: (name, params) => server.engine.bus.execute(name, params, ctx) };
}

async function scenario(minimal: boolean): Promise<unknown[]> {
  const { server, exec } = await start(minimal);
  try {
    assert.equal(server.engine.need('storage').insertValues === undefined, minimal);
    const T = { database: 'main', table: 'people' };
    await exec('table.create', { ...T, fields: [{ name: 'name', type: 'varchar', length: 20 }, { name: 'age', type: 'integer' }, { name: 'born', type: 'date' }] });
    await exec('index.create', { ...T, index: 'by_age', fields: [{ name: 'age' }] });
    const { ids } = await exec('record.insert', { ...T, records: [{ name: 'ann', age: 30, born: '1994-07-11' }, { name: 'bob', age: 20 }, { name: 'cy', age: 40 }] });
    const out: unknown[] = [ids];
    out.push(await exec('record.get', { ...T, ids: [ids[0], 99, ids[2]], format: { dateFormat: 'rest' } }));
    out.push(await exec('record.find', { ...T, index: 'by_age', lower: { values: [25], inclusive: true }, limit: 5 }));
    out.push(await exec('record.find', { ...T, filter: 'age < 35', reverse: true, limit: 5, select: ['name'] }));
    const tx = await exec('transaction.begin', {});
    await exec('record.insert', { ...T, records: [{ name: 'dee', age: 25 }], transactionId: tx.transactionId });
    out.push(await exec('record.find', { ...T, index: 'by_age', limit: 10, transactionId: tx.transactionId }));
    await exec('transaction.rollback', { transactionId: tx.transactionId });
    const cursor = await exec('cursor.open', { ...T, index: 'by_age' });
    out.push(await exec('cursor.fetch', { cursorId: cursor.cursorId, count: 2 }));
    // A filter: the cursor walks in slices.
    const filtered = await exec('cursor.open', { ...T, index: 'by_age', filter: 'age > 25', skip: 1 });
    out.push(await exec('cursor.fetch', { cursorId: filtered.cursorId, count: 5 }));
    out.push(await exec('cursor.fetch', { cursorId: filtered.cursorId, count: 5, direction: 'backward', skip: 0 }));
    out.push(await exec('cursor.fetch', { cursorId: filtered.cursorId, count: 1, from: 'start', skip: 1 }));
    return out;
  } finally {
    await server.close();
  }
}

describe('data commands over a store without the optional port methods', () => {
  it('answer exactly as over the full LMDB store', async () => {
    const full = await scenario(false);
    const minimal = await scenario(true);
    assert.deepEqual(minimal, full);
    const found = full[2] as { records: Array<{ name: string }> };
    assert.deepEqual(found.records.map((r) => r.name), ['ann', 'cy']);
    const names = (i: number): string[] => (full[i] as { records: Array<{ name: string }> }).records.map((r) => r.name);
    assert.deepEqual([names(6), names(7), names(8)], [['cy'], ['ann'], ['cy']]);
  });
});
