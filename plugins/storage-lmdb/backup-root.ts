/**
 * `backup_root` (docs/operations.md "Backups and restores"): when set, the admin action
 * `backupDatabase` writes only under that folder, so the `server.backup` grant cannot be used to
 * drop files anywhere the server process may write. A relative `folder` is taken under the root.
 *
 * Symbolic links are followed before the check: the deepest part of the target that exists is
 * resolved with realpath, so `root/link -> /etc` does not lead out of the root.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineError } from '../../kernel/errors';

/**
 * The folder a `backupDatabase` call may write to: `folder` itself when no root is set. Under a
 * root, the folder is made (0700) once checked and checked again as made, before anything is
 * written into it (nothing swapped a link meanwhile).
 */
export function backupTarget(folder: string, backupRoot: string | null): string {
  if (backupRoot === null) return path.resolve(folder);
  const root = realRoot(backupRoot);
  const target = path.resolve(root, folder);
  assertUnder(realPathOfExisting(target), root, folder);
  try {
    fs.mkdirSync(target, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: `${target} cannot be used: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
  }
  assertUnder(fs.realpathSync(target), root, folder);
  return target;
}

function realRoot(backupRoot: string): string {
  try {
    return fs.realpathSync(path.resolve(backupRoot));
  } catch (error) {
    // A root that is missing is a setting to fix, not a folder to create on a guess.
    throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: `backup_root (${path.resolve(backupRoot)}) cannot be used: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
  }
}

/** `target` with its longest existing prefix resolved through realpath (the rest is yet to be made). */
function realPathOfExisting(target: string): string {
  const missing: string[] = [];
  let existing = target;
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...missing.reverse());
    } catch (error) {
      const parent = path.dirname(existing);
      // Only a part that does not exist yet is skipped; anything else (a file as a parent, no permission) is refused.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === existing) {
        throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: `${target} cannot be used: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
      }
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

function assertUnder(real: string, root: string, folder: string): void {
  const relative = path.relative(root, real);
  // The root itself is refused too: a backup goes into a folder of its own under it.
  if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    throw new EngineError('INVALID_PARAMETER', { param: 'folder', reason: `${folder} is not a folder under backup_root: backups are written only there` });
  }
}
