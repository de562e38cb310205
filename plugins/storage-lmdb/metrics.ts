/**
 * The store's figures for the metrics (kernel/metrics.ts): the LMDB map, the message log's size,
 * the free space of the data folder's filesystem (read at scrape time), and the latency of
 * appends and commits (observed once per append call and at most once per commit).
 */
import { statfs } from 'node:fs/promises';
import type { Database } from 'lmdb';
import type { MetricsRegistry } from '../../kernel/metrics';
import type { LmdbEnvironment } from './environment';
import type { LmdbMessageLog } from './message-log';

interface DbStats {
  pageSize: number;
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
  mapSize: number;
  lastPageNumber: number;
}

const statsOf = (db: Database<any, any>): DbStats => db.getStats() as DbStats;

export function addStorageMetrics(metrics: MetricsRegistry, env: LmdbEnvironment, log: LmdbMessageLog, dataDir: string): void {
  env.commitLatency = metrics.histogram({
    name: 'engine_storage_commit_seconds',
    help: 'How long a write waits for its LMDB commit to be durable (synced), sampled at most once per commit',
  });
  log.appendLatency = metrics.histogram({
    name: 'engine_message_log_append_seconds',
    help: 'From a message log append call (a turn of MQTT publishes, an mq.publish, an insert into an integration table) to its durable answer',
  });
  const liveStats = (db: Database<any, any>): DbStats | undefined => (env.isClosed ? undefined : statsOf(db));
  metrics.add({
    name: 'engine_lmdb_map_size_bytes', help: 'The LMDB map size (it grows as the data does)', kind: 'gauge',
    read: () => liveStats(env.root)?.mapSize ?? 0,
  });
  metrics.add({
    name: 'engine_lmdb_map_used_bytes', help: 'The LMDB map in use (up to its last page; freed pages inside are reused)', kind: 'gauge',
    read: () => {
      const stats = liveStats(env.root);
      return stats ? (stats.lastPageNumber + 1) * stats.pageSize : 0;
    },
  });
  metrics.add({
    name: 'engine_message_log_bytes', help: 'Pages the message log\'s blocks take in LMDB, in bytes (its topic index apart)', kind: 'gauge',
    read: () => {
      const stats = liveStats(log.log);
      return stats ? (stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages) * stats.pageSize : 0;
    },
  });
  metrics.add({
    name: 'engine_message_log_last_sequence', help: 'The message log\'s last durable sequence: messages ever appended (trimmed ones included)', kind: 'gauge',
    read: () => log.lastSequence(),
  });
  metrics.add({
    name: 'engine_data_dir_free_bytes', help: 'Free space the server may use on the data folder\'s filesystem', kind: 'gauge',
    read: async () => {
      const fs = await statfs(dataDir);
      return fs.bavail * fs.bsize;
    },
  });
  metrics.add({
    name: 'engine_data_dir_filesystem_bytes', help: 'Size of the data folder\'s filesystem', kind: 'gauge',
    read: async () => {
      const fs = await statfs(dataDir);
      return fs.blocks * fs.bsize;
    },
  });
}
