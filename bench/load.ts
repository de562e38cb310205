/**
 * Shared benchmark helpers: child-process servers, free ports, temporary folders, a small HTTP
 * JSON client, and load measurements with autocannon (run in this, the bench, process).
 *
 * Every child started here is remembered and stopped (SIGTERM, then SIGKILL after a grace period)
 * when the bench ends, fails or is interrupted; only those children are ever signalled. Every
 * temporary folder made here is removed the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort as freePortBelowEphemeral } from '../test/helpers/free-port';

// autocannon ships no type declarations; this is the part of its API the bench uses.
export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  timeout?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  requests?: AutocannonRequest[];
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: { p50: number; p99: number; average: number };
  statusCodeStats?: Record<string, { count: number }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: AutocannonOptions) => Promise<AutocannonResult>;

export const HOST = '127.0.0.1';

/** A positive integer from the environment, or `fallback`. */
export function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Seconds per measurement: env BENCH_SECONDS (default 5). */
export function benchSeconds(): number {
  const value = Number(process.env.BENCH_SECONDS ?? 5);
  return Number.isFinite(value) && value > 0 ? value : 5;
}

/** Rounds of each measurement (alternating engine and reference): env BENCH_ROUNDS (default 3). */
export function benchRounds(): number {
  const value = Number(process.env.BENCH_ROUNDS ?? 3);
  return Number.isInteger(value) && value > 0 ? value : 3;
}

