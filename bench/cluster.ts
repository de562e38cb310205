/**
 * `npm run bench -- cluster`: writes through a 3-node cluster (plugin cluster-nats, docs/cluster.md)
 * against one node without it, and JetStream alone with entries of a similar size. Measures
 * MQTT QoS 1 (16 publishers, 100 in flight each, spread over the nodes), QoS 0 fan-in (4
 * publishers spread over the nodes, one subscriber), QoS 0 fan-out (one publisher, 12 subscribers
 * spread over the nodes) and REST single inserts (16 clients, one request at a time each),
 * BENCH_SECONDS each. Three nats-servers and the engine nodes run as child processes on loopback
 * (test/helpers/nats-cluster.ts, shared with the tests) and stop at the end.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineNode, NatsCluster, TestCluster } from '../test/helpers/nats-cluster';
import { benchSeconds, httpJson, basicAuth, log, profileArgs } from './load';

const PUBLISHERS = 16;
const WINDOW = 100;
const REST_CLIENTS = 16;
const FAN_IN_PUBLISHERS = 4;
const FAN_OUT_SUBSCRIBERS = 12;
/** QoS 0 messages a publisher writes before it waits for them to leave (its socket's backlog stays bounded). */
const QOS0_BURST = 200;
const SINGLE_NODE_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];

export interface ClusterRow { target: string; qos1: number; fanIn: number; fanOut: number; rest: number }

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

/** Publishes QoS 0 messages in bursts until `end` (performance.now() ms). */
async function publishQos0Until(client: MqttClient, topic: string, end: number): Promise<void> {
  const payload = Buffer.alloc(100, 1);
  while (performance.now() < end) {
    for (let i = 1; i < QOS0_BURST; i++) client.publish(topic, payload, { qos: 0 });
    await new Promise<void>((resolve) => client.publish(topic, payload, { qos: 0 }, () => resolve()));
    // QoS 0 callbacks come without a turn of the event loop: yield, or the subscribers in this
    // process read nothing until the publishers stop.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Counts the messages `clients` receive from `start` on; `drained()` waits until none came for a
 * second (subscribers a publisher outran are served from the log after it stops) and returns the
 * count per second up to the last one received.
 */
function countReceived(clients: MqttClient[]): { drained(): Promise<number> } {
  const start = performance.now();
  let count = 0;
  let last = start;
  for (const client of clients) client.on('message', () => { count++; last = performance.now(); });
  return {
    drained: async () => {
      const limit = performance.now() + 60_000;
      while (performance.now() - last < 1000 && performance.now() < limit) await new Promise((resolve) => setTimeout(resolve, 100));
      return count / ((last - start) / 1000);
    },
  };
}

/** QoS 0 fan-in: publishers spread over `urls`, one subscriber on the first; messages delivered per second. */
async function qos0FanIn(urls: string[], seconds: number): Promise<number> {
  const subscriber = await connectMqtt(urls[0], 'bench-fanin-sub');
  await subscriber.subscribeAsync('fanin/#', { qos: 0 });
  const publishers = await Promise.all(Array.from({ length: FAN_IN_PUBLISHERS }, (_, i) => connectMqtt(urls[i % urls.length], `bench-fanin-${i}`)));
  const counter = countReceived([subscriber]);
  const end = performance.now() + seconds * 1000;
  await Promise.all(publishers.map((client, i) => publishQos0Until(client, `fanin/p${i}`, end)));
  const rate = await counter.drained();
  await Promise.all([...publishers, subscriber].map((client) => client.endAsync(true)));
  return rate;
}

/** QoS 0 fan-out: one publisher on the first of `urls`, subscribers spread over them; deliveries per second (all subscribers). */
async function qos0FanOut(urls: string[], seconds: number): Promise<number> {
  const subscribers = await Promise.all(Array.from({ length: FAN_OUT_SUBSCRIBERS }, (_, i) => connectMqtt(urls[i % urls.length], `bench-fanout-sub-${i}`)));
  await Promise.all(subscribers.map((client) => client.subscribeAsync('fanout/#', { qos: 0 })));
  const publisher = await connectMqtt(urls[0], 'bench-fanout-pub');
  const counter = countReceived(subscribers);
  await publishQos0Until(publisher, 'fanout/t', performance.now() + seconds * 1000);
  const rate = await counter.drained();
  await Promise.all([publisher, ...subscribers].map((client) => client.endAsync(true)));
  return rate;
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

/** JetStream alone: R3 publishes of 200-byte entries (one per message), `lanes` in flight. */
async function jetStreamAlone(nats: NatsCluster, seconds: number, lanes: number, stream: string): Promise<number> {
  const nc = await natsConnect({ servers: nats.urls });
  try {
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`], num_replicas: 3 });
    const js = jetstream(nc);
    const data = new Uint8Array(200);
    let acked = 0;
    const end = performance.now() + seconds * 1000;
    await Promise.all(Array.from({ length: lanes }, async () => {
      while (performance.now() < end) {
        await js.publish(`${stream.toLowerCase()}.x`, data);
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
  const cluster = await TestCluster.start(3, { nodeArgs: (name) => profileArgs(`cluster-${name}`) });
  try {
    const mqttUrls = cluster.nodes.map((n) => n.mqtt);
    rows.push({
      target: '3 nodes (cluster-nats)',
      qos1: await qos1(mqttUrls, seconds),
      fanIn: await qos0FanIn(mqttUrls, seconds),
      fanOut: await qos0FanOut(mqttUrls, seconds),
      rest: await restInserts(cluster.nodes.map((n) => n.http), seconds),
    });
    rows.push({
      target: 'JetStream alone (R3, 200 B, one entry per message)',
      qos1: await jetStreamAlone(cluster.nats, seconds, PUBLISHERS * WINDOW / 16, 'BENCH'),
      fanIn: await jetStreamAlone(cluster.nats, seconds, FAN_IN_PUBLISHERS * WINDOW, 'BENCHFANIN'),
      fanOut: NaN,
      rest: NaN,
    });
  } finally {
    await cluster.stop();
  }
  log('cluster: 1 node without the plugin');
  const nats = await NatsCluster.start(3);
  const dir = mkdtempSync(join(tmpdir(), 'engine-bench-single-'));
  const single = await EngineNode.create('single', dir, nats, 0, { settings: { plugins: SINGLE_NODE_PLUGINS }, nodeArgs: () => profileArgs('cluster-single') });
  try {
    await single.start();
    rows.push({
      target: '1 node',
      qos1: await qos1([single.mqtt], seconds),
      fanIn: await qos0FanIn([single.mqtt], seconds),
      fanOut: await qos0FanOut([single.mqtt], seconds),
      rest: await restInserts([single.http], seconds),
    });
  } finally {
    await single.stop('SIGTERM');
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function printCluster(rows: ClusterRow[]): void {
  const fmt = (n: number): string => (Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
  process.stdout.write('\n| target | MQTT QoS 1 msg/s (16 publishers, window 100) | QoS 0 fan-in msg/s (4 → 1) | QoS 0 fan-out deliveries/s (1 → 12) | REST single insert/s (16 clients) |\n|---|---|---|---|---|\n');
  for (const row of rows) process.stdout.write(`| ${row.target} | ${fmt(row.qos1)} | ${fmt(row.fanIn)} | ${fmt(row.fanOut)} | ${fmt(row.rest)} |\n`);
}
