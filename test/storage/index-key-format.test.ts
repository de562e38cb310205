/**
 * Index keys carry a format version in the catalog: a data folder written before the current
 * format (here: the version entry removed and an index emptied, as an older build's keys would be
 * unusable) gets its indexes rebuilt when it opens, or the open stops naming an index whose rows
 * no longer fit it, changing nothing.
 */
import { strict as assert } from 'node:assert';
import { open } from 'lmdb';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { PersistedTable } from '../../plugins/storage-lmdb/catalog';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { INDEX_KEY_FORMAT } from '../../plugins/storage-lmdb/schema';
import { tempDataDir } from '../helpers/server';
import { readAll } from '../../kernel/storage/stored-values';
import { positionalRows } from '../../kernel/storage/positional-rows';

/** Makes the folder look like one an older build wrote: no key-format entry, and `tamper` applied. */
async function asOlderBuild(dataDir: string, tamper: (root: ReturnType<typeof open>, table: PersistedTable) => void): Promise<void> {
  const root = open({ path: dataDir, maxDbs: 8192, noSubdir: false });
  const catalog = root.openDB<unknown, any[]>('_catalog', {});
  const table = catalog.get(['table', 'main', 'words']) as PersistedTable;
  await root.transaction(() => {
    catalog.removeSync(['key-format']);
    tamper(root, table);
  });
  await root.close();
}

function words(store: StoragePort): string[] {
  return readAll(store.readRecords('main', 'words', { index: 'by_word' })).map((r) => r.values[0] as string);
}

describe('lmdb storage: index-key format', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = tempDataDir('engine-key-format');
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
    await store.createTable('main', 'words', [{ name: 'word', type: 'varchar', length: 20 }]);
    await store.createIndex('main', 'words', 'by_word', { unique: true, fields: [{ name: 'word', ascending: true, size: 8 }] });
    await store.insertValues('main', 'words', positionalRows(store.getTable('main', 'words'), [{ word: 'pear' }, { word: 'éclair' }, { word: 'apple' }]));
    assert.deepEqual(words(store), ['apple', 'pear', 'éclair']);
    await store.close();
  });

  it('a fresh folder records the current format, and reopening rebuilds nothing', async () => {
    const root = open({ path: dataDir, maxDbs: 8192, noSubdir: false });
    assert.equal(root.openDB<unknown, any[]>('_catalog', {}).get(['key-format']), INDEX_KEY_FORMAT);
    await root.close();
  });

  it('rebuilds the indexes of a folder written in an older format when it opens', async () => {
    await asOlderBuild(dataDir, (root, table) => root.openDB(table.indexDbs.by_word, { keyEncoding: 'binary', encoding: 'binary' }).clearSync());
    const infos: string[] = [];
    const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main', log: { info: (m: unknown) => infos.push(String(m)), warn: () => undefined } });
    try {
      assert.deepEqual(words(store), ['apple', 'pear', 'éclair']);
      assert.ok(infos.some((line) => /rebuilt 1 index/.test(line)), infos.join('\n'));
      await assert.rejects(store.insertValues('main', 'words', positionalRows(store.getTable('main', 'words'), [{ word: 'pear' }])), /DUPLICATE|duplicate|unique/i);
    } finally {
      await store.close();
    }
    const again = await openLmdbStorage({ dataDir, defaultDatabase: 'main', log: { info: (m: unknown) => infos.push(String(m)), warn: () => undefined } });
    await again.close();
    assert.equal(infos.filter((line) => /rebuilt/.test(line)).length, 1, 'the second open rebuilds nothing');
  });

  it('stops the open naming an index whose stored rows no longer fit it, and changes nothing', async () => {
    await asOlderBuild(dataDir, (root, table) => {
      const records = root.openDB<unknown[], number>(table.recordsDb, {});
      records.putSync(1, ['a value far longer than eight bytes']); // an older build cut such values
    });
    await assert.rejects(openLmdbStorage({ dataDir, defaultDatabase: 'main' }), (error: Error) => {
      assert.match(error.message, /index "by_word" of table "main\.words".*older key format/);
      return true;
    });
    const root = open({ path: dataDir, maxDbs: 8192, noSubdir: false });
    assert.equal(root.openDB<unknown, any[]>('_catalog', {}).get(['key-format']), undefined, 'not marked upgraded');
    await root.close();
  });
});
