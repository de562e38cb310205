/**
 * The integrity check (`engine check`, StoragePort.checkIntegrity) finds what it promises to: an
 * index entry missing or left over, and a topic's index naming a message the log does not hold.
 * The store's files are damaged behind its back (lmdb opened directly), then the store reopened.
 */
import assert from 'node:assert/strict';
import { open } from 'lmdb';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { MessageInput } from '../../kernel/storage/storage-port';
import { positionalRows } from '../../kernel/storage/positional-rows';
import { tempDataDir } from '../helpers/server';

const message = (n: number): MessageInput => ({
  createTs: '2026-01-01T00:00:00.000', payload: { type: 'json', value: String(n) }, qos: 1, retain: false,
  contentType: null, correlationData: null, responseTopic: null, expirySeconds: null, userProperties: null, payloadFormat: null, publisher: null,
});

async function filledStore(dataDir: string): Promise<void> {
  const storage = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
  await storage.createTable('main', 't', [{ name: 'n', type: 'integer' }]);
  await storage.createIndex('main', 't', 'by_n', { fields: [{ name: 'n', ascending: true }] });
  await storage.insertValues('main', 't', positionalRows(storage.getTable('main', 't'), [{ n: 1 }, { n: 2 }, { n: 3 }]));
  await storage.messageLog.append([1, 2, 3].map((n) => ({ topic: 'a/b', message: message(n) })));
  assert.equal(storage.checkIntegrity().ok, true);
  await storage.close();
}

/** Runs `damage` on the raw LMDB environment of the folder. */
async function damage(dataDir: string, harm: (root: ReturnType<typeof open>) => Promise<void>): Promise<void> {
  const root = open({ path: dataDir, noSubdir: false, maxDbs: 8192 });
  await harm(root);
  await root.close();
}

async function reopened(dataDir: string): Promise<StoragePort> {
  return openLmdbStorage({ dataDir, defaultDatabase: 'main' });
}

describe('storage: the integrity check', () => {
  it('passes a sound store and counts what it checked', async () => {
    const dataDir = tempDataDir();
    await filledStore(dataDir);
    const storage = await reopened(dataDir);
    const report = storage.checkIntegrity();
    await storage.close();
    assert.deepEqual({ ...report }, { ok: true, problems: [], tables: 1, records: 3, indexEntries: 3, topics: 1, messages: 3, unpurgedMessages: 0 });
  });

  it('finds an index that lacks a record\'s entry', async () => {
    const dataDir = tempDataDir();
    await filledStore(dataDir);
    await damage(dataDir, async (root) => {
      const name = [...root.getKeys({})].map(String).find((key) => key.startsWith('i:'))!;
      const index = root.openDB(name, { keyEncoding: 'binary', encoding: 'binary' });
      const first = [...index.getKeys({ limit: 1 })][0];
      await index.remove(first);
    });
    const storage = await reopened(dataDir);
    const report = storage.checkIntegrity();
    await storage.close();
    assert.equal(report.ok, false);
    assert.ok(report.problems.some((p) => /index by_n lacks the entry of record/.test(p)), report.problems.join('\n'));
  });

  it('finds a topic index that names a message the log does not hold', async () => {
    const dataDir = tempDataDir();
    await filledStore(dataDir);
    await damage(dataDir, async (root) => {
      const blocks = root.openDB('log:blocks', { encoding: 'binary' });
      const first = [...blocks.getKeys({ limit: 1 })][0];
      await blocks.remove(first);
    });
    const storage = await reopened(dataDir);
    const report = storage.checkIntegrity();
    await storage.close();
    assert.equal(report.ok, false);
    assert.ok(report.problems.some((p) => /topic "a\/b": its index lists message \d+, which the log does not hold/.test(p)), report.problems.join('\n'));
  });
});
