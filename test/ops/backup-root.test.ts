/**
 * `backup_root` (plugins/storage-lmdb/backup-root.ts): with it set, the admin action
 * `backupDatabase` writes only into folders under it. A folder outside it, one that climbs out
 * with `..`, one reached through a symbolic link that leads out, and the root itself are refused
 * with INVALID_PARAMETER (12012) and nothing is written there; a relative folder goes under it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server';
import { admin, db, login, send, startActionServer } from '../actions/action-client';

describe('ops: backupDatabase writes only under backup_root', function () {
  this.timeout(60_000);
  let server: TestServer | undefined;
  let token: string;
  let scratch: string;
  let root: string;
  let outside: string;

  before(async () => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'engine-backup-root-')));
    root = join(scratch, 'backups');
    outside = join(scratch, 'elsewhere');
    mkdirSync(root);
    mkdirSync(outside);
    symlinkSync(outside, join(root, 'link-out'));
    server = await startActionServer({ backup_root: root });
    token = await login(server);
    const created = await send(server, db('createTable', token, { tableName: 'kept', fields: [{ name: 'n', type: 'integer' }] }));
    assert.equal(created.errorCode, 0, created.errorMessage);
  });

  after(async () => {
    await server?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const backup = (folder: string) => send(server!, admin('backupDatabase', token, { folder }));

  it('a relative folder is written under backup_root', async () => {
    const response = await backup('nightly');
    assert.equal(response.errorCode, 0, response.errorMessage);
    assert.equal(response.result.folder, join(root, 'nightly'));
    assert.ok(existsSync(join(root, 'nightly', 'data.mdb')));
  });

  it('an absolute folder under backup_root is written', async () => {
    const response = await backup(join(root, 'weekly', 'one'));
    assert.equal(response.errorCode, 0, response.errorMessage);
    assert.ok(existsSync(join(root, 'weekly', 'one', 'data.mdb')));
  });

  it('a folder outside backup_root is refused (12012) and nothing is written there', async () => {
    const response = await backup(join(outside, 'copy'));
    assert.equal(response.errorCode, 12012, `${response.errorCode} ${response.errorMessage}`);
    assert.match(response.errorMessage ?? '', /backup_root/);
    assert.deepEqual(readdirSync(outside), []);
  });

  it('a relative folder that climbs out with .. is refused (12012) and nothing is written', async () => {
    const response = await backup('../elsewhere/climbed');
    assert.equal(response.errorCode, 12012, `${response.errorCode} ${response.errorMessage}`);
    assert.deepEqual(readdirSync(outside), []);
  });

  it('a folder reached through a symbolic link that leads outside is refused (12012) and nothing is written', async () => {
    const response = await backup('link-out/copy');
    assert.equal(response.errorCode, 12012, `${response.errorCode} ${response.errorMessage}`);
    assert.deepEqual(readdirSync(outside), []);
  });

  it('backup_root itself is refused (12012): a backup goes into a folder of its own', async () => {
    const response = await backup(root);
    assert.equal(response.errorCode, 12012, `${response.errorCode} ${response.errorMessage}`);
    assert.ok(!existsSync(join(root, 'data.mdb')));
  });
});

describe('ops: a backup_root that does not exist', function () {
  this.timeout(60_000);
  let server: TestServer | undefined;
  let scratch: string;

  after(async () => {
    await server?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('refuses backupDatabase (12012) naming backup_root, and creates nothing', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'engine-backup-root-missing-'));
    const root = join(scratch, 'not-made');
    server = await startActionServer({ backup_root: root });
    const token = await login(server);
    const response = await send(server, admin('backupDatabase', token, { folder: 'nightly' }));
    assert.equal(response.errorCode, 12012, `${response.errorCode} ${response.errorMessage}`);
    assert.match(response.errorMessage ?? '', /backup_root/);
    assert.ok(!existsSync(root));
  });
});
