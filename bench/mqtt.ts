/**
 * `npm run bench -- mqtt [--quick] [--only=fanin,fanout,...]`: our MQTT broker against Aedes 1.2
 * (Node.js, in memory) and Mosquitto 2 (C, in memory), all measured in this run on this machine, driven by the MQTT load generator named by
 * BENCH_MQTT_TOOL (a process of its own so it shares no event loop with a broker).
 *
 * Each scenario starts a fresh broker (ours, then Aedes, then Mosquitto; never two at once), measures it, and
 * stops it: the connection count and RSS of one scenario cannot leak into the next, and Aedes,
 * which can overflow its stack when an overload ends (mqemitter recursion), starts clean each time.
 * A scenario that fails against a broker is printed as "n/a (error …)" and the bench goes on.
 *
 * Every scenario runs BENCH_ROUNDS rounds (default 3; `--quick` 1), each round measuring every broker
 * and the disk's bound one after another, and each is reported by its median round: the ratios are
 * of medians, and the per-round ratios of the rows with a target are printed below the tables.
 *
 * Scenarios (16-byte payloads, MQTT 3.1.1, BENCH_SECONDS per measurement after a 1 s warm-up):
 *   fanin         4 QoS 0 publishers → 1 topic → 1 subscriber             delivered msg/s
 *   fanin-topics  the same spread over 10,000 topics (subscriber: T/#)     delivered msg/s
 *   fanout        1 QoS 0 publisher → 1 topic → 50 subscribers             delivered msg/s (total)
 *   qos1-w1       1 QoS 1 publisher, 1 PUBLISH un-acked                     acked msg/s, p99 latency
 *   qos1-w100     1 QoS 1 publisher, 100 PUBLISH un-acked                   acked msg/s, p99 latency
 *   qos1-p16      16 QoS 1 publishers, each 100 PUBLISH un-acked            acked msg/s, p50/p99 latency
 *                 (the QoS 1 scenarios also measure the disk's bound: lmdb-js alone keeping as
 *                 many durable puts in flight, 1, 100 and 1,600, bench/raw-lmdb-window.ts; the
 *                 generator reads their PUBACKs with its framer, see QOS1_PARSER)
 *   idle          10,000 connections (100 in flight), held 1 s              connects/s, KiB per connection (RSS)
 *   flood         4 publishers paced at BENCH_MQTT_FLOOD_RATE msg/s (open loop, default 1,000,000)
 *                 while a second client connects, subscribes and round-trips a QoS 1 message,
 *                 and again once the flood stops
 *
 * `--scrape` (or BENCH_MQTT_SCRAPE=1): instead of the references, ours is measured twice, plain and
 * with the http and metrics plugins loaded and GET /metrics polled every second, so the ratio is the
 * cost of metrics being served and scraped, measured in the same run (docs/operations.md).
 */
import { join } from 'node:path';
import { benchRounds, benchSeconds, formatNumber, formatRatio, intEnv, log, median, removeTempDir, runChildJson, table, tempDir } from './load';
import type { WindowResult } from './raw-lmdb-window';
import { startBroker, type Broker, type BrokerName } from './mqtt-brokers';
import { checkGenerator, runGenerator, sleep, type GeneratorResult } from './mqtt-load';
import { probeBroker, type ProbeResult } from './mqtt-probe';

export const MQTT_SCENARIOS = ['fanin', 'fanin-topics', 'fanout', 'qos1-w1', 'qos1-w100', 'qos1-p16', 'idle', 'flood'] as const;
export type MqttScenario = (typeof MQTT_SCENARIOS)[number];

const PAYLOAD = 16;
const TOPICS = 10_000;
const FANOUT_SUBSCRIBERS = 50;
const QOS1_PUBLISHERS = 16;
/** PUBLISH packets each QoS 1 publisher keeps un-acknowledged in the windowed scenarios. */
const QOS1_WINDOW = 100;
/** The brokers of a normal run: ours and the two references. */
type Compared = 'ours' | 'aedes' | 'mosquitto';
const BROKERS: readonly Compared[] = ['ours', 'aedes', 'mosquitto'];
const BROKER_TITLE: Record<BrokerName, string> = { ours: 'ours', aedes: 'Aedes', mosquitto: 'Mosquitto', 'ours-scraped': 'ours, scraped' };
/** Idle connections cost at most this much broker memory each (the issue's target). */
const IDLE_TARGET_KIB = 4;

