/**
 * `server.backup` (the admin action `backupDatabase`): a consistent, compacted copy of the data
 * folder into a folder of the server's filesystem while it serves: the store (backup.ts), the TLS
 * pair and the settings it runs with (lib/backup). Authorized as any command (the built-in admin
 * role has it; docs/roles.md): it writes files where the server may, or only under `backup_root`
 * when that is set.
 */
import type { Engine } from '../../kernel/engine';
import { writeBackupExtras } from '../../lib/backup/backup-extras';
import { backupTarget } from './backup-root';

export const BACKUP_COMMAND = 'server.backup';

export interface BackupResult {
  folder: string;
  /** The store's copy, in bytes. */
  bytes: number;
  /** Every file written. */
  files: string[];
  durationMs: number;
}

export function registerBackupCommand(engine: Engine): void {
  const log = engine.log.child({ plugin: 'storage-lmdb' });
  engine.bus.register<{ folder: string }, BackupResult>({
    name: BACKUP_COMMAND,
    summary: 'Write a consistent, compacted copy of the data folder (store, TLS pair, settings) into a new folder while serving',
    params: {
      type: 'object',
      required: ['folder'],
      additionalProperties: false,
      properties: { folder: { type: 'string', minLength: 1 } },
    },
    handler: async ({ folder }) => {
      // Only under backup_root when it is set (backup-root.ts).
      const target = backupTarget(folder, engine.settings.backup_root);
      const started = performance.now();
      log.info({ folder: target }, 'backup: started');
      const bytes = await engine.need('storage').backup(target);
      const files = [`${target}/data.mdb`, ...await writeBackupExtras(target, engine.settings)];
      const durationMs = Math.round(performance.now() - started);
      log.info({ folder: target, bytes, durationMs }, 'backup: written');
      return { folder: target, bytes, files, durationMs };
    },
  });
}
