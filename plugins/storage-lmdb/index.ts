/** plugins/storage-lmdb: the LMDB store behind the storage port. */
import { resolve } from 'node:path';
import { definePlugin } from '../../kernel/plugin';
import { openLmdbStorage } from './lmdb-storage';

export default definePlugin({
  name: 'storage-lmdb',
  description: 'LMDB storage (lmdb-js)',
  async register(engine) {
    const storage = await openLmdbStorage({
      dataDir: resolve(engine.settings.data_dir),
      defaultDatabase: engine.settings.default_database_name,
      log: engine.log.child({ plugin: 'storage-lmdb' }),
    });
    engine.provide('storage', storage);
    engine.onClose(() => storage.close());
  },
});
