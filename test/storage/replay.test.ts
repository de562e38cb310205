/**
 * Replay: a store's operation entries, applied in order to fresh stores, give the same store
 * (docs/storage.md, "Operation entries and replay").
 *
 * A real engine records every entry its storage accepts from its first write on (a wrapper of the
 * storage-lmdb plugin taps it at once). A mixed workload runs through the real protocols: REST
 * record writes, db actions with a transaction spanning requests (and one rolled back after it
 * reserved ids), mq actions (publish, an API session, topic retention, a topic delete), and MQTT
 * at QoS 0, 1 and 2 with a persistent session that drops while messages arrive, and retained
 * messages set and cleared. The recorded entries are then applied to two fresh data folders, and
 * a digest of every table (definition, rows, index order, next record id), topic (catalog entry,
 * messages), state entry (sessions, retained pointers, configuration) and internal store of each
 * is compared with the digest of the store that produced them.
 */
import { readAll } from '../../kernel/storage/stored-values';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, call, type TestServer } from '../helpers/server';
import { login, ok, db } from '../actions/action-client';
import { mq } from '../actions/mq/mq-client';
import { MQTT_PORTS } from '../mqtt/mqtt-helpers';
import { closeClient, dropClient, openClient, publishOk, subscribeOk } from '../mqtt/session-helpers';
import storageLmdb from '../../plugins/storage-lmdb';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import { definePlugin } from '../../kernel/plugin';
import { findPlugin } from '../../kernel/load-plugins';
import { positionalRows } from '../../kernel/storage/positional-rows';
import { decodeRecord, encodeRecord } from '../../plugins/cluster-nats/record-codec';

/** Loaded after the recording storage (given as objects, so that it comes first). */
const PLUGINS = ['data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];

/** storage-lmdb, with every entry of its store recorded from the first one on. */
function recordingStorage(recorded: OperationEntry[]) {
  return definePlugin({
    ...storageLmdb,
    async register(engine, options) {
      await storageLmdb.register(engine, options);
      engine.need('storage').operations.tap((entry) => recorded.push(decodeRecord(encodeRecord([entry]))[0]) /* as the cluster's stream carries it */);
    },
  });
}

/** Plain JSON for a digest: bytes as hex, big integers as text. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('hex')}`;
    if (v !== null && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      return `bytes:${Buffer.from((v as { data: number[] }).data).toString('hex')}`;
    }
    return v;
  }));
}

/**
 * Everything a replay must reproduce: each table's definition, rows (record-ID order), the order
 * of each index and the id its next insert gets; each topic's catalog entry and messages; the
 * message core's shared state; the internal stores named.
 */
async function digest(store: StoragePort, internalStores: string[]): Promise<Record<string, unknown>> {
  const tables: Record<string, unknown> = {};
  for (const database of store.listDatabases()) {
    for (const name of store.listTables(database)) {
      const def = store.getTable(database, name);
      const rows = readAll(store.readRecords(database, name, {}));
      const indexes: Record<string, number[]> = {};
      for (const index of def.indexes) indexes[index.name] = readAll(store.readRecords(database, name, { index: index.name })).map((r) => r.id);
      tables[`${database}.${name}`] = { def, rows, indexes };
    }
  }
  const log = store.messageLog;
  const topics = log.listTopics().map((topic) => ({ ...topic, messages: log.readTopic(topic.topic, { limit: 1_000_000 }) }));
  const state = [...log.state.entries('')];
  const internal: Record<string, unknown> = {};
  for (const name of internalStores) internal[name] = [...store.internal(name).entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const result = plain({ databases: store.listDatabases(), tables, topics, all: log.readFrom(0, 1_000_000), state, internal }) as Record<string, unknown>;
  // The id the next insert gets (reservations of transactions, committed or not, included).
  const nextIds: Record<string, unknown> = {};
  for (const database of store.listDatabases()) {
    for (const name of store.listTables(database)) {
      if (store.getTable(database, name).topic !== null) continue;
      nextIds[`${database}.${name}`] = await store.insertValues(database, name, positionalRows(store.getTable(database, name), [{}])).then((ids) => ids[0], (error: { id?: string }) => error.id);
    }
  }
  result.nextIds = nextIds;
  return result;
}

/** Applies entries to a fresh store in its own folder; returns its digest. */
async function replay(entries: OperationEntry[], internalStores: string[], folders: string[]): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'engine-replay-'));
  folders.push(dataDir);
  const store = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
  try {
    await store.operations.apply(entries);
    await (store.messageLog as unknown as { purged(): Promise<void> }).purged();
    return await digest(store, internalStores);
  } finally {
    await store.close();
  }
}

