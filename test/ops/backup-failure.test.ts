/**
 * backupDatabase that cannot finish (plugins/storage-lmdb/backup.ts): a copy the target's
 * filesystem has no room for is refused with a stable error and leaves no half-written copy (a
 * partial data.mdb looks like a backup and makes the folder refuse the next try); a folder that
 * cannot be made is a clear INVALID_PARAMETER, not an internal error. The target is a small tmpfs
 * made for the test (as root, like full-disk.test.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server';
import { admin, db, login, send, startActionServer } from '../actions/action-client';

describe('ops: a backup that cannot be written leaves nothing behind', function () {
  this.timeout(60_000);
  let server: TestServer | undefined;
  let token: string;
  let mountPoint: string | undefined;
  let mounted = false;

  before(async function () {
    mountPoint = mkdtempSync(join(tmpdir(), 'engine-backup-full-'));
    try {
      // Far less than the store's copy (a 2 MB value is written below).
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', mountPoint], { stdio: 'pipe' });
    } catch (error) {
      throw new Error(`this test mounts a small tmpfs and needs root (mount -t tmpfs): ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
    }
    mounted = true;
    server = await startActionServer();
    token = await login(server);
    const created = await send(server, db('createTable', token, { tableName: 'big', fields: [{ name: 'body', type: 'lvarchar' }] }));
    assert.equal(created.errorCode, 0, created.errorMessage);
    const inserted = await send(server, db('insertRecords', token, { tableName: 'big', sourceData: [{ body: 'x'.repeat(2_000_000) }] }));
    assert.equal(inserted.errorCode, 0, inserted.errorMessage);
  });

  after(async function () {
    await server?.close();
    if (mountPoint && mounted) {
      try {
        execFileSync('umount', [mountPoint], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
      }
    }
    if (mountPoint) rmSync(mountPoint, { recursive: true, force: true });
  });

  it('a copy the filesystem has no room for is refused (STORAGE_FULL) and leaves the folder empty; the server goes on', async () => {
    const folder = join(mountPoint!, 'copy');
    const response = await send(server!, admin('backupDatabase', token, { folder }));
    assert.equal(response.errorCode, 12050, `${response.errorCode} ${response.errorMessage}`);
    assert.ok(!existsSync(join(folder, 'data.mdb')), `a half-written copy was left: ${existsSync(folder) ? readdirSync(folder).join(', ') : ''}`);
    const read = await send(server!, db('getRecordsByTable', token, { tableName: 'big' }));
    assert.equal(read.errorCode, 0, read.errorMessage);
  });

  it('a folder that cannot be made (its parent is a file) is INVALID_PARAMETER (12012), not an internal error', async () => {
    const file = join(mountPoint!, 'a-file');
    writeFileSync(file, '');
    const response = await send(server!, admin('backupDatabase', token, { folder: join(file, 'copy') }));
    assert.equal(response.errorCode, 12012, `${response.errorCode} ${response.errorMessage}`);
  });
});

describe('ops: two backups into one folder at once', function () {
  this.timeout(60_000);
  let server: TestServer | undefined;
  let root: string | undefined;

  after(async function () {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('one writes the copy, the other is refused (12012) and removes nothing of it', async () => {
    server = await startActionServer();
    const token = await login(server);
    const created = await send(server, db('createTable', token, { tableName: 'big', fields: [{ name: 'body', type: 'lvarchar' }] }));
    assert.equal(created.errorCode, 0, created.errorMessage);
    const inserted = await send(server, db('insertRecords', token, { tableName: 'big', sourceData: [{ body: 'x'.repeat(2_000_000) }] }));
    assert.equal(inserted.errorCode, 0, inserted.errorMessage);
    root = mkdtempSync(join(tmpdir(), 'engine-backup-twice-'));
    const folder = join(root, 'copy');
    const answers = await Promise.all([1, 2].map(() => send(server!, admin('backupDatabase', token, { folder }))));
    const codes = answers.map((a) => a.errorCode).sort();
    assert.deepEqual(codes, [0, 12012], answers.map((a) => `${a.errorCode} ${a.errorMessage}`).join('; '));
    const written = answers.find((a) => a.errorCode === 0);
    assert.ok(existsSync(join(folder, 'data.mdb')), 'the copy that was acknowledged is gone');
    assert.equal(statSync(join(folder, 'data.mdb')).size, written.result.bytes);
    // The same through the store's port in one turn (both folder checks before either copy starts).
    const second = join(root, 'same-turn');
    const outcomes = await Promise.allSettled([1, 2].map(() => server!.engine.need('storage').backup(second)));
    const done = outcomes.filter((o): o is PromiseFulfilledResult<number> => o.status === 'fulfilled');
    assert.equal(done.length, 1, outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok')).join('; '));
    assert.equal(statSync(join(second, 'data.mdb')).size, done[0].value);
  });
});

describe('ops: a server stopped while backupDatabase copies', function () {
  this.timeout(90_000);

  it('closes after the copy instead of closing the store under it (which ended the process)', async () => {
    const server = await startActionServer();
    const token = await login(server);
    await send(server, db('createTable', token, { tableName: 'big', fields: [{ name: 'body', type: 'lvarchar' }] }));
    for (let i = 0; i < 20; i++) {
      const inserted = await send(server, db('insertRecords', token, { tableName: 'big', sourceData: [{ body: `${i}`.repeat(4_000_000) }] }));
      assert.equal(inserted.errorCode, 0, inserted.errorMessage);
    }
    const root = mkdtempSync(join(tmpdir(), 'engine-backup-close-'));
    try {
      const folder = join(root, 'copy');
      // The copy starts; the store is closed at once (what a shutdown does after its grace).
      const copying = server.engine.need('storage').backup(folder);
      await server.engine.need('storage').close();
      const bytes = await copying;
      assert.equal(statSync(join(folder, 'data.mdb')).size, bytes);
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
