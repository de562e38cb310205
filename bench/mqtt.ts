/**
 * `npm run bench -- mqtt [--quick] [--only=fanin,fanout,...]`: our MQTT broker against Aedes 1.2,
 * both measured in this run on this machine, driven by the MQTT load generator named by
 * BENCH_MQTT_TOOL (a process of its own so it shares no event loop with a broker).
 *
 * Each scenario starts a fresh broker (ours, then Aedes; never both at once), measures it, and
 * stops it: the connection count and RSS of one scenario cannot leak into the next, and Aedes,
 * which can overflow its stack when an overload ends (mqemitter recursion), starts clean each time.
 * A scenario that fails against a broker is printed as "n/a (error …)" and the bench goes on.
 *
 * Scenarios (16-byte payloads, MQTT 3.1.1, BENCH_SECONDS per measurement after a 1 s warm-up):
 *   fanin         4 QoS 0 publishers → 1 topic → 1 subscriber             delivered msg/s
 *   fanin-topics  the same spread over 10,000 topics (subscriber: T/#)     delivered msg/s
 *   fanout        1 QoS 0 publisher → 1 topic → 50 subscribers             delivered msg/s (total)
 *   qos1-w1       1 QoS 1 publisher, 1 PUBLISH un-acked                     acked msg/s, p99 latency
 *   qos1-w100     1 QoS 1 publisher, 100 PUBLISH un-acked                   acked msg/s, p99 latency
 *                 (both QoS 1 scenarios also measure the disk's bound: lmdb-js alone keeping as
 *                 many durable puts in flight, bench/raw-lmdb-window.ts)
 *   idle          10,000 connections (100 in flight), held 1 s              connects/s, KiB per connection (RSS)
 *   flood         4 publishers paced at BENCH_MQTT_FLOOD_RATE msg/s (open loop, default 1,000,000)
 *                 while a second client connects, subscribes and round-trips a QoS 1 message,
 *                 and again once the flood stops
 *
 * `--scrape` (or BENCH_MQTT_SCRAPE=1): the second broker is not Aedes but ours again with the
 * http and metrics plugins loaded and GET /metrics polled every second, so the ratio column is
 * the cost of metrics being served and scraped, measured in the same run (docs/operations.md).
 */
import { join } from 'node:path';
import { benchSeconds, formatNumber, formatRatio, intEnv, log, removeTempDir, runChildJson, table, tempDir } from './load';
import type { WindowResult } from './raw-lmdb-window';
import { startBroker, type Broker, type BrokerName } from './mqtt-brokers';
import { checkGenerator, runGenerator, sleep, type GeneratorResult } from './mqtt-load';
import { probeBroker, type ProbeResult } from './mqtt-probe';

export const MQTT_SCENARIOS = ['fanin', 'fanin-topics', 'fanout', 'qos1-w1', 'qos1-w100', 'idle', 'flood'] as const;
export type MqttScenario = (typeof MQTT_SCENARIOS)[number];

const PAYLOAD = 16;
const TOPICS = 10_000;
const FANOUT_SUBSCRIBERS = 50;
/** Idle connections cost at most this much broker memory each (the issue's target). */
const IDLE_TARGET_KIB = 4;

interface Settings {
  seconds: number;
  connections: number;
  floodRate: number;
  quick: boolean;
  /** The second broker is ours, scraped every second, instead of Aedes. */
  scrape: boolean;
}

interface Figures {
  error?: undefined;
  rate: number;
  p50?: number;
  p99?: number;
  cpu?: number | null;
  rssMb?: number | null;
  kibPerConnection?: number | null;
  note?: string;
  probes?: FloodProbes;
}
/** One broker's figures in one scenario, or why there are none. */
type Measured = { error: string } | Figures;

const figures = (m: Measured): Figures | undefined => (m.error === undefined ? m as Figures : undefined);

interface FloodProbes { during: ProbeResult; after: ProbeResult }

/** The disk's bound of a QoS 1 scenario (acknowledged durable messages per second), or why there is none. */
type Bound = { rate: number; error?: undefined } | { error: string };

export interface MqttReport {
  settings: Settings;
  results: Array<{ scenario: MqttScenario; ours: Measured; aedes: Measured; bound?: Bound }>;
}