describe('storage: replaying operation entries', function () {
  this.timeout(120_000);
  const folders: string[] = [];
  after(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }); });

  it('the entries of a mixed REST, db, mq and MQTT workload, applied to two fresh folders, give the same tables, indexes, topics, sessions and retained entries as the store that produced them', async function () {
    const recorded: OperationEntry[] = [];
    const server: TestServer = await startServer({ plugins: [], ...MQTT_PORTS }, {
      extraPlugins: [recordingStorage(recorded), ...PLUGINS.map((name) => findPlugin(name))],
    });
    folders.push(server.dataDir);
    try {
      await workload(server);
    } finally {
      await server.close({ keepData: true }); // what closing writes (sessions, checkpoints) is recorded too
    }

    const ops = new Set(recorded.map((entry) => entry.op));
    for (const op of ['table.create', 'index.create', 'columns.add', 'records.insert', 'records.replace', 'records.patch', 'records.delete',
      'ids.reserve', 'transaction.commit', 'messages.append', 'topic.delete', 'topic.trim', 'state.put', 'state.remove', 'internal.put']) {
      assert.ok(ops.has(op as OperationEntry['op']), `the workload made a ${op} entry`);
    }
    const internalStores = [...new Set(recorded.flatMap((entry) => (entry.op === 'internal.put' || entry.op === 'internal.remove' ? [entry.store] : [])))];

    // The store that produced the entries, as it is on disk once the engine is closed.
    const source = await openLmdbStorage({ dataDir: server.dataDir, defaultDatabase: 'main' });
    let original: Record<string, unknown>;
    try {
      await (source.messageLog as unknown as { purged(): Promise<void> }).purged();
      original = await digest(source, internalStores);
    } finally {
      await source.close();
    }
    // The digest covers what the workload made.
    const tables = original.tables as Record<string, { rows: unknown[] }>;
    assert.ok(tables['main.people'].rows.length >= 5, 'REST and db rows');
    assert.ok((original.topics as unknown[]).length >= 4, 'topics');
    const stateKeys = (original.state as Array<[string, unknown]>).map(([key]) => key);
    assert.ok(stateKeys.some((key) => key.startsWith('session/')), 'persistent sessions');
    assert.ok(stateKeys.some((key) => key.startsWith('retained/')), 'retained pointers');
    assert.ok(!stateKeys.includes('retained/replay/mqtt/cleared'), 'the cleared retained message has no pointer');

    const first = await replay(recorded, internalStores, folders);
    const second = await replay(recorded, internalStores, folders);
    assert.deepEqual(first, second, 'two replays of the same entries are identical');
    assert.deepEqual(first, original, 'a replay is identical to the store that produced the entries');
  });
});

