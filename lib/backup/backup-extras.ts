/**
 * What a backup holds besides the store's copy (docs/operations.md "Backups and restores"): the
 * TLS pair the server uses, as `<folder>/tls/server-cert.pem` and `server-key.pem` (where a data
 * folder keeps a generated pair, so the copy uses it as it is), and `<folder>/settings.json`, the
 * settings it ran with, its `data_dir` the backup folder. Restoring is starting on the copy:
 * `engine --config <folder>/settings.json`. Files 0600, folders 0700: the key and the password
 * hashes are in them.
 */
import { copyFile, chmod, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Settings } from '../../kernel/settings';

export const BACKUP_SETTINGS_FILE = 'settings.json';

/** Copies the TLS pair (when there is one) and writes the settings; returns the files written. */
export async function writeBackupExtras(folder: string, settings: Settings): Promise<string[]> {
  const written: string[] = [];
  const pair = tlsPairOf(settings);
  if (pair) {
    const dir = join(folder, 'tls');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    for (const [from, name] of [[pair.cert, 'server-cert.pem'], [pair.key, 'server-key.pem']] as const) {
      const to = join(dir, name);
      await copyFile(from, to);
      await chmod(to, 0o600);
      written.push(to);
    }
  }
  // The copy's own pair (in its tls folder) replaces files named elsewhere.
  const restored: Settings = { ...settings, data_dir: folder, tls_cert_file: null, tls_key_file: null };
  const file = join(folder, BACKUP_SETTINGS_FILE);
  await writeFile(file, `${JSON.stringify(restored, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  written.push(file);
  return written;
}

/** The files of the TLS pair in use: the ones the settings name, else the generated pair in the data folder. */
function tlsPairOf(settings: Settings): { cert: string; key: string } | undefined {
  if (settings.tls_cert_file && settings.tls_key_file) return { cert: settings.tls_cert_file, key: settings.tls_key_file };
  const cert = join(settings.data_dir, 'tls', 'server-cert.pem');
  const key = join(settings.data_dir, 'tls', 'server-key.pem');
  return existsSync(cert) && existsSync(key) ? { cert, key } : undefined;
}
