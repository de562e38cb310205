/** plugins/storage-lmdb: the LMDB store behind the storage port. */
import { resolve } from 'node:path';
import { definePlugin } from '../../kernel/plugin';
import { openLmdbStorage } from './lmdb-storage';
import { registerBackupCommand } from './backup-command';

export default definePlugin({
  name: 'storage-lmdb',
  description: 'LMDB storage (lmdb-js)',
  async register(engine, options) {
    const log = engine.log.child({ plugin: 'storage-lmdb' });
    const unsafeNoSync = unsafeNoSyncRequested(options);
    if (unsafeNoSync) log.warn('unsafe_no_sync: commits are NOT synced to disk; acknowledged writes can be lost (test runs only)');
    const storage = await openLmdbStorage({
      dataDir: resolve(engine.settings.data_dir),
      defaultDatabase: engine.settings.default_database_name,
      log,
      unsafeNoSync,
      clock: engine.clock,
      metrics: engine.metrics,
      minFreeBytes: engine.settings.storage_min_free_bytes,
    });
    engine.provide('storage', storage);
    registerBackupCommand(engine);
    let open = true;
    engine.readiness.add('storage', () => open);
    engine.onClose(() => {
      open = false;
      return storage.close();
    });
  },
});

/**
 * `plugin_options["storage-lmdb"].unsafe_no_sync: true` commits without syncing, so that the
 * durability test can show it fails on such a server. Honoured only with NODE_ENV=test; anywhere
 * else the option stops the start, so it can be neither on by accident nor silently ignored.
 */
function unsafeNoSyncRequested(options: Record<string, unknown>): boolean {
  const requested = options.unsafe_no_sync;
  if (requested === undefined || requested === false) return false;
  if (requested !== true) throw new Error('plugin_options["storage-lmdb"].unsafe_no_sync must be true or false');
  if (process.env.NODE_ENV !== 'test') {
    throw new Error('plugin_options["storage-lmdb"].unsafe_no_sync loses acknowledged writes and is refused unless NODE_ENV=test');
  }
  return true;
}
