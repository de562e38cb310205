/**
 * A consistent, compacted copy of the LMDB environment while it serves (docs/operations.md
 * "Backups and restores"): lmdb-js `backup(path, compact)`, which is LMDB's `mdb_env_copy2` with
 * MDB_CP_COMPACT, run off the main thread. It copies from one read transaction: the snapshot of
 * the moment it starts (every commit acknowledged before is in it), leaving out free pages.
 * Writers go on meanwhile; the pages they free are reused only after the copy's reader ends.
 *
 * The copy is `<folder>/data.mdb`, a data folder the server starts on as it is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { EngineError } from '../../kernel/errors';
import type { BackupProgress } from '../../kernel/storage/storage-port';
import { MAX_DBS } from './environment';
import { noSpaceReason } from './storage-full';

/** How often progress is reported while the copy runs (a terminal's refresh, not a test's wait). */
const PROGRESS_MS = 250;

/**
 * The folder a copy goes to: created 0700 when absent; one that holds anything is refused (a
 * backup never writes over files: it also writes settings.json and tls/ beside the store).
 */
export function prepareCopyFolder(folder: string): string {
  if (typeof folder !== 'string' || folder.length === 0) throw new EngineError('MISSING_PARAMETER', { param: 'folder' });
  const target = path.resolve(folder);
  let present: string[];
  try {
    fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    present = fs.readdirSync(target);
  } catch (error) {
    // A parent that is a file, no permission, a read-only filesystem: the folder given is the problem.
    throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: `${target} cannot be used: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
  }
  if (present.length > 0) {
    const what = present.includes('data.mdb') ? 'already holds a store (data.mdb)' : `is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''})`;
    throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: `${target} ${what}: a backup goes to a new or empty folder` });
  }
  return target;
}

/** The most a compacted copy can take: the pages the environment has used. */
function storeBytes(root: RootDatabase): number {
  const stats = root.getStats() as { pageSize?: number; lastPageNumber?: number };
  return ((stats.lastPageNumber ?? 0) + 1) * (stats.pageSize ?? 4096);
}

/** Copies the environment into `folder` (see prepareCopyFolder); resolves with the copy's size. */
export async function copyEnvironment(root: RootDatabase, folder: string, onProgress?: BackupProgress): Promise<number> {
  const target = prepareCopyFolder(folder);
  const file = path.join(target, 'data.mdb');
  const total = storeBytes(root);
  const sizeNow = (): number => {
    try {
      return fs.statSync(file).size;
    } catch {
      return 0;
    }
  };
  const timer = onProgress ? setInterval(() => onProgress(Math.min(sizeNow(), total), total), PROGRESS_MS) : undefined;
  try {
    // lmdb-js creates `path`'s parent; LMDB writes `<path>/data.mdb` for an environment in a folder.
    await root.backup(target, true);
  } catch (error) {
    // A partial copy looks like a backup and would make the folder refuse the next try: it goes.
    fs.rmSync(file, { force: true });
    const reason = noSpaceReason(error, target);
    if (reason !== undefined) throw new EngineError('STORAGE_FULL', { reason: `${reason} for the copy in ${target}` }, { cause: error });
    throw error;
  } finally {
    if (timer) clearInterval(timer);
  }
  // The copy holds the password hashes: owner only, like the data folder (environment.ts).
  fs.chmodSync(file, 0o600);
  const size = sizeNow();
  onProgress?.(size, Math.max(size, total));
  return size;
}

/**
 * `engine backup` from another process while the server serves: the data folder's environment
 * opened read-only beside the server (LMDB's lock file lets processes share it), copied, closed.
 */
export async function copyDataFolder(dataDir: string, folder: string, onProgress?: BackupProgress): Promise<number> {
  const source = path.resolve(dataDir);
  if (!fs.existsSync(path.join(source, 'data.mdb'))) {
    throw new EngineError('INVALID_PARAMETER', { param: 'data_dir', reason: `${source} holds no store (data.mdb)` });
  }
  if (path.resolve(folder) === source) throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: 'a backup goes to another folder than data_dir' });
  const root = open({ path: source, noSubdir: false, maxDbs: MAX_DBS, readOnly: true });
  try {
    return await copyEnvironment(root, folder, onProgress);
  } finally {
    await root.close();
  }
}