/** lmdb-js alone, `window` durable puts in flight: what any broker storing each message could acknowledge. */
async function measureBound(window: number, seconds: number): Promise<Bound> {
  const dataDir = tempDir('bench-mqtt-bound');
  try {
    const result = await runChildJson<WindowResult>('raw LMDB window', join(__dirname, 'raw-lmdb-window.js'), [String(window), String(seconds), dataDir]);
    return { rate: result.putsPerSecond };
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0] };
  } finally {
    removeTempDir(dataDir);
  }
}

/** Generator arguments of the load scenarios. */
function loadArgs(scenario: Exclude<MqttScenario, 'idle' | 'flood'>, seconds: number): string[] {
  const common = ['--payload', String(PAYLOAD), '--duration', String(seconds), '--warmup', '1'];
  switch (scenario) {
    case 'fanin': return ['--scenario', 'fanin', '--pubs', '4', ...common];
    case 'fanin-topics': return ['--scenario', 'fanin', '--pubs', '4', '--topics', String(TOPICS), ...common];
    case 'fanout': return ['--scenario', 'fanout', '--subs', String(FANOUT_SUBSCRIBERS), ...common];
    case 'qos1-w1': return ['--scenario', 'qos1', '--window', '1', ...common];
    case 'qos1-w100': return ['--scenario', 'qos1', '--window', '100', ...common];
  }
}

/** Room for settling, connecting and draining around the measured seconds. */
const slackMs = (seconds: number): number => (seconds + 40) * 1000;

/** "the broker exited" and the error it printed last, if any (e.g. Aedes' stack overflow). */
function exitNote(broker: Broker): string {
  const error = broker.output().split('\n').reverse().find((line) => /^\w*Error\b/.test(line.trim()));
  return error ? `the broker exited (${error.trim().slice(0, 80)})` : 'the broker exited';
}

function failure(result: GeneratorResult): string | undefined {
  if (result.error) return result.error.split('\n')[0];
  if (result.disconnects) return `the broker closed ${result.disconnects} connections`;
  return undefined;
}

async function measureLoad(broker: Broker, scenario: Exclude<MqttScenario, 'idle' | 'flood'>, seconds: number): Promise<Measured> {
  const result = await runGenerator(broker.port, [...loadArgs(scenario, seconds), '--pid', String(broker.pid)], slackMs(seconds));
  const error = failure(result);
  if (error) return { error: broker.alive() ? error : `${error}; ${exitNote(broker)}` };
  const qos1 = scenario.startsWith('qos1');
  const rate = (qos1 ? result.acked_rate : result.deliv_rate) ?? 0;
  if (rate === 0) return { error: qos1 ? 'no PUBACK' : 'nothing delivered' };
  // A broker that dies once the load stops (Aedes can) still measured what it measured.
  const note = broker.alive() ? undefined : exitNote(broker);
  return { rate, p50: result.latency?.p50_ms, p99: result.latency?.p99_ms, cpu: result.broker_cpu_pct, rssMb: result.broker_rss_mb, note };
}

async function measureIdle(broker: Broker, connections: number): Promise<Measured> {
  const result = await runGenerator(broker.port, [
    '--scenario', 'conn', '--conns', String(connections), '--concurrency', '100', '--hold', '1', '--pid', String(broker.pid),
  ], 70_000);
  const error = result.error?.split('\n')[0] ?? (broker.alive() ? undefined : exitNote(broker));
  if (error) return { error };
  if ((result.opened ?? 0) < connections) return { error: `opened ${result.opened ?? 0} of ${connections}: ${JSON.stringify(result.errors)}` };
  const kib = result.broker_kb_per_conn;
  return {
    rate: result.connect_rate ?? 0, cpu: result.broker_cpu_pct, rssMb: result.broker_rss_mb_after,
    kibPerConnection: kib, p50: result.connect_latency?.p50_ms, p99: result.connect_latency?.p99_ms,
    note: result.alive_after_hold === connections ? undefined : `${result.alive_after_hold} of ${connections} still open after 1 s`,
  };
}