/** The run with the median rate (rounds alternate between servers; the median shrugs off a spike of other load). */
export function median<T>(runs: T[], rate: (run: T) => number): T {
  const sorted = [...runs].sort((a, b) => rate(a) - rate(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Seconds of warm-up before each measurement (JIT, page cache): a fifth of the measurement, ≤ 2 s. */
export function warmupSeconds(): number {
  return Math.min(2, Math.max(1, Math.round(benchSeconds() / 5)));
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Temporary folders and children, cleaned up on every way out.

const tempDirs = new Set<string>();
const children = new Set<ChildServer>();

export function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `engine-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

function cleanupSync(): void {
  for (const child of children) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

let handlersInstalled = false;
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', cleanupSync);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      log(`${signal}: stopping the children started by this bench`);
      cleanupSync();
      process.exit(130);
    });
  }
}

/** A free TCP port on 127.0.0.1, below the range the OS gives outgoing connections (test/helpers/free-port.ts). */
export function freePort(): Promise<number> {
  return freePortBelowEphemeral(HOST);
}

export interface ChildServer {
  name: string;
  process: ChildProcess;
  url: string;
  /** The last lines the child wrote (for error messages). */
  output(): string;
  stop(): Promise<void>;
}

export interface StartChildOptions {
  name: string;
  script: string;
  args?: string[];
  nodeArgs?: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  /** Path answered with any HTTP status once the server listens. */
  readyPath?: string;
  readyTimeoutMs?: number;
}

/** Starts `node [nodeArgs] script [args]` and waits until it answers HTTP on 127.0.0.1:port. */
export async function startChild(options: StartChildOptions): Promise<ChildServer> {
  installExitHandlers();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script, ...(options.args ?? [])], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://${HOST}:${options.port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: ChildServer = {
    name: options.name,
    process: child,
    url,
    output: () => tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      children.delete(server);
    },
  };
  children.add(server);
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(server);
      throw new Error(`${options.name} exited before listening (code ${child.exitCode}, signal ${child.signalCode}):\n${tail}`);
    }
    try {
      await httpJson('GET', `${url}${options.readyPath ?? '/'}`);
      return server;
    } catch {
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`${options.name} did not answer on ${url} within ${options.readyTimeoutMs ?? 30_000} ms:\n${tail}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Stops every child still running (used on the normal way out). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map((child) => child.stop()));
}

/** Runs `node script args` to completion and returns the last stdout line parsed as JSON. */
export function runChildJson<T>(name: string, script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<T> {
  installExitHandlers();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const handle: ChildServer = {
      name, process: child, url: '', output: () => '', stop: async () => { if (child.exitCode === null) child.kill('SIGKILL'); },
    };
    children.add(handle);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { err = (err + chunk.toString('utf8')).slice(-4000); });
    child.once('exit', (code) => {
      children.delete(handle);
      const lines = out.trim().split('\n');
      if (code !== 0) return reject(new Error(`${name} failed (code ${code}):\n${err}${out}`));
      try {
        resolve(JSON.parse(lines[lines.length - 1]) as T);
      } catch {
        reject(new Error(`${name} printed no JSON result:\n${out}\n${err}`));
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// A small HTTP client for setup steps.

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export interface JsonResponse {
  status: number;
  json: any;
  text: string;
}

export function httpJson(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const allHeaders: Record<string, string> = { ...headers };
  if (payload) {
    allHeaders['content-type'] = 'application/json';
    allHeaders['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: allHeaders, agent, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, json, text });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Like httpJson, but throws unless the status is 2xx. */
export async function httpOk(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<any> {
  const response = await httpJson(method, url, body, headers);
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${method} ${url} answered ${response.status}: ${response.text.slice(0, 500)}`);
  }
  return response.json;
}

export function basicAuth(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

// ---------------------------------------------------------------------------------------------
// Load measurements.

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Called before every request to vary path or body. */
  setup?: (request: AutocannonRequest) => AutocannonRequest;
  /** Units per successful request (rows per bulk request); default 1. */
  unitsPerRequest?: number;
  warmup?: boolean;
  /**
   * Checks the body of every 2xx answer (for protocols that report errors inside a 200, like the
   * action envelope); answers it rejects are counted as failures, not as throughput.
   */
  check?: (body: string) => boolean;
}

export interface LoadResult {
  /** Successful (2xx) requests per second. */
  requestsPerSecond: number;
  /** Successful units (requests × unitsPerRequest) per second. */
  unitsPerSecond: number;
  ok: number;
  /** 2xx answers that `check` rejected. */
  failed: number;
  non2xx: number;
  errors: number;
  latencyP50: number;
  latencyP99: number;
}

interface Run { result: AutocannonResult; failed: number; firstFailure?: string }

async function runAutocannon(options: LoadOptions, seconds: number): Promise<Run> {
  const headers = { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers };
  const request: AutocannonRequest = { method: options.method ?? 'GET', headers, ...(options.body !== undefined ? { body: options.body } : {}) };
  if (options.setup) request.setupRequest = options.setup;
  const run: Run = { result: undefined as unknown as AutocannonResult, failed: 0 };
  const check = options.check;
  if (check) {
    request.onResponse = (status, body) => {
      if (status >= 200 && status <= 299 && !check(body)) {
        run.failed++;
        run.firstFailure ??= body.slice(0, 300);
      }
    };
  }
  run.result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: seconds,
    timeout: 60,
    requests: [request],
  });
  return run;
}

/** Warm-up (unless `warmup: false`), then one measured run of `seconds`. */
export async function measure(options: LoadOptions): Promise<LoadResult> {
  if (options.warmup !== false) await runAutocannon(options, warmupSeconds());
  const { result, failed, firstFailure } = await runAutocannon(options, options.seconds);
  const ok = result['2xx'] - failed;
  if (failed > 0) log(`warning: ${options.url}: ${failed} answers reported an error, e.g. ${firstFailure}`);
  const units = options.unitsPerRequest ?? 1;
  if (result.non2xx > 0 || result.errors > 0) {
    log(`warning: ${options.method ?? 'GET'} ${options.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors (${result.timeouts} timeouts); only 2xx answers are counted`);
  }
  return {
    requestsPerSecond: ok / result.duration,
    unitsPerSecond: (ok * units) / result.duration,
    ok,
    failed,
    non2xx: result.non2xx,
    errors: result.errors,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
  };
}

// ---------------------------------------------------------------------------------------------
// Output.

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '—';
  return Math.round(value).toLocaleString('en-US');
}

export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '—';
}

/** A Markdown table (so the output can be pasted into docs/benchmarks.md). */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]): string => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Node options for the engine child: `--cpu-prof` into BENCH_CPU_PROF_DIR when that is set. */
export function profileArgs(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  if (!dir) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${label}-${Date.now()}.cpuprofile`];
}

/** Environment of an engine child on `port` with its data in `dataDir`. */
export function engineEnv(port: number, dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ENGINE_DATA_DIR: dataDir,
    ENGINE_LISTENING_HTTP_PORT: String(port),
    ENGINE_LISTENING_HTTPS_PORT: 'off',
    // The HTTP benchmarks measure HTTP: no MQTT listeners.
    ENGINE_MQTT_PORT: 'off',
    ENGINE_MQTTS_PORT: 'off',
    ENGINE_MQTT_WS_PORT: 'off',
    ENGINE_MQTT_WSS_PORT: 'off',
    ENGINE_LISTENING_HOST: HOST,
    ENGINE_LOG_LEVEL: 'warn',
  };
}

/** The Node flags `npm start` runs the server with (package.json): an engine runs as its users run it. */
export function engineStartFlags(): string[] {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  return manifest.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/**
 * CPU seconds (user + system) of process `pid` so far, from /proc: every thread, or with
 * `mainThread` its main thread alone (a Node process's JavaScript event loop); undefined where
 * there is none.
 */
export function cpuSecondsOf(pid: number, mainThread = false): number | undefined {
  try {
    const fields = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return undefined;
  }
}
