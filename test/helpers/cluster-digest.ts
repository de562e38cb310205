/**
 * A digest of a stopped node's data folder, to compare the nodes of a cluster: every table
 * (definition, rows in record-ID order, the order of each index), every topic (catalog entry and
 * messages), the message core's shared state, the kernel's internal stores, and how far the node
 * applied the stream.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import { readAll } from '../../kernel/storage/stored-values';
import type { EngineNode } from './nats-cluster';
import { call } from './server';

/**
 * Resolves once every node has applied every write any node made before the call, e.g. the
 * claims released as the test's last MQTT clients ended (before the nodes stop, for a digest): a
 * record written through each node (after its earlier writes in its own order), then, on every
 * node, a read of a record nobody wrote, which first applies the stream up to its last record.
 */
export async function converged(nodes: EngineNode[], name: string): Promise<void> {
  const table = `converged_${name}`;
  const created = await call('POST', `${nodes[0].http}/engine/api/v1/table/main/${table}`, { body: { fields: [{ name: 'k', type: 'varchar', length: 20 }] } });
  assert.equal(created.status, 200, created.text);
  for (const node of nodes) {
    const inserted = await call('POST', `${node.http}/engine/api/v1/record/main/${table}`, { body: { k: node.name } });
    assert.equal(inserted.status, 200, inserted.text);
  }
  for (const node of nodes) {
    const missing = await call('GET', `${node.http}/engine/api/v1/record/main/${table}/999999999`);
    assert.equal(missing.status, 404, missing.text);
  }
}

export interface NodeDigest {
  /** The stream record the node applied last. */
  position: unknown;
  tables: string;
  topics: string;
  state: string;
  internal: string;
  /** Per table, its rows (for a test that looks at them). */
  rows: Record<string, unknown[]>;
}

const INTERNAL_STORES = ['accounts', 'roles'];

function plain(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('hex')}`;
    if (v !== null && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      return `bytes:${Buffer.from((v as { data: number[] }).data).toString('hex')}`;
    }
    return v;
  });
}

const hash = (text: string): string => createHash('sha256').update(text).digest('hex');

export async function digestFolder(dataDir: string): Promise<NodeDigest> {
  const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
  try {
    await (store.messageLog as unknown as { purged(): Promise<void> }).purged();
    const tables: Record<string, unknown> = {};
    const rows: Record<string, unknown[]> = {};
    for (const database of store.listDatabases()) {
      for (const name of store.listTables(database)) {
        const def = store.getTable(database, name);
        const all = readAll(store.readRecords(database, name, {}));
        const indexes: Record<string, unknown[]> = {};
        for (const index of def.indexes) indexes[index.name] = readAll(store.readRecords(database, name, { index: index.name })).map((r) => r.id);
        tables[`${database}.${name}`] = { def, rows: all, indexes };
        rows[`${database}.${name}`] = JSON.parse(plain(all)) as unknown[];
      }
    }
    const log = store.messageLog;
    const topics = log.listTopics().map((topic) => ({ ...topic, messages: log.readTopic(topic.topic, { limit: 10_000_000 }) }));
    const internal: Record<string, unknown> = {};
    for (const name of INTERNAL_STORES) internal[name] = [...store.internal(name).entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    return {
      position: store.operations.appliedPosition(),
      tables: hash(plain(tables)),
      topics: hash(plain({ topics, all: log.readFrom(0, 10_000_000) })),
      // Every node's `$SYS/cluster` report (`sys-node/…`) is written on a timer, not by a test's
      // traffic: one may be in flight when the nodes stop, so it is left out of the comparison.
      state: hash(plain([...log.state.entries('')].filter(([key]) => !key.startsWith('sys-node/')))),
      internal: hash(plain(internal)),
      rows,
    };
  } finally {
    await store.close();
  }
}