async function measureFlood(broker: Broker, seconds: number, rate: number): Promise<Measured> {
  let connected!: () => void;
  const loadStarted = new Promise<void>((resolve) => { connected = resolve; });
  const flood = runGenerator(broker.port, [
    '--scenario', 'fanin', '--pubs', '4', '--payload', String(PAYLOAD), '--rate', String(rate),
    '--duration', String(seconds), '--warmup', '1', '--pid', String(broker.pid),
  ], slackMs(seconds), connected);
  // The second client comes halfway through the measured seconds (after the 1 s warm-up); once
  // it has started it gets its full time, even if the flood ends meanwhile.
  const floodEnded = flood.then((result): ProbeResult => ({ ok: false, error: `the flood ended before the probe: ${failure(result) ?? 'no error'}` }));
  const earlyEnd = await Promise.race([loadStarted.then(() => sleep(1_000 + (seconds * 1000) / 2)).then(() => undefined), floodEnded]);
  const during = earlyEnd ?? await probeBroker(broker.port, 5_000);
  const result = await flood;
  const after = broker.alive() ? await probeBroker(broker.port, 10_000) : { ok: false as const, error: exitNote(broker) };
  const probes = { during, after };
  const notes = [failure(result), broker.alive() ? undefined : exitNote(broker)].filter(Boolean);
  return {
    rate: result.deliv_rate ?? 0, p50: result.latency?.p50_ms, p99: result.latency?.p99_ms, cpu: result.broker_cpu_pct, rssMb: result.broker_rss_mb,
    probes, note: notes.length ? notes.join('; ') : undefined,
  };
}

async function measure(name: BrokerName, scenario: MqttScenario, settings: Settings): Promise<Measured> {
  let broker: Broker;
  try {
    broker = await startBroker(name);
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0] };
  }
  try {
    if (scenario === 'idle') return withScrapes(broker, await measureIdle(broker, settings.connections));
    // The publish scenarios first check that the broker round-trips a QoS 1 message at all.
    const probe = await probeBroker(broker.port, 3_000);
    if (!probe.ok) return { error: probe.error };
    const measured = scenario === 'flood' ? await measureFlood(broker, settings.seconds, settings.floodRate) : await measureLoad(broker, scenario, settings.seconds);
    return withScrapes(broker, measured);
  } finally {
    await broker.stop();
  }
}

/** A scraped broker's figures name how many scrapes it answered; none answered is an error. */
function withScrapes(broker: Broker, measured: Measured): Measured {
  const scrapes = broker.scrapes;
  if (scrapes === undefined || measured.error !== undefined) return measured;
  if (scrapes.ok === 0) return { error: `GET /metrics never answered 200 (${scrapes.failed} failed)` };
  const note = `GET /metrics answered ${scrapes.ok} times${scrapes.failed ? `, ${scrapes.failed} failed` : ''}`;
  return { ...measured, note: measured.note ? `${measured.note}; ${note}` : note };
}

function chosenScenarios(): MqttScenario[] {
  const flag = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length) ?? process.env.BENCH_MQTT_ONLY;
  if (!flag) return [...MQTT_SCENARIOS];
  const wanted = flag.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = wanted.filter((name) => !(MQTT_SCENARIOS as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`unknown MQTT scenario ${unknown.join(', ')}; known: ${MQTT_SCENARIOS.join(', ')}`);
  return MQTT_SCENARIOS.filter((name) => wanted.includes(name));
}

export async function runMqtt(): Promise<MqttReport> {
  checkGenerator();
  const quick = process.argv.includes('--quick');
  const settings: Settings = {
    quick,
    seconds: quick ? 2 : benchSeconds(),
    connections: quick ? 2_000 : intEnv('BENCH_MQTT_CONNECTIONS', 10_000),
    floodRate: intEnv('BENCH_MQTT_FLOOD_RATE', 1_000_000),
    scrape: process.argv.includes('--scrape') || process.env.BENCH_MQTT_SCRAPE === '1',
  };
  const second: BrokerName = settings.scrape ? 'ours-scraped' : 'aedes';
  const secondLabel = settings.scrape ? 'ours, scraped' : 'Aedes';
  const scenarios = chosenScenarios();
  log(`MQTT: ${scenarios.join(', ')}; ${settings.seconds} s per measurement${quick ? ' (quick)' : ''}`);
  const results: MqttReport['results'] = [];
  for (const scenario of scenarios) {
    log(`${scenario}: ours`);
    const ours = await measure('ours', scenario, settings);
    log(`${scenario}: ours ${describe(ours)}; ${secondLabel}`);
    const aedes = await measure(second, scenario, settings);
    log(`${scenario}: ${secondLabel} ${describe(aedes)}`);
    let bound: Bound | undefined;
    if (!settings.scrape && (scenario === 'qos1-w1' || scenario === 'qos1-w100')) {
      bound = await measureBound(scenario === 'qos1-w1' ? 1 : 100, settings.seconds);
      log(`${scenario}: the disk's bound ${bound.error === undefined ? `${formatNumber(bound.rate)}/s` : `n/a (error: ${bound.error})`}`);
    }
    results.push({ scenario, ours, aedes, bound });
  }
  return { settings, results };
}

