/**
 * `npm run bench -- cluster`: writes through a 3-node cluster (plugin cluster-nats, docs/cluster.md)
 * against one node without it, and JetStream alone with entries of a similar size. Measures
 * MQTT QoS 1 (16 publishers, 100 in flight each, spread over the nodes), QoS 0 fan-in (4
 * publishers spread over the nodes, one subscriber), QoS 0 fan-out (one publisher, 12 subscribers
 * spread over the nodes) and REST single inserts (16 clients, one request at a time each).
 * Each scenario connects its clients, runs a warm-up (BENCH_WARMUP_SECONDS, default 10), then
 * BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS each, and reports the round with the median
 * rate. Three nats-servers and the engine nodes (with `npm start`'s Node flags) run as child processes on loopback
 * (test/helpers/nats-cluster.ts, shared with the tests) and stop at the end. `--only=qos1,fanIn,
 * fanOut,rest` measures only those. Besides the rates it prints every process's CPU per 1,000
 * messages (printCluster).
 */
import mqtt, { type MqttClient } from 'mqtt';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineNode, NatsCluster, TestCluster } from '../test/helpers/nats-cluster';
import { benchRounds, benchSeconds, cpuSecondsOf, engineStartFlags, httpJson, basicAuth, log, median, profileArgs } from './load';

const PUBLISHERS = 16;
const WINDOW = 100;
const REST_CLIENTS = 16;
/** JetStream-alone entry sizes: one per MQTT message (a 100-byte payload and its fields), one per REST insert (a records.insert record of one row, as measured). */
const MESSAGE_ENTRY_BYTES = 200;
const INSERT_ENTRY_BYTES = 106;
const FAN_IN_PUBLISHERS = 4;
const FAN_OUT_SUBSCRIBERS = 12;
/** QoS 0 messages a publisher writes before it waits for them to leave (its socket's backlog stays bounded). */
const QOS0_BURST = 200;
const SINGLE_NODE_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];


function connectMqtt(url: string, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { clientId, reconnectPeriod: 0, username: 'admin', password: 'ADMIN' });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

/** What a scenario did: `count` messages (deliveries, inserts) over `seconds`. */
interface Done { count: number; seconds: number }

/**
 * A scenario's clients, connected (and logged in) before anything is measured: `run` drives the
 * load for `seconds` and may be called more than once (a warm-up, then the measurement).
 */
interface Load { run(seconds: number): Promise<Done>; close(): Promise<void> }

/**
 * Seconds of unmeasured load before each measurement (env BENCH_WARMUP_SECONDS, default 10).
 * Every engine process starts just before it is measured, and V8 goes on optimizing (and
 * re-optimizing) its hot code for 15-20 s of load: measured with --trace-opt on a cluster node
 * under QoS 1 load, compiling took 1.1 s of CPU in the first 5 s, 0.2 s in the third and 0.08 s
 * in the fifth. Logins (a password hash each) happen before the warm-up too.
 */
function clusterWarmupSeconds(): number {
  const value = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
  return Number.isFinite(value) && value >= 0 ? value : 10;
}

