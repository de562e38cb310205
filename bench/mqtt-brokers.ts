/**
 * The three brokers of `npm run bench -- mqtt`, each a child process on 127.0.0.1 and a free port:
 * ours (`node dist/main.js` with the Node flags of `npm start`, plugins storage-lmdb, messaging and
 * mqtt, a fresh temporary data folder), Aedes (bench/aedes-server.ts) and Mosquitto (Debian's
 * `mosquitto`, written in C: no persistence, anonymous clients, its other settings at their
 * defaults). A broker counts as started once it answers a CONNECT.
 *
 * The children and folders made here are removed when the bench ends, fails or is interrupted;
 * only those children are ever signalled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { delimiter, join } from 'node:path';
import { engineStartFlags, freePort, HOST, log, profileArgs, removeTempDir, tempDir } from './load';
import { probeBroker } from './mqtt-probe';

/** `ours-scraped`: ours with the http and metrics plugins, GET /metrics polled every second (`--scrape`). */
export type BrokerName = 'ours' | 'aedes' | 'mosquitto' | 'ours-scraped';

/** How often the scraper of `ours-scraped` polls GET /metrics, as a monitoring system would (or more often). */
const SCRAPE_INTERVAL_MS = 1000;

/** Where Debian puts the broker (/usr/sbin is not on every user's PATH), or the one on PATH. */
export function mosquittoPath(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => join(folder, 'mosquitto'));
  return [...onPath, '/usr/sbin/mosquitto'].find((candidate) => existsSync(candidate));
}

/**
 * Mosquitto's configuration: one listener, anonymous clients, nothing kept on disk (it keeps
 * messages in memory, as Aedes does), errors only on its output.
 */
function mosquittoConfig(port: number): string {
  return [`listener ${port} ${HOST}`, 'allow_anonymous true', 'persistence false', 'log_dest stderr', 'log_type error', ''].join('\n');
}

export interface Broker {
  name: BrokerName;
  port: number;
  pid: number;
  /** Whether the process is still running (the flood may take a broker down). */
  alive(): boolean;
  /** The last lines the child wrote (for error messages). */
  output(): string;
  stop(): Promise<void>;
  /** `ours-scraped`: the scrapes answered 200 so far, and those that failed. */
  scrapes?: { ok: number; failed: number };
}

const running = new Set<{ child: ChildProcess; dir?: string }>();

let handlersInstalled = false;
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const { child, dir } of running) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (dir) removeTempDir(dir);
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      log(`${signal}: stopping the brokers started by this bench`);
      process.exit(130); // the 'exit' handler above kills them
    });
  }
}

/** Environment of our broker: MQTT on `port` only, anonymous clients with the admin role; with `metricsPort`, GET /metrics there too. */
function oursEnv(port: number, dataDir: string, metricsPort?: number): NodeJS.ProcessEnv {
  const metrics = metricsPort === undefined ? {} : {
    ENGINE_PLUGINS: JSON.stringify(['storage-lmdb', 'messaging', 'mqtt', 'http', 'metrics']),
    ENGINE_LISTENING_HTTP_PORT: String(metricsPort),
    ENGINE_METRICS_REQUIRE_AUTH: 'false',
  };
  return {
    ...process.env,
    ENGINE_DATA_DIR: dataDir,
    ENGINE_PLUGINS: JSON.stringify(['storage-lmdb', 'messaging', 'mqtt']),
    ENGINE_LISTENING_HOST: HOST,
    ENGINE_LISTENING_HTTP_PORT: 'off',
    ENGINE_LISTENING_HTTPS_PORT: 'off',
    ENGINE_MQTT_PORT: String(port),
    ENGINE_MQTTS_PORT: 'off',
    ENGINE_MQTT_WS_PORT: 'off',
    ENGINE_MQTT_WSS_PORT: 'off',
    // Aedes authenticates nobody by default; ours lets anonymous clients in with the admin role,
    // so both do the same work per CONNECT and per PUBLISH (authorization is still checked).
    ENGINE_MQTT_ALLOW_ANONYMOUS: 'true',
    ENGINE_MQTT_ANONYMOUS_ROLE: 'admin',
    ENGINE_LOG_LEVEL: 'warn',
    ...metrics,
  };
}

/** Polls GET /metrics every SCRAPE_INTERVAL_MS, one scrape at a time; returns its counts and its stop. */
function startScraper(port: number): { scrapes: { ok: number; failed: number }; stop(): void } {
  const scrapes = { ok: 0, failed: 0 };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const request = httpGet({ host: HOST, port, path: '/metrics' }, (response) => {
      response.resume();
      response.on('end', () => {
        busy = false;
        if (response.statusCode === 200) scrapes.ok++;
        else scrapes.failed++;
      });
    });
    request.on('error', () => { busy = false; scrapes.failed++; });
  }, SCRAPE_INTERVAL_MS);
  return { scrapes, stop: () => clearInterval(timer) };
}

function spawnBroker(name: BrokerName, port: number, dist: string, dir: string | undefined, metricsPort?: number): ChildProcess {
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  switch (name) {
    case 'ours':
    case 'ours-scraped':
      return spawn(process.execPath, [...engineStartFlags(), ...profileArgs(`mqtt-${name}`), join(dist, 'main.js')], { env: oursEnv(port, dir as string, metricsPort), stdio });
    case 'aedes':
      return spawn(process.execPath, [join(__dirname, 'aedes-server.js')], { env: { ...process.env, BENCH_PORT: String(port) }, stdio });
    case 'mosquitto': {
      const program = mosquittoPath();
      if (!program) throw new Error('mosquitto is not installed (npm run setup installs Debian\'s mosquitto)');
      const config = join(dir as string, 'mosquitto.conf');
      writeFileSync(config, mosquittoConfig(port));
      return spawn(program, ['-c', config], { stdio });
    }
  }
}

/** Starts a fresh broker and waits (≤ 30 s) until it answers a CONNECT. */
export async function startBroker(name: BrokerName): Promise<Broker> {
  installExitHandlers();
  const port = await freePort();
  const dist = join(__dirname, '..');
  const metricsPort = name === 'ours-scraped' ? await freePort() : undefined;
  const dir = name === 'aedes' ? undefined : tempDir(`mqtt-${name}`);
  const child = spawnBroker(name, port, dist, dir, metricsPort);
  const entry = { child, dir };
  running.add(entry);
  let tail = '';
  const keep = (chunk: Buffer): void => { tail = (tail + chunk.toString('utf8')).slice(-4000); };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  let scraper: ReturnType<typeof startScraper> | undefined;
  const broker: Broker = {
    name, port, pid: child.pid as number, alive, output: () => tail,
    async stop() {
      scraper?.stop();
      if (alive()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      running.delete(entry);
      if (dir) removeTempDir(dir);
    },
  };
  const lastLine = (): string => tail.trim().split('\n').pop()?.slice(0, 160) ?? '';
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!alive()) {
      await broker.stop();
      throw new Error(`${name} exited before listening (code ${child.exitCode}, signal ${child.signalCode}): ${lastLine()}`);
    }
    if ((await probeBroker(port, 2_000, true)).ok) {
      if (metricsPort !== undefined) {
        scraper = startScraper(metricsPort);
        broker.scrapes = scraper.scrapes;
      }
      return broker;
    }
    if (Date.now() > deadline) {
      await broker.stop();
      throw new Error(`${name} did not answer a CONNECT on ${HOST}:${port} within 30 s: ${lastLine()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