interface Settings {
  seconds: number;
  rounds: number;
  connections: number;
  floodRate: number;
  quick: boolean;
  /** Ours plain against ours scraped every second, instead of against the references. */
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
type Bound = { rate: number; p50Ms: number; p99Ms: number; error?: undefined } | { error: string };

export interface MqttReport {
  settings: Settings;
  results: Array<{ scenario: MqttScenario; ours: Measured; aedes: Measured; mosquitto: Measured; scraped?: Measured; bound?: Bound; rounds: Round[] }>;
}

/** One round of a scenario: every broker and the bound, measured one after another. */
type Round = Record<BrokerName, Measured> & { bound?: Bound };

/** A broker's median round by rate; a round that failed counts only when every round failed. */
function medianOf(runs: Measured[]): Measured {
  const measured = runs.filter((run) => run.error === undefined);
  return measured.length ? median(measured, (run) => (run as Figures).rate) : runs[0];
}

function medianBound(runs: Array<Bound | undefined>): Bound | undefined {
  const measured = runs.filter((run): run is Bound & { error?: undefined } => run !== undefined && run.error === undefined);
  return measured.length ? median(measured, (run) => run.rate) : runs[0];
}

/** lmdb-js alone, `window` durable puts in flight: what any broker storing each message could acknowledge. */
async function measureBound(window: number, seconds: number): Promise<Bound> {
  const dataDir = tempDir('bench-mqtt-bound');
  try {
    const result = await runChildJson<WindowResult>('raw LMDB window', join(__dirname, 'raw-lmdb-window.js'), [String(window), String(seconds), dataDir]);
    return { rate: result.putsPerSecond, p50Ms: result.p50Ms, p99Ms: result.p99Ms };
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0] };
  } finally {
    removeTempDir(dataDir);
  }
}

/**
 * The QoS 1 scenarios read PUBACKs with the generator's framer (`--parser frame`), for every
 * broker alike: with mqtt-packet's parser the generator's own parsing of 100 (1,600) PUBACKs a
 * cycle took 150–300 µs of each window-100 cycle, more than the broker's work, and the disk's bound
 * it is compared with has no client at all (docs/benchmarks.md). BENCH_MQTT_QOS1_PARSER=mqtt-packet
 * measures as before.
 */
const QOS1_PARSER = ['--parser', process.env.BENCH_MQTT_QOS1_PARSER ?? 'frame'];