function describe(measured: Measured): string {
  if (measured.error !== undefined) return `n/a (error: ${measured.error})`;
  return `${formatNumber(measured.rate)}/s`;
}

// ---------------------------------------------------------------------------------------------
// Output.

const ms = (value?: number): string => (value === undefined ? '—' : `${value.toFixed(value < 10 ? 2 : 1)} ms`);

function probeText(probe: ProbeResult): string {
  return probe.ok ? `yes (${ms(probe.totalMs)})` : `no (${probe.error})`;
}

interface Row { label: string; ours: string; aedes: string; ratio: string; target: string; verdict: string }

function rowsOf(scenario: MqttScenario, ours: Measured, aedes: Measured, settings: Settings, bound?: Bound): Row[] {
  const na = (m: Measured): string | undefined => (m.error !== undefined ? `n/a (error: ${m.error})` : undefined);
  const [o, a] = [figures(ours), figures(aedes)];
  const rateRow = (label: string, wanted?: number): Row => {
    // Scraped: the second column is ours again; Aedes' targets do not apply.
    const target = settings.scrape ? undefined : wanted;
    const ratio = o && a ? o.rate / a.rate : NaN;
    return {
      label, ours: na(ours) ?? formatNumber(o?.rate ?? NaN), aedes: na(aedes) ?? formatNumber(a?.rate ?? NaN), ratio: formatRatio(ratio),
      target: target ? `≥ ${target}× Aedes` : '—',
      verdict: !target ? '' : Number.isFinite(ratio) ? (ratio >= target ? 'met' : '**missed**') : 'not measured',
    };
  };
  const p99Row = (label: string): Row => {
    const [op99, ap99] = [o?.p99, a?.p99];
    return { label, ours: na(ours) ?? ms(op99), aedes: na(aedes) ?? ms(ap99), ratio: op99 !== undefined && ap99 !== undefined ? formatRatio(op99 / ap99) : '—', target: '—', verdict: '' };
  };
  const boundRow = (window: number): Row => {
    const ratio = bound?.error === undefined && bound && a ? bound.rate / a.rate : NaN;
    return {
      label: `QoS 1, window ${window}: the disk's bound (lmdb-js alone, ${window} durable ${window === 1 ? 'put' : 'puts'} in flight)`,
      ours: bound === undefined ? '—' : bound.error !== undefined ? `n/a (error: ${bound.error})` : formatNumber(bound.rate),
      aedes: na(aedes) ?? formatNumber(a?.rate ?? NaN), ratio: formatRatio(ratio), target: '—', verdict: '',
    };
  };
  switch (scenario) {
    case 'fanin': return [rateRow('QoS 0 fan-in, 4 → 1 (msg/s)', 2)];
    case 'fanin-topics': return [rateRow(`QoS 0 fan-in over ${formatNumber(TOPICS)} topics (msg/s)`, 2)];
    case 'fanout': return [rateRow(`QoS 0 fan-out, 1 → ${FANOUT_SUBSCRIBERS} (deliveries/s)`, 2)];
    // Scraped: no bound is measured (the second column is ours again, not Aedes).
    case 'qos1-w1': return [rateRow('QoS 1, window 1 (acked msg/s)'), ...(settings.scrape ? [] : [boundRow(1)]), p99Row('QoS 1, window 1: p99 PUBLISH → PUBACK')];
    case 'qos1-w100': return [rateRow('QoS 1, window 100 (acked msg/s)', 1.2), ...(settings.scrape ? [] : [boundRow(100)]), p99Row('QoS 1, window 100: p99 PUBLISH → PUBACK')];
    case 'idle': {
      const kib = (m: Measured): string | undefined => {
        const perConnection = figures(m)?.kibPerConnection;
        return perConnection == null ? undefined : `${perConnection.toFixed(2)} KiB`;
      };
      const oursKib = o?.kibPerConnection;
      return [
        rateRow(`${formatNumber(settings.connections)} connections: connects/s`),
        {
          label: `${formatNumber(settings.connections)} idle connections: RSS each`,
          ours: na(ours) ?? kib(ours) ?? '—', aedes: na(aedes) ?? kib(aedes) ?? '—', ratio: '—',
          target: `≤ ${IDLE_TARGET_KIB} KiB`, verdict: oursKib == null ? 'not measured' : oursKib <= IDLE_TARGET_KIB ? 'met' : '**missed**',
        },
      ];
    }
    case 'flood': {
      const served = (m: Measured, when: 'during' | 'after'): string => {
        const probes = figures(m)?.probes;
        return na(m) ?? (probes ? probeText(probes[when]) : '—');
      };
      const oursAfter = o?.probes?.after.ok === true;
      return [
        rateRow(`flood at ${formatNumber(settings.floodRate)} msg/s offered: delivered msg/s`),
        { label: 'flood: a second client served during it', ours: served(ours, 'during'), aedes: served(aedes, 'during'), ratio: '—', target: '—', verdict: '' },
        {
          label: 'flood: a second client served after it', ours: served(ours, 'after'), aedes: served(aedes, 'after'), ratio: '—',
          target: 'ours serving', verdict: ours.error !== undefined ? 'not measured' : oursAfter ? 'met' : '**missed**',
        },
      ];
    }
  }
}

