/**
 * The data file holds only what was stored: LMDB pages are zeroed before use, so bytes the
 * process freed earlier (request bodies, passwords, a certificate file's text) never reach
 * data.mdb or a backup of it. With lmdb-js's `noMemInit` they did: Node 24 wrote the CA bundle it
 * had read at start-up into a fresh data folder.
 *
 * The store runs in a child process of its own (with `--expose-gc`), so that the heap it reuses
 * holds nothing but the marker this test freed there.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDataDir } from '../helpers/server';

const MARKER = 'FREED-HEAP-BYTES-MARKER';

/** Frees ~20 MB of malloc'd buffers filled with the marker, then fills a store through openLmdbStorage. */
const CHILD = `
const { openLmdbStorage } = require(${JSON.stringify(join(__dirname, '../../plugins/storage-lmdb/lmdb-storage'))});
const { positionalRows } = require(${JSON.stringify(join(__dirname, '../../kernel/storage/positional-rows'))});
(async () => {
  let freed = [];
  for (let i = 0; i < 2000; i++) freed.push(Buffer.allocUnsafeSlow(4096 * (1 + (i % 4))).fill(${JSON.stringify(MARKER)}));
  freed = null;
  global.gc();
  const storage = await openLmdbStorage({ dataDir: process.argv[1], defaultDatabase: 'main' });
  for (let t = 0; t < 20; t++) {
    await storage.createTable('main', 't' + t, [{ name: 'n', type: 'integer' }, { name: 's', type: 'lvarchar' }]);
    const rows = Array.from({ length: 200 }, (_, n) => ({ n, s: 'x'.repeat(n * 7) }));
    await storage.insertValues('main', 't' + t, positionalRows(storage.getTable('main', 't' + t), rows));
  }
  await storage.close();
})().catch((error) => { console.error(error); process.exit(1); });
`;

describe('storage: the data file holds no freed heap bytes', function () {
  this.timeout(60_000);

  it('a store filled after the process freed marked memory has no marker in data.mdb', async () => {
    const dataDir = tempDataDir('heap-bytes');
    try {
      const child = spawn(process.execPath, ['--expose-gc', '-e', CHILD, dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      assert.equal(code, 0, stderr);
      const data = readFileSync(join(dataDir, 'data.mdb'));
      assert.ok(data.includes('t19'), 'the store was filled');
      assert.equal(data.includes(MARKER), false, 'freed heap bytes were written into data.mdb');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