/** Generator arguments of the load scenarios. */
function loadArgs(scenario: Exclude<MqttScenario, 'idle' | 'flood'>, seconds: number): string[] {
  const common = ['--payload', String(PAYLOAD), '--duration', String(seconds), '--warmup', '1'];
  switch (scenario) {
    case 'fanin': return ['--scenario', 'fanin', '--pubs', '4', ...common];
    case 'fanin-topics': return ['--scenario', 'fanin', '--pubs', '4', '--topics', String(TOPICS), ...common];
    case 'fanout': return ['--scenario', 'fanout', '--subs', String(FANOUT_SUBSCRIBERS), ...common];
    case 'qos1-w1': return ['--scenario', 'qos1', '--window', '1', ...QOS1_PARSER, ...common];
    case 'qos1-w100': return ['--scenario', 'qos1', '--window', String(QOS1_WINDOW), ...QOS1_PARSER, ...common];
    case 'qos1-p16': return ['--scenario', 'qos1', '--pubs', String(QOS1_PUBLISHERS), '--window', String(QOS1_WINDOW), ...QOS1_PARSER, ...common];
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
    rounds: quick ? 1 : benchRounds(),
    connections: quick ? 2_000 : intEnv('BENCH_MQTT_CONNECTIONS', 10_000),
    floodRate: intEnv('BENCH_MQTT_FLOOD_RATE', 1_000_000),
    scrape: process.argv.includes('--scrape') || process.env.BENCH_MQTT_SCRAPE === '1',
  };
  const brokers: readonly BrokerName[] = settings.scrape ? ['ours', 'ours-scraped'] : BROKERS;
  const skipped: Measured = { error: 'not measured (--scrape)' };
  const scenarios = chosenScenarios();
  log(`MQTT: ${scenarios.join(', ')}; ${settings.seconds} s per measurement, ${settings.rounds} round(s)${quick ? ' (quick)' : ''}`);
  const results: MqttReport['results'] = [];
  for (const scenario of scenarios) {
    const rounds: Round[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      const measured: Round = { ours: skipped, aedes: skipped, mosquitto: skipped, 'ours-scraped': skipped };
      const label = settings.rounds > 1 ? `${scenario} (round ${round})` : scenario;
      for (const name of brokers) {
        log(`${label}: ${BROKER_TITLE[name]}`);
        measured[name] = await measure(name, scenario, settings);
        log(`${label}: ${BROKER_TITLE[name]} ${describe(measured[name])}`);
      }
      const window = settings.scrape ? undefined : boundWindow(scenario);
      if (window !== undefined) {
        const bound = await measureBound(window, settings.seconds);
        measured.bound = bound;
        log(`${label}: the disk's bound ${bound.error === undefined ? `${formatNumber(bound.rate)}/s` : `n/a (error: ${bound.error})`}`);
      }
      rounds.push(measured);
    }
    const pick = (name: BrokerName): Measured => medianOf(rounds.map((round) => round[name]));
    results.push({
      scenario, ours: pick('ours'), aedes: pick('aedes'), mosquitto: pick('mosquitto'),
      scraped: settings.scrape ? pick('ours-scraped') : undefined, bound: medianBound(rounds.map((round) => round.bound)), rounds,
    });
  }
  return { settings, results };
}