export function printMqtt(report: MqttReport): void {
  const { settings } = report;
  const second = settings.scrape ? 'ours, scraped' : 'Aedes';
  if (settings.scrape) {
    process.stdout.write(
      `\nMQTT benchmark with metrics scraped: ours (node dist/main.js, plugins storage-lmdb, messaging, mqtt) against ours with\n` +
      `the http and metrics plugins loaded and GET /metrics polled every second (metrics_require_auth false), each a fresh child\n` +
      `process per scenario, in this run. The ratio is plain / scraped (above 1 for a rate: the scraped broker did less);\n` +
      `within noise means metrics cost nothing measurable.\n` +
      `Load: mqtt-bench.mjs (BENCH_MQTT_TOOL), MQTT 3.1.1, ${PAYLOAD}-byte payloads, ${settings.seconds} s per measurement after a 1 s\n` +
      `warm-up, one round${settings.quick ? ' (--quick)' : ''}.\n\n`,
    );
  } else {
    process.stdout.write(
      `\nMQTT benchmark: ours (node dist/main.js, plugins storage-lmdb, messaging, mqtt) against Aedes 1.2 (defaults: in-memory),\n` +
      `each a fresh child process per scenario; both take anonymous clients (ours: mqtt_allow_anonymous with role admin, so\n` +
      `neither checks a password per CONNECT). Ours appends every message (any QoS) to its durable LMDB log before delivering\n` +
      `or acknowledging it; Aedes keeps messages in memory. Load: mqtt-bench.mjs (BENCH_MQTT_TOOL), MQTT 3.1.1, ${PAYLOAD}-byte payloads,\n` +
      `${settings.seconds} s per measurement after a 1 s warm-up, one round${settings.quick ? ' (--quick)' : ''}.\n\n`,
    );
  }
  const rows = report.results.flatMap(({ scenario, ours, aedes, bound }) => rowsOf(scenario, ours, aedes, settings, bound));
  process.stdout.write(`${table(['scenario', 'ours', second, 'ratio', 'target', ''], rows.map((r) => [r.label, r.ours, r.aedes, r.ratio, r.target, r.verdict]))}\n\n`);
  const detail = report.results.flatMap(({ scenario, ours, aedes }) => ([['ours', ours], [second, aedes]] as const).map(([name, m]) => {
    const f = figures(m);
    return f
      ? [scenario, name, `${ms(f.p50)} / ${ms(f.p99)}`, f.cpu == null ? '—' : `${f.cpu}%`, f.rssMb == null ? '—' : `${f.rssMb} MB`, f.note ?? '']
      : [scenario, name, '—', '—', '—', `n/a (error: ${m.error})`];
  }));
  process.stdout.write('Per run: latency p50 / p99 (QoS 0 and flood: publish → delivery; QoS 1: PUBLISH → PUBACK; idle: CONNECT → CONNACK), broker CPU and RSS at the end\n\n');
  process.stdout.write(`${table(['scenario', 'broker', 'p50 / p99', 'broker CPU', 'broker RSS', 'note'], detail)}\n\n`);
}