/** Messages acknowledged at QoS 1 by publishers spread over `urls`. */
async function qos1(urls: string[]): Promise<Load> {
  const clients = await Promise.all(Array.from({ length: PUBLISHERS }, (_, i) => connectMqtt(urls[i % urls.length], `bench-${i}`)));
  const payload = Buffer.alloc(100, 1);
  return {
    run: async (seconds) => {
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
      return { count: acked, seconds };
    },
    close: async () => { await Promise.all(clients.map((client) => client.endAsync())); },
  };
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
 * Counts the messages `clients` receive from now on; `drained()` waits until none came for a
 * second (subscribers a publisher outran are served from the log after it stops), stops counting
 * and returns the count and the time up to the last one received.
 */
function countReceived(clients: MqttClient[]): { drained(): Promise<Done> } {
  const start = performance.now();
  let count = 0;
  let last = start;
  const counted = (): void => { count++; last = performance.now(); };
  for (const client of clients) client.on('message', counted);
  return {
    drained: async () => {
      const limit = performance.now() + 60_000;
      while (performance.now() - last < 1000 && performance.now() < limit) await new Promise((resolve) => setTimeout(resolve, 100));
      for (const client of clients) client.off('message', counted);
      return { count, seconds: (last - start) / 1000 };
    },
  };
}

/** QoS 0 fan-in: publishers spread over `urls`, one subscriber on the first; messages delivered. */
async function qos0FanIn(urls: string[]): Promise<Load> {
  const subscriber = await connectMqtt(urls[0], 'bench-fanin-sub');
  await subscriber.subscribeAsync('fanin/#', { qos: 0 });
  const publishers = await Promise.all(Array.from({ length: FAN_IN_PUBLISHERS }, (_, i) => connectMqtt(urls[i % urls.length], `bench-fanin-${i}`)));
  return {
    run: async (seconds) => {
      const counter = countReceived([subscriber]);
      const end = performance.now() + seconds * 1000;
      await Promise.all(publishers.map((client, i) => publishQos0Until(client, `fanin/p${i}`, end)));
      return counter.drained();
    },
    close: async () => { await Promise.all([...publishers, subscriber].map((client) => client.endAsync(true))); },
  };
}

/** QoS 0 fan-out: one publisher on the first of `urls`, subscribers spread over them; deliveries (all subscribers). */
async function qos0FanOut(urls: string[]): Promise<Load> {
  const subscribers = await Promise.all(Array.from({ length: FAN_OUT_SUBSCRIBERS }, (_, i) => connectMqtt(urls[i % urls.length], `bench-fanout-sub-${i}`)));
  await Promise.all(subscribers.map((client) => client.subscribeAsync('fanout/#', { qos: 0 })));
  const publisher = await connectMqtt(urls[0], 'bench-fanout-pub');
  return {
    run: async (seconds) => {
      const counter = countReceived(subscribers);
      await publishQos0Until(publisher, 'fanout/t', performance.now() + seconds * 1000);
      return counter.drained();
    },
    close: async () => { await Promise.all([publisher, ...subscribers].map((client) => client.endAsync(true))); },
  };
}

/** Single-record REST inserts by clients spread over `https`. */
async function restInserts(https: string[]): Promise<Load> {
  await httpJson('POST', `${https[0]}/engine/api/v1/table/main/bench`, { fields: [{ name: 'v', type: 'integer' }] }, basicAuth('admin', 'ADMIN'));
  return {
    run: async (seconds) => {
      let done = 0;
      const end = performance.now() + seconds * 1000;
      await Promise.all(Array.from({ length: REST_CLIENTS }, async (_, i) => {
        while (performance.now() < end) {
          const r = await httpJson('POST', `${https[i % https.length]}/engine/api/v1/record/main/bench`, { v: i }, basicAuth('admin', 'ADMIN'));
          if (r.status === 200) done++;
        }
      }));
      return { count: done, seconds };
    },
    close: async () => undefined,
  };
}

/** JetStream alone: R3 publishes of `bytes`-byte entries (one per message or insert), `lanes` in flight. */
async function jetStreamAlone(nats: NatsCluster, seconds: number, lanes: number, stream: string, bytes = MESSAGE_ENTRY_BYTES): Promise<number> {
  const nc = await natsConnect({ servers: nats.urls });
  try {
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`], num_replicas: 3 });
    const js = jetstream(nc);
    const data = new Uint8Array(bytes);
    const publishFor = async (duration: number): Promise<number> => {
      let acked = 0;
      const end = performance.now() + duration * 1000;
      await Promise.all(Array.from({ length: lanes }, async () => {
        while (performance.now() < end) {
          await js.publish(`${stream.toLowerCase()}.x`, data);
          acked++;
        }
      }));
      return acked;
    };
    await publishFor(clusterWarmupSeconds());
    return await publishFor(seconds) / seconds;
  } finally {
    await nc.close();
  }
}

/** A process whose CPU a scenario's figures include. */
interface Watched { label: string; pid: number | undefined }

/** A scenario's rate and each watched process's CPU per 1,000 of its messages (ms), the load generator's under GENERATOR. */
interface Measured { rate: number; cpu: Map<string, number> }
const GENERATOR = 'load generator';
/** The suffix of a process's label for its main thread alone (an engine's event loop). */
const MAIN = ' main thread';

/** Connects the scenario's clients, warms up, then measures `seconds` of load. */
async function measured(watched: Watched[], prepare: () => Promise<Load>, seconds: number): Promise<Measured> {
  const load = await prepare();
  const rounds: Measured[] = [];
  try {
    if (clusterWarmupSeconds() > 0) await load.run(clusterWarmupSeconds());
    for (let round = 0; round < benchRounds(); round++) {
      const before = watched.map((w) => (w.pid === undefined ? undefined : cpuSecondsOf(w.pid)));
      const mainBefore = watched.map((w) => (w.pid === undefined ? undefined : cpuSecondsOf(w.pid, true)));
      const generatorBefore = process.cpuUsage();
      const done = await load.run(seconds);
      const generator = process.cpuUsage(generatorBefore);
      const cpu = new Map<string, number>();
      const perThousand = (cpuSeconds: number): number => (done.count === 0 ? NaN : cpuSeconds * 1000 / (done.count / 1000));
      watched.forEach((w, i) => {
        const after = w.pid === undefined ? undefined : cpuSecondsOf(w.pid);
        const was = before[i];
        cpu.set(w.label, after === undefined || was === undefined ? NaN : perThousand(after - was));
        const mainAfter = w.pid === undefined ? undefined : cpuSecondsOf(w.pid, true);
        const mainWas = mainBefore[i];
        cpu.set(`${w.label}${MAIN}`, mainAfter === undefined || mainWas === undefined ? NaN : perThousand(mainAfter - mainWas));
      });
      cpu.set(GENERATOR, perThousand((generator.user + generator.system) / 1e6));
      rounds.push({ rate: done.count / done.seconds, cpu });
    }
  } finally {
    await load.close();
  }
  return median(rounds, (round) => round.rate);
}

const SCENARIOS = ['qos1', 'fanIn', 'fanOut', 'rest'] as const;
type Scenario = typeof SCENARIOS[number];
const SCENARIO_NAMES: Record<Scenario, string> = {
  qos1: 'MQTT QoS 1', fanIn: 'QoS 0 fan-in', fanOut: 'QoS 0 fan-out (per delivery)', rest: 'REST single insert',
};

/** The rates of one target, and (engines) each process's CPU per 1,000 messages. */
export interface ClusterRow { target: string; rates: Record<Scenario, number>; cpu?: Record<Scenario, Map<string, number>> }

/** `--only=qos1,fanIn,...` (or BENCH_CLUSTER_ONLY): the scenarios measured; the others print as –. */
function wantedScenarios(): readonly Scenario[] {
  const flag = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length) ?? process.env.BENCH_CLUSTER_ONLY;
  if (flag === undefined || flag === '') return SCENARIOS;
  const wanted = flag.split(',').map((name) => name.trim());
  const unknown = wanted.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown cluster scenario ${unknown.join(', ')} (known: ${SCENARIOS.join(', ')})`);
  return wanted as Scenario[];
}

async function measureAll(watched: Watched[], loads: Record<Scenario, () => Promise<Load>>, seconds: number): Promise<Pick<ClusterRow, 'rates' | 'cpu'>> {
  const rates = { qos1: NaN, fanIn: NaN, fanOut: NaN, rest: NaN };
  const cpu = Object.fromEntries(SCENARIOS.map((s) => [s, new Map<string, number>()])) as Record<Scenario, Map<string, number>>;
  for (const scenario of wantedScenarios()) {
    const result = await measured(watched, loads[scenario], seconds);
    rates[scenario] = result.rate;
    cpu[scenario] = result.cpu;
  }
  return { rates, cpu };
}

export async function runCluster(): Promise<ClusterRow[]> {
  const seconds = benchSeconds();
  const rows: ClusterRow[] = [];
  log('cluster: 3 nats-servers, 3 nodes');
  const cluster = await TestCluster.start(3, { nodeArgs: (name) => [...engineStartFlags(), ...profileArgs(`cluster-${name}`)] });
  try {
    const mqttUrls = cluster.nodes.map((n) => n.mqtt);
    // Node i reads and writes through nats-server i first (the one beside it): one machine each when deployed.
    const watched: Watched[] = [
      ...cluster.nodes.map((node, i) => ({ label: `engine ${i + 1}`, pid: node.process?.child.pid })),
      ...cluster.nats.servers.map((server, i) => ({ label: `nats ${i + 1}`, pid: server.child?.pid })),
    ];
    rows.push({
      target: '3 nodes (cluster-nats)',
      ...await measureAll(watched, {
        qos1: () => qos1(mqttUrls),
        fanIn: () => qos0FanIn(mqttUrls),
        fanOut: () => qos0FanOut(mqttUrls),
        rest: () => restInserts(cluster.nodes.map((n) => n.http)),
      }, seconds),
    });
    rows.push({
      target: `JetStream alone (R3, one entry per message: ${MESSAGE_ENTRY_BYTES} B; per insert: ${INSERT_ENTRY_BYTES} B)`,
      rates: {
        qos1: wantedScenarios().includes('qos1') ? await jetStreamAlone(cluster.nats, seconds, PUBLISHERS * WINDOW / 16, 'BENCH') : NaN,
        fanIn: wantedScenarios().includes('fanIn') ? await jetStreamAlone(cluster.nats, seconds, FAN_IN_PUBLISHERS * WINDOW, 'BENCHFANIN') : NaN,
        fanOut: NaN,
        // Each REST client waits for its insert, as each lane waits for its entry's acknowledgement.
        rest: wantedScenarios().includes('rest') ? await jetStreamAlone(cluster.nats, seconds, REST_CLIENTS, 'BENCHREST', INSERT_ENTRY_BYTES) : NaN,
      },
    });
  } finally {
    await cluster.stop();
  }
  log('cluster: 1 node without the plugin');
  const nats = await NatsCluster.start(3);
  const dir = mkdtempSync(join(tmpdir(), 'engine-bench-single-'));
  const single = await EngineNode.create('single', dir, nats, 0, { settings: { plugins: SINGLE_NODE_PLUGINS }, nodeArgs: () => [...engineStartFlags(), ...profileArgs('cluster-single')] });
  try {
    await single.start();
    rows.push({
      target: '1 node',
      ...await measureAll([{ label: 'engine', pid: single.process?.child.pid }], {
        qos1: () => qos1([single.mqtt]),
        fanIn: () => qos0FanIn([single.mqtt]),
        fanOut: () => qos0FanOut([single.mqtt]),
        rest: () => restInserts([single.http]),
      }, seconds),
    });
  } finally {
    await single.stop('SIGTERM');
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

const fmt = (n: number): string => (Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const ms = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(n < 10 ? 2 : 1));

/**
 * The rates, then CPU per 1,000 messages of every process. On this machine every process shares
 * the same cores, so the rates measure the co-location; the CPU figures do not depend on it. The
 * last column projects the ratio for one node and its nats-server per machine, were CPU the bound:
 * one node's engine CPU per message ÷ the busiest cluster machine's (engine i + nats-server i).
 */
export function printCluster(rows: ClusterRow[]): void {
  process.stdout.write('\n| target | MQTT QoS 1 msg/s (16 publishers, window 100) | QoS 0 fan-in msg/s (4 → 1) | QoS 0 fan-out deliveries/s (1 → 12) | REST single insert/s (16 clients) |\n|---|---|---|---|---|\n');
  for (const row of rows) process.stdout.write(`| ${row.target} | ${fmt(row.rates.qos1)} | ${fmt(row.rates.fanIn)} | ${fmt(row.rates.fanOut)} | ${fmt(row.rates.rest)} |\n`);
  const cluster = rows.find((row) => row.target.startsWith('3 nodes'))?.cpu;
  const single = rows.find((row) => row.target === '1 node')?.cpu;
  if (cluster === undefined || single === undefined) return;
  process.stdout.write('\nCPU ms per 1,000 messages (user + system, every thread):\n\n| scenario | 1 node: engine | 3 nodes: engines 1 / 2 / 3 | nats-servers 1 / 2 / 3 | load generator: 1 node / 3 nodes | busiest machine of 3 (engine i + nats i) | projected 3 nodes ÷ 1 node, one machine each |\n|---|---|---|---|---|---|---|\n');
  for (const scenario of wantedScenarios()) {
    const c = cluster[scenario];
    const one = single[scenario].get('engine') ?? NaN;
    const machines = [1, 2, 3].map((i) => (c.get(`engine ${i}`) ?? NaN) + (c.get(`nats ${i}`) ?? NaN));
    const busiest = Math.max(...machines);
    process.stdout.write(`| ${SCENARIO_NAMES[scenario]} | ${ms(one)} | ${[1, 2, 3].map((i) => ms(c.get(`engine ${i}`))).join(' / ')} | ${[1, 2, 3].map((i) => ms(c.get(`nats ${i}`))).join(' / ')} | ${ms(single[scenario].get(GENERATOR))} / ${ms(c.get(GENERATOR))} | ${ms(busiest)} | ${(one / busiest).toFixed(2)}× |\n`);
  }
  // An engine's JavaScript runs on one thread: on a machine with cores to spare (its nats-server,
  // LMDB's commits and V8's helpers on others), that thread is the bound instead.
  process.stdout.write('\nCPU ms per 1,000 messages of the engines\' main threads (the JavaScript event loop):\n\n| scenario | 1 node | 3 nodes: 1 / 2 / 3 | projected 3 nodes ÷ 1 node, the busiest event loop the bound |\n|---|---|---|---|\n');
  for (const scenario of wantedScenarios()) {
    const c = cluster[scenario];
    const one = single[scenario].get(`engine${MAIN}`) ?? NaN;
    const busiest = Math.max(...[1, 2, 3].map((i) => c.get(`engine ${i}${MAIN}`) ?? NaN));
    process.stdout.write(`| ${SCENARIO_NAMES[scenario]} | ${ms(one)} | ${[1, 2, 3].map((i) => ms(c.get(`engine ${i}${MAIN}`))).join(' / ')} | ${(one / busiest).toFixed(2)}× |\n`);
  }
}