/** Durable puts in flight that bound a QoS 1 scenario (all its publishers' windows together). */
function boundWindow(scenario: MqttScenario): number | undefined {
  switch (scenario) {
    case 'qos1-w1': return 1;
    case 'qos1-w100': return QOS1_WINDOW;
    case 'qos1-p16': return QOS1_PUBLISHERS * QOS1_WINDOW;
    default: return undefined;
  }
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

interface Row { label: string; ours: string; aedes: string; mosquitto: string; vsAedes: string; vsMosquitto: string; target: string; verdict: string }

/** A scenario's goal, as a minimum ratio of ours to a reference (or a maximum, for latency). */
interface Target { text: string; met(ratios: { aedes: number; mosquitto: number; bound: number }): boolean }

const atLeast = (aedes?: number, mosquitto?: number): Target => ({
  text: [aedes && `≥ ${aedes}× Aedes`, mosquitto && `≥ ${mosquitto}× Mosquitto`].filter(Boolean).join(', '),
  met: (r) => (aedes === undefined || r.aedes >= aedes) && (mosquitto === undefined || r.mosquitto >= mosquitto),
});

type Brokers = Record<Compared, Measured>;

function rowsOf(scenario: MqttScenario, measured: Brokers, settings: Settings, bound?: Bound): Row[] {
  const na = (m: Measured): string | undefined => (m.error !== undefined ? `n/a (error: ${m.error})` : undefined);
  const f = { ours: figures(measured.ours), aedes: figures(measured.aedes), mosquitto: figures(measured.mosquitto) };
  const boundRate = bound?.error === undefined ? bound?.rate : undefined;
  const cells = (value: (figures: Figures) => string): Pick<Row, 'ours' | 'aedes' | 'mosquitto'> => ({
    ours: na(measured.ours) ?? (f.ours ? value(f.ours) : '—'),
    aedes: na(measured.aedes) ?? (f.aedes ? value(f.aedes) : '—'),
    mosquitto: na(measured.mosquitto) ?? (f.mosquitto ? value(f.mosquitto) : '—'),
  });
  const verdictOf = (target: Target | undefined, ratios: { aedes: number; mosquitto: number; bound: number }, needed: number[]): string => {
    if (!target) return '';
    return needed.every(Number.isFinite) ? (target.met(ratios) ? 'met' : '**missed**') : 'not measured';
  };
  const rateRow = (label: string, target?: Target, boundTarget?: number): Row => {
    const ours = f.ours?.rate ?? NaN;
    const ratios = { aedes: ours / (f.aedes?.rate ?? NaN), mosquitto: ours / (f.mosquitto?.rate ?? NaN), bound: ours / (boundRate ?? NaN) };
    const goal: Target | undefined = boundTarget === undefined ? target : {
      text: [target?.text, `≥ ${boundTarget}× the disk's bound (${Number.isFinite(ratios.bound) ? formatRatio(ratios.bound) : 'n/a'})`].filter(Boolean).join(', '),
      met: (r) => (target ? target.met(r) : true) && r.bound >= boundTarget,
    };
    const needed = [ours, ...(target?.text.includes('Aedes') ? [ratios.aedes] : []), ...(target?.text.includes('Mosquitto') ? [ratios.mosquitto] : []), ...(boundTarget !== undefined ? [ratios.bound] : [])];
    return {
      label, ...cells((m) => formatNumber(m.rate)), vsAedes: formatRatio(ratios.aedes), vsMosquitto: formatRatio(ratios.mosquitto),
      target: goal?.text ?? '—', verdict: verdictOf(goal, ratios, needed),
    };
  };
  const latencyRow = (label: string, pick: (m: Figures) => number | undefined, maxVsMosquitto?: number): Row => {
    const ours = f.ours ? pick(f.ours) : undefined;
    const vs = (reference?: Figures): number => (ours !== undefined && reference && pick(reference) !== undefined ? ours / (pick(reference) as number) : NaN);
    const ratios = { aedes: vs(f.aedes), mosquitto: vs(f.mosquitto), bound: NaN };
    const target: Target | undefined = maxVsMosquitto === undefined ? undefined : { text: `≤ ${maxVsMosquitto}× Mosquitto's`, met: (r) => r.mosquitto <= maxVsMosquitto };
    return {
      label, ...cells((m) => ms(pick(m))), vsAedes: formatRatio(ratios.aedes), vsMosquitto: formatRatio(ratios.mosquitto),
      target: target?.text ?? '—', verdict: verdictOf(target, ratios, [ratios.mosquitto]),
    };
  };
  const boundRow = (window: number): Row => ({
    label: `QoS 1: the disk's bound (lmdb-js alone, ${formatNumber(window)} durable ${window === 1 ? 'put' : 'puts'} in flight)`,
    ours: bound === undefined ? '—' : bound.error !== undefined ? `n/a (error: ${bound.error})` : formatNumber(bound.rate),
    aedes: '', mosquitto: '',
    vsAedes: formatRatio((boundRate ?? NaN) / (f.aedes?.rate ?? NaN)), vsMosquitto: formatRatio((boundRate ?? NaN) / (f.mosquitto?.rate ?? NaN)),
    target: '—', verdict: '',
  });
  // The latency floor of a durable PUBACK on this disk, beside Mosquitto's (which stores nothing).
  const boundLatencyRow = (window: number, label: string, pick: (b: { p50Ms: number; p99Ms: number }) => number, ofMosquitto: (m: Figures) => number | undefined): Row => {
    const value = bound === undefined || bound.error !== undefined ? undefined : pick(bound);
    const mosquitto = f.mosquitto ? ofMosquitto(f.mosquitto) : undefined;
    return {
      label: `QoS 1: the disk's bound, ${label} put → durable (${formatNumber(window)} in flight)`,
      ours: value === undefined ? '—' : ms(value), aedes: '', mosquitto: '',
      vsAedes: '', vsMosquitto: formatRatio(value !== undefined && mosquitto !== undefined ? value / mosquitto : NaN),
      target: '—', verdict: '',
    };
  };
  const p99 = (m: Figures): number | undefined => m.p99;
  const p50 = (m: Figures): number | undefined => m.p50;
  switch (scenario) {
    case 'fanin': return [rateRow('QoS 0 fan-in, 4 → 1 (msg/s)', atLeast(2, 1))];
    case 'fanin-topics': return [rateRow(`QoS 0 fan-in over ${formatNumber(TOPICS)} topics (msg/s)`, atLeast(2))];
    case 'fanout': return [rateRow(`QoS 0 fan-out, 1 → ${FANOUT_SUBSCRIBERS} (deliveries/s)`, atLeast(2, 1))];
    case 'qos1-w1': return [rateRow('QoS 1, window 1 (acked msg/s)'), boundRow(1), latencyRow('QoS 1, window 1: p99 PUBLISH → PUBACK', p99)];
    case 'qos1-w100': return [
      rateRow(`QoS 1, window ${QOS1_WINDOW} (acked msg/s)`, undefined, 0.85), boundRow(QOS1_WINDOW),
      latencyRow(`QoS 1, window ${QOS1_WINDOW}: p99 PUBLISH → PUBACK`, p99),
    ];
    case 'qos1-p16': return [
      rateRow(`QoS 1, ${QOS1_PUBLISHERS} publishers, window ${QOS1_WINDOW} each (acked msg/s)`, atLeast(undefined, 1)),
      boundRow(QOS1_PUBLISHERS * QOS1_WINDOW),
      latencyRow(`QoS 1, ${QOS1_PUBLISHERS} publishers: p50 PUBLISH → PUBACK`, p50),
      latencyRow(`QoS 1, ${QOS1_PUBLISHERS} publishers: p99 PUBLISH → PUBACK`, p99, 1.5),
      boundLatencyRow(QOS1_PUBLISHERS * QOS1_WINDOW, 'p50', (b) => b.p50Ms, p50),
      boundLatencyRow(QOS1_PUBLISHERS * QOS1_WINDOW, 'p99', (b) => b.p99Ms, p99),
    ];
    case 'idle': {
      const kib = (m: Figures): string => (m.kibPerConnection == null ? '—' : `${m.kibPerConnection.toFixed(2)} KiB`);
      const oursKib = f.ours?.kibPerConnection;
      return [
        rateRow(`${formatNumber(settings.connections)} connections: connects/s`),
        {
          label: `${formatNumber(settings.connections)} idle connections: RSS each`, ...cells(kib), vsAedes: '—', vsMosquitto: '—',
          target: `≤ ${IDLE_TARGET_KIB} KiB`, verdict: oursKib == null ? 'not measured' : oursKib <= IDLE_TARGET_KIB ? 'met' : '**missed**',
        },
      ];
    }
    case 'flood': {
      const served = (when: 'during' | 'after') => cells((m) => (m.probes ? probeText(m.probes[when]) : '—'));
      const oursAfter = f.ours?.probes?.after.ok === true;
      return [
        rateRow(`flood at ${formatNumber(settings.floodRate)} msg/s offered: delivered msg/s`),
        { label: 'flood: a second client served during it', ...served('during'), vsAedes: '—', vsMosquitto: '—', target: '—', verdict: '' },
        {
          label: 'flood: a second client served after it', ...served('after'), vsAedes: '—', vsMosquitto: '—',
          target: 'ours serving', verdict: measured.ours.error !== undefined ? 'not measured' : oursAfter ? 'met' : '**missed**',
        },
      ];
    }
  }
}

/** `--scrape`: ours plain against ours scraped, per scenario (rates; above 1: the scraped broker did less). */
function printScrape(report: MqttReport): void {
  const { settings } = report;
  process.stdout.write(
    `\nMQTT benchmark with metrics scraped: ours (node dist/main.js, plugins storage-lmdb, messaging, mqtt) against ours with\n` +
    `the http and metrics plugins loaded and GET /metrics polled every second (metrics_require_auth false), each a fresh child\n` +
    `process per scenario, in this run. The ratio is plain ÷ scraped (above 1 for a rate: the scraped broker did less); within\n` +
    `noise means metrics cost nothing measurable. Load: mqtt-bench.mjs (BENCH_MQTT_TOOL), MQTT 3.1.1, ${PAYLOAD}-byte payloads,\n` +
    `${settings.seconds} s per measurement after a 1 s warm-up, ${roundsText(settings)}.\n\n`,
  );
  const cell = (m: Measured): string => (m.error !== undefined ? `n/a (error: ${m.error})` : formatNumber(m.rate));
  const rows = report.results.map(({ scenario, ours, scraped = { error: 'not measured' } }) => {
    const [o, s] = [figures(ours), figures(scraped)];
    return [scenario, cell(ours), cell(scraped), formatRatio(o && s ? o.rate / s.rate : NaN), s?.note ?? ''];
  });
  process.stdout.write(`${table(['scenario', 'ours', 'ours, scraped', 'plain ÷ scraped', 'note'], rows)}\n\n`);
}

export function printMqtt(report: MqttReport): void {
  if (report.settings.scrape) return printScrape(report);
  const { settings } = report;
  process.stdout.write(
    `\nMQTT benchmark: ours (node dist/main.js, plugins storage-lmdb, messaging, mqtt) against Aedes 1.2 (defaults: in-memory)\n` +
    `and Mosquitto 2 (C; persistence off, other settings at their defaults), each a fresh child process per scenario; all take\n` +
    `anonymous clients (ours: mqtt_allow_anonymous with role admin, so none checks a password per CONNECT). Ours appends every\n` +
    `message (any QoS) to its durable LMDB log before delivering or acknowledging it; Aedes and Mosquitto keep messages in\n` +
    `memory. Load: mqtt-bench.mjs (BENCH_MQTT_TOOL), MQTT 3.1.1, ${PAYLOAD}-byte payloads, ${settings.seconds} s per measurement after\n` +
    `a 1 s warm-up, ${roundsText(settings)}. Ratios are ours ÷ the reference (for latency, lower is better).\n\n`,
  );
  const rows = report.results.flatMap(({ scenario, ours, aedes, mosquitto, bound }) => rowsOf(scenario, { ours, aedes, mosquitto }, settings, bound));
  process.stdout.write(`${table(['scenario', 'ours', 'Aedes', 'Mosquitto', 'ours ÷ Aedes', 'ours ÷ Mosquitto', 'target', ''],
    rows.map((r) => [r.label, r.ours, r.aedes, r.mosquitto, r.vsAedes, r.vsMosquitto, r.target, r.verdict]))}\n\n`);
  const detail = report.results.flatMap((result) => BROKERS.map((name) => {
    const m = result[name];
    const f = figures(m);
    return f
      ? [result.scenario, BROKER_TITLE[name], `${ms(f.p50)} / ${ms(f.p99)}`, f.cpu == null ? '—' : `${f.cpu}%`, f.rssMb == null ? '—' : `${f.rssMb} MB`, f.note ?? '']
      : [result.scenario, BROKER_TITLE[name], '—', '—', '—', `n/a (error: ${m.error})`];
  }));
  process.stdout.write('Per run: latency p50 / p99 (QoS 0 and flood: publish → delivery; QoS 1: PUBLISH → PUBACK; idle: CONNECT → CONNACK), broker CPU and RSS at the end\n\n');
  process.stdout.write(`${table(['scenario', 'broker', 'p50 / p99', 'broker CPU', 'broker RSS', 'note'], detail)}\n\n`);
  if (settings.rounds > 1) printRounds(report);
}

function roundsText(settings: Settings): string {
  const quick = settings.quick ? ' (--quick)' : '';
  return settings.rounds === 1 ? `one round${quick}` : `the median of ${settings.rounds} rounds (each round measures every broker and the disk's bound one after another)${quick}`;
}

/** Each round's rates and the ratios the targets read, so a median's spread is visible. */
function printRounds(report: MqttReport): void {
  const rate = (m: Measured | Bound | undefined): number => (m === undefined || m.error !== undefined ? NaN : 'rate' in m ? m.rate : NaN);
  const rows = report.results.flatMap(({ scenario, rounds }) => rounds.map((round, index) => [
    scenario, String(index + 1),
    ...(['ours', 'aedes', 'mosquitto'] as const).map((name) => (Number.isFinite(rate(round[name])) ? formatNumber(rate(round[name])) : '—')),
    Number.isFinite(rate(round.bound)) ? formatNumber(rate(round.bound)) : '—',
    formatRatio(rate(round.ours) / rate(round.mosquitto)), formatRatio(rate(round.ours) / rate(round.bound)),
  ]));
  process.stdout.write('Per round: rates (msg/s, deliveries/s or connects/s) and ours ÷ Mosquitto, ours ÷ the disk\'s bound in that round\n\n');
  process.stdout.write(`${table(['scenario', 'round', 'ours', 'Aedes', 'Mosquitto', "disk's bound", 'ours ÷ Mosquitto', "ours ÷ bound"], rows)}\n\n`);
}
