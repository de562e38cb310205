/** data_dir holds the password hashes (LMDB) and the TLS key: only its owner may read it. */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call, startServer, tempDataDir, type TestServer } from '../helpers/server';

/** Every path under `dir` (folders and files), recursively. */
function pathsUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? [path, ...pathsUnder(path)] : [path];
  });
}

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

describe('data_dir permissions', () => {
  let server: TestServer | undefined;
  let previousUmask: number;

  // The usual umask, so a folder or file left to the defaults would be readable by others.
  beforeEach(() => { previousUmask = process.umask(0o022); });
  afterEach(async () => {
    process.umask(previousUmask);
    await server?.close();
    server = undefined;
  });

  it('a fresh data folder is created 0700 with every file in it 0600 (LMDB files, TLS pair)', async () => {
    const dataDir = join(tempDataDir(), 'nested', 'data');
    server = await startServer({ data_dir: dataDir, plugins: ['storage-lmdb', 'data', 'http', 'rest'] });
    assert.equal((await call('GET', `${server.https}/`, { auth: null })).status, 200);
    assert.equal((await call('GET', `${server.http}/engine/api/v1/table/main`)).status, 200);

    assert.equal(modeOf(dataDir), '700', 'data_dir');
    const paths = pathsUnder(dataDir);
    for (const name of ['data.mdb', 'lock.mdb', join('tls', 'server-key.pem'), join('tls', 'server-cert.pem')]) {
      assert.ok(paths.includes(join(dataDir, name)), `${name} exists`);
    }
    for (const path of paths) {
      const expected = statSync(path).isDirectory() ? '700' : '600';
      assert.equal(modeOf(path), expected, path);
    }
  });
});