/** The workload, through REST, db actions, mq actions and MQTT. */
async function workload(server: TestServer): Promise<void> {
  const rest = `${server.http}/engine/api/v1`;
  const expectOk = async (label: string, request: Promise<{ status: number; text: string; json: any }>) => {
    const response = await request;
    assert.ok(response.status >= 200 && response.status < 300, `${label}: ${response.status} ${response.text}`);
    return response.json;
  };
  // REST: a table with an automatic timestamp, a unique index, record writes.
  await expectOk('create table', call('POST', `${rest}/table/main/people`, {
    body: { fields: [
      { name: 'name', type: 'varchar', length: 20 }, { name: 'age', type: 'integer' },
      { name: 'added', type: 'timestamp', autoValue: 'timestampOnInsert' }, { name: 'photo', type: 'binary', length: 4 },
    ] },
  }));
  await expectOk('create index', call('POST', `${rest}/index/main/people/by_name`, { body: { fields: [{ name: 'name' }], unique: true } }));
  const created = await expectOk('insert', call('POST', `${rest}/record/main/people`, { body: [{ name: 'Ann', age: 30 }, { name: 'Bob', age: 40, photo: '01020304' }] }));
  const [ann, bob] = created._ids as number[];
  await expectOk('insert one', call('POST', `${rest}/record/main/people`, { body: { name: 'Cy', age: 50 } }));
  await expectOk('replace', call('PUT', `${rest}/record/main/people/${ann}`, { body: { name: 'Ann', age: 31 } }));
  await expectOk('patch', call('PATCH', `${rest}/record/main/people/${bob}`, { body: { age: 41 } }));
  await expectOk('delete', call('DELETE', `${rest}/record/main/people/${bob}`));

  // db actions: writes, a column added, a transaction over several requests, one rolled back.
  const token = await login(server);
  await ok(server, db('insertRecords', token, { tableName: 'people', sourceData: [{ name: 'Di', age: 60 }, { name: 'Ed', age: 70 }] }));
  await ok(server, db('alterTable', token, { tableName: 'people', addFields: [{ name: 'city', type: 'varchar', length: 10 }] }));
  const { ids: [fay] } = await ok(server, db('insertRecords', token, { tableName: 'people', sourceData: [{ name: 'Fay', city: 'Oslo' }] }));
  await ok(server, db('updateRecords', token, { tableName: 'people', sourceData: [{ id: fay, age: 22 }] }));
  const abandoned = (await ok(server, db('createTransaction', token))).transactionId;
  await ok(server, db('insertRecords', token, { tableName: 'people', sourceData: [{ name: 'Ghost1' }, { name: 'Ghost2' }], transactionId: abandoned }));
  const { transactionId } = await ok(server, db('createTransaction', token));
  await ok(server, db('insertRecords', token, { tableName: 'people', sourceData: [{ name: 'Hal', age: 1 }], transactionId }));
  await ok(server, db('insertRecords', token, { tableName: 'people', sourceData: [{ name: 'Ivy', age: 2 }], transactionId }));
  await ok(server, db('insertRecords', token, { tableName: 'people', sourceData: [{ name: 'Jo', age: 3 }] })); // between the two, outside
  await ok(server, db('updateRecords', token, { tableName: 'people', sourceData: [{ id: ann, city: 'Rome' }], transactionId }));
  await ok(server, db('deleteRecords', token, { tableName: 'people', ids: [fay], transactionId }));
  await ok(server, db('commitTransaction', token, { transactionId }));
  await ok(server, db('rollbackTransaction', token, { transactionId: abandoned }));

  // mq actions: publishes, an API session that reads (its position moves), retention, a topic delete.
  await ok(server, mq('publishMessagesToMq', token, { topic: 'replay/api/kept', messages: [1, 2, 3, 4, 5].map((n) => ({ payload: { n } })) }));
  await ok(server, mq('createMqApiSession', token, { clientName: 'replay-api' }));
  await ok(server, mq('subscribeToMq', token, { clientName: 'replay-api', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'replay/api/#' }] }));
  await ok(server, mq('publishMessagesToMq', token, { topic: 'replay/api/read', messages: [{ payload: 'a', mqttPayloadType: 'utf8' }, { payload: 'b', mqttPayloadType: 'utf8' }] }));
  await ok(server, mq('getMessagesFromMqApiSession', token, { clientName: 'replay-api', maxMessages: 1 }));
  await ok(server, mq('configureTopic', token, { topic: 'replay/api/kept', retentionMessages: 2 })); // trims 1..3 at once
  await ok(server, mq('publishMessagesToMq', token, { topic: 'replay/api/gone', messages: [{ payload: 'x', mqttPayloadType: 'utf8' }] }));
  await ok(server, mq('deleteTopic', token, { topic: 'replay/api/gone' }));

  // MQTT: QoS 0/1/2 to a persistent session, which drops while messages arrive; retained set and cleared.
  const subscriber = await openClient(server, { clientId: 'replay-sub', clean: false, protocolVersion: 4 });
  await subscribeOk(subscriber.client, 'replay/mqtt/#', { qos: 2 });
  const publisher = await openClient(server, { clientId: 'replay-pub', clean: true, protocolVersion: 5 });
  await publishOk(publisher.client, 'replay/mqtt/a', 'q0', { qos: 0 });
  await publishOk(publisher.client, 'replay/mqtt/a', 'q1', { qos: 1 });
  await publishOk(publisher.client, 'replay/mqtt/a', 'q2', { qos: 2 });
  await subscriber.inbox.waitForPayload('q2');
  const burst = Array.from({ length: 20 }, (_, i) => publishOk(publisher.client, 'replay/mqtt/b', `burst-${i}`, { qos: (i % 2) + 1 as 1 | 2 }));
  await subscriber.inbox.waitForPayload('burst-0');
  await dropClient(subscriber); // while the burst is being delivered
  await Promise.all(burst);
  await publishOk(publisher.client, 'replay/mqtt/b', 'while-away', { qos: 1 });
  const again = await openClient(server, { clientId: 'replay-sub', clean: false, protocolVersion: 4 });
  await again.inbox.waitForPayload('while-away');
  await publishOk(publisher.client, 'replay/mqtt/retained', 'kept', { qos: 1, retain: true });
  await publishOk(publisher.client, 'replay/mqtt/cleared', 'soon gone', { qos: 1, retain: true });
  await publishOk(publisher.client, 'replay/mqtt/cleared', '', { qos: 1, retain: true });
  await again.inbox.waitForCount(1, (m) => m.topic === 'replay/mqtt/cleared' && m.payload === '');
  await closeClient(again);
  await closeClient(publisher);
}
