/**
 * `engine backup <folder> [--config file]`: a consistent, compacted copy of the data folder of a
 * server, running or stopped, with the settings it runs with (the same --config, ENGINE_CONFIG and
 * ENGINE_* variables as the server) and its TLS pair (docs/operations.md "Backups and restores").
 * Progress goes to stderr (one updating line on a terminal); the result to stdout as JSON.
 */
import { resolve } from 'node:path';
import { loadSettings } from '../kernel/settings';
import { writeBackupExtras } from '../lib/backup/backup-extras';
import { copyDataFolder } from '../plugins/storage-lmdb/backup';

export async function backupCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const folder = args.find((arg, i) => !arg.startsWith('--') && !(i > 0 && args[i - 1] === '--config'));
  if (!folder) {
    process.stderr.write('usage: engine backup <folder> [--config settings.json]\n');
    return 2;
  }
  const settings = loadSettings({ argv: args, env });
  const target = resolve(folder);
  const started = performance.now();
  const terminal = process.stderr.isTTY === true;
  let lastShown = -1;
  const progress = (copied: number, total: number): void => {
    const percent = total > 0 ? Math.min(100, Math.floor((copied / total) * 100)) : 0;
    if (percent === lastShown) return;
    lastShown = percent;
    const text = `backup: ${mib(copied)} of at most ${mib(total)} (${percent}%)`;
    process.stderr.write(terminal ? `\r${text}\u001b[K` : `${text}\n`);
  };
  const bytes = await copyDataFolder(settings.data_dir, target, progress);
  if (terminal) process.stderr.write('\n');
  const files = [`${target}/data.mdb`, ...await writeBackupExtras(target, settings)];
  const durationMs = Math.round(performance.now() - started);
  process.stderr.write(`backup: written to ${target} in ${durationMs} ms; restore: engine --config ${target}/settings.json\n`);
  process.stdout.write(`${JSON.stringify({ folder: target, bytes, files, durationMs })}\n`);
  return 0;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
