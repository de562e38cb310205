import { describeStorageConformance } from '../../kernel/storage/conformance';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';

describeStorageConformance('lmdb', (dataDir) => openLmdbStorage({ dataDir, defaultDatabase: 'main' }));
