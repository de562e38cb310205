/**
 * `npm run bench -- cluster`: writes through a 3-node cluster (plugin cluster-nats, docs/cluster.md)
 * against one node without it, and JetStream alone with entries of a similar size. Measures
 * MQTT QoS 1 (16 publishers, 100 in flight each, spread over the nodes) and REST single inserts
 * (16 clients, one request at a time each), BENCH_SECONDS each. Three nats-servers and the engine
 * nodes run as child processes on loopback (test/helpers/nats-cluster.ts) and stop at the end.
 * Not measured yet: QoS 0 fan-in, fan-out to subscribers spread over the nodes.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineNode, NatsCluster, TestCluster } from '../test/helpers/nats-cluster';
import { benchSeconds, httpJson, basicAuth, log } from './load';

const PUBLISHERS = 16;
const WINDOW = 100;
const REST_CLIENTS = 16;
const SINGLE_NODE_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];

export interface ClusterRow { target: string; qos1: number; rest: number }

function connectMqtt(url: string, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { clientId, reconnectPeriod: 0, username: 'admin', password: 'ADMIN' });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

/** Messages per second acknowledged at QoS 1 by publishers spread over `urls`. */
async function qos1(urls: string[], seconds: number): Promise<number> {
  const clients = await Promise.all(Array.from({ length: PUBLISHERS }, (_, i) => connectMqtt(urls[i % urls.length], `bench-${i}`)));
  const payload = Buffer.alloc(100, 1);
  let acked = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(clients.map(async (client, i) => {
    const lane = async (): Promise<void> => {
      while (performance.now() < end) {
        await client.publishAsync(`bench/p${i}`, payload, { qos: 1 });
        acked++;
      }
    };
    await Promise.all(Array.from({ length: WINDOW }, lane));
  }));
  await Promise.all(clients.map((client) => client.endAsync()));
  return acked / seconds;
}

/** Single-record REST inserts per second by clients spread over `https`. */
async function restInserts(https: string[], seconds: number): Promise<number> {
  await httpJson('POST', `${https[0]}/engine/api/v1/table/main/bench`, { fields: [{ name: 'v', type: 'integer' }] }, basicAuth('admin', 'ADMIN'));
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: REST_CLIENTS }, async (_, i) => {
    while (performance.now() < end) {
      const r = await httpJson('POST', `${https[i % https.length]}/engine/api/v1/record/main/bench`, { v: i }, basicAuth('admin', 'ADMIN'));
      if (r.status === 200) done++;
    }
  }));
  return done / seconds;
}

/** JetStream alone: R3 publishes of 200-byte entries, 100 in flight per publisher. */
async function jetStreamAlone(nats: NatsCluster, seconds: number): Promise<number> {
  const nc = await natsConnect({ servers: nats.urls });
  try {
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BENCH', subjects: ['bench.>'], num_replicas: 3 });
    const js = jetstream(nc);
    const data = new Uint8Array(200);
    let acked = 0;
    const end = performance.now() + seconds * 1000;
    await Promise.all(Array.from({ length: PUBLISHERS * WINDOW / 16 }, async () => {
      while (performance.now() < end) {
        await js.publish('bench.x', data);
        acked++;
      }
    }));
    return acked / seconds;
  } finally {
    await nc.close();
  }
}

export async function runCluster(): Promise<ClusterRow[]> {
  const seconds = benchSeconds();
  const rows: ClusterRow[] = [];
  log('cluster: 3 nats-servers, 3 nodes');
  const cluster = await TestCluster.start(3);
  try {
    const mqttUrls = cluster.nodes.map((n) => n.mqtt);
    rows.push({ target: '3 nodes (cluster-nats)', qos1: await qos1(mqttUrls, seconds), rest: await restInserts(cluster.nodes.map((n) => n.http), seconds) });
    rows.push({ target: 'JetStream alone (R3, 200 B)', qos1: await jetStreamAlone(cluster.nats, seconds), rest: NaN });
  } finally {
    await cluster.stop();
  }
  log('cluster: 1 node without the plugin');
  const nats = await NatsCluster.start(3);
  const dir = mkdtempSync(join(tmpdir(), 'engine-bench-single-'));
  const single = await EngineNode.create('single', dir, nats, 0, { settings: { plugins: SINGLE_NODE_PLUGINS } });
  try {
    await single.start();
    rows.push({ target: '1 node', qos1: await qos1([single.mqtt], seconds), rest: await restInserts([single.http], seconds) });
  } finally {
    await single.stop('SIGTERM');
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function printCluster(rows: ClusterRow[]): void {
  const fmt = (n: number): string => (Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
  process.stdout.write('\n| target | MQTT QoS 1 msg/s (16 publishers, window 100) | REST single insert/s (16 clients) |\n|---|---|---|\n');
  for (const row of rows) process.stdout.write(`| ${row.target} | ${fmt(row.qos1)} | ${fmt(row.rest)} |\n`);
}
