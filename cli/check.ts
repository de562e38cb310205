/**
 * `engine check <folder>`: the integrity check of a data folder (a backup's copy, or a stopped
 * server's folder): every index consistent with its table, every topic's index with the log. Prints
 * the report as JSON; exits 0 when it is sound, 1 when not (docs/operations.md).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openLmdbStorage } from '../plugins/storage-lmdb/lmdb-storage';
import { otherProcessesUsing } from '../plugins/storage-lmdb/folder-in-use';

export async function checkCommand(args: readonly string[]): Promise<number> {
  const folder = args.find((arg) => !arg.startsWith('--'));
  if (!folder) {
    process.stderr.write('usage: engine check <folder>\n');
    return 2;
  }
  const dataDir = resolve(folder);
  if (!existsSync(join(dataDir, 'data.mdb'))) {
    process.stderr.write(`engine check: ${dataDir} holds no store (data.mdb)\n`);
    return 2;
  }
  const users = otherProcessesUsing(dataDir);
  if (users.length > 0) {
    process.stderr.write(`engine check: ${dataDir} is open in process ${users.join(', ')} (a running server?): check a backup of it (engine backup) or stop the server first\n`);
    return 2;
  }
  const storage = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
  try {
    const report = storage.checkIntegrity();
    process.stdout.write(`${JSON.stringify({ folder: dataDir, ...report }, null, 2)}\n`);
    return report.ok ? 0 : 1;
  } finally {
    await storage.close();
  }
}
