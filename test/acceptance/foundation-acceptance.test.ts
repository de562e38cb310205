/**
 * Black-box acceptance of the foundation (issue 2): starts the real program (`node dist/main.js`)
 * as child processes on temporary data folders and free ports, and talks to it with real clients.
 * Every child is tracked by pid and killed in `finally` / `afterEach` if it is still running.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, connect as netConnect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { once } from 'node:events';
import { connect as tlsConnect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { call } from '../helpers/server';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { freePort as freePortBelowEphemeral } from '../helpers/free-port';

const ROOT = resolve(__dirname, '..', '..', '..'); // dist/test/acceptance → repo root
const MAIN = join(ROOT, 'dist', 'main.js');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const REST = '/engine/api/v1';

// ---------------------------------------------------------------------------------------------
// process helpers
// ---------------------------------------------------------------------------------------------

const children = new Set<ChildProcess>();
/** Children that outlive one test (a describe's shared server); stopped in its own `after`. */
const shared = new Set<ChildProcess>();
const tempDirs: string[] = [];

function tempDir(label = 'fa'): string {
  const dir = mkdtempSync(join(tmpdir(), `engine-${label}-`));
  tempDirs.push(dir);
  return dir;
}

function killChild(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null && child.pid) {
    try { process.kill(child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  children.delete(child);
}

/** The environment of this process without any ENGINE_* variable, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('ENGINE_')) env[key] = value;
  return { ...env, ...extra };
}

/** Complete lines of a child's output stream, parsed as JSON, with waiters for the first line that matches. */
class JsonLines {
  readonly lines: any[] = [];
  text = '';
  private partial = '';
  private ended = false;
  private waiters: { match: (line: any) => boolean; settle: (line: any) => void }[] = [];

  constructor(stream: Readable) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop()!;
      for (const part of parts) this.add(part);
    });
    stream.on('end', () => { if (this.partial) this.add(this.partial); this.partial = ''; });
    stream.on('close', () => {
      this.ended = true;
      for (const waiter of this.waiters.splice(0)) waiter.settle(undefined);
    });
  }

  /** The first line matching `match` (read already, else the next that does), or `undefined` once the stream has ended without one. */
  first(match: (line: any) => boolean): Promise<any> {
    const found = this.lines.find(match);
    if (found !== undefined || this.ended) return Promise.resolve(found);
    return new Promise((settle) => this.waiters.push({ match, settle }));
  }

  private add(text: string): void {
    if (!text.trim().startsWith('{')) return;
    let line: any;
    try { line = JSON.parse(text); } catch { line = { unparsed: text }; }
    this.lines.push(line);
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.match(line)) return true;
      waiter.settle(line);
      return false;
    });
  }
}

/**
 * `promise`, or a rejection with `message()` when it has not settled within `ms`: an upper bound
 * that fails the test with a clear message (the wait itself is on the event), never a pause.
 */
async function within<T>(ms: number, promise: Promise<T>, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(message())), ms); });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

interface Proc {
  child: ChildProcess;
  pid: number;
  out(): string;
  err(): string;
  /** The pino JSON lines read from stdout so far. */
  logs(): any[];
  /** The first log line matching `match` (logged already, else the next one that does), or `undefined` when stdout ends without one. */
  firstLog(match: (line: any) => boolean): Promise<any>;
  /**
   * With `reportListening`: the first server reported listening (test/helpers/report-listening.ts)
   * that matches, or `undefined` when the process ends without one.
   */
  firstListen(match: (server: { port: number; address: string }) => boolean): Promise<{ port: number; address: string } | undefined>;
  /** The process has ended and its stdout and stderr have been read to the end (the child's 'close'). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const REPORT_LISTENING = join(ROOT, 'dist', 'test', 'helpers', 'report-listening.js');
/** MQTT listeners of builds that load the broker, on free ports. */
const MQTT_PORTS_ZERO = { ENGINE_MQTT_PORT: '0', ENGINE_MQTTS_PORT: '0', ENGINE_MQTT_WS_PORT: '0', ENGINE_MQTT_WSS_PORT: '0' };
/** The http plugin's `listening` line (the mqtt plugin logs its own, with `plugin: 'mqtt'`). */

const isListeningLine = (line: any) => line.msg === 'listening' && line.plugin !== 'mqtt';

function spawnEngine(options: { env?: Record<string, string>; args?: string[]; cwd?: string; reportListening?: boolean }): Proc {
  const preload = options.reportListening ? ['--require', REPORT_LISTENING] : [];
  const child = spawn(process.execPath, [...preload, MAIN, ...(options.args ?? [])], {
    cwd: options.cwd ?? ROOT,
    // No MQTT listeners unless the test names them (the default plugins include mqtt; these tests
    // count the HTTP listeners).
    env: cleanEnv({ ENGINE_MQTT_PORT: 'off', ENGINE_MQTTS_PORT: 'off', ENGINE_MQTT_WS_PORT: 'off', ENGINE_MQTT_WSS_PORT: 'off', ...options.env }),
    stdio: options.reportListening ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const stdout = new JsonLines(child.stdout!);
  const reports = options.reportListening ? new JsonLines(child.stdio[3] as Readable) : undefined;
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => { err += chunk; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    // 'close' comes after the exit and after the pipes are drained: every line the process wrote has been read
    child.on('close', (code, signal) => { children.delete(child); resolveExit({ code, signal }); });
  });
  return {
    child,
    pid: child.pid!,
    out: () => stdout.text,
    err: () => err,
    logs: () => [...stdout.lines],
    firstLog: (match) => stdout.first(match),
    firstListen: (match) => {
      if (!reports) throw new Error('spawnEngine({ reportListening: true }) reports listening servers');
      return reports.first(match);
    },
    exited,
  };
}

interface Running extends Proc {
  http?: string;
  https?: string;
  /** Sends the signal and waits for the exit (SIGKILL after 15 s, which then shows as `signal`). */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the engine and waits until it listens. Ports default to 0 (free ones) unless the env
 * given sets them. Waits for the `listening` log line, or (when `waitPort` is given, e.g. with a
 * quieter log level that hides that line) for a server listening on that port, reported by
 * test/helpers/report-listening.ts, and then for `GET /` to answer 200 on it.
 */
async function startEngine(options: { dataDir?: string; env?: Record<string, string>; args?: string[]; cwd?: string; waitPort?: number; ports?: boolean } = {}): Promise<Running> {
  const env: Record<string, string> = {};
  if (options.ports !== false) {
    env.ENGINE_LISTENING_HTTP_PORT = '0';
    env.ENGINE_LISTENING_HTTPS_PORT = '0';
  }
  if (options.dataDir) env.ENGINE_DATA_DIR = options.dataDir;
  Object.assign(env, options.env);
  const { waitPort } = options;
  const proc = spawnEngine({ env, args: options.args, cwd: options.cwd, reportListening: waitPort !== undefined });
  const notStarted = () => `engine did not start within 30 s: ${proc.err()} ${proc.out()}`;
  let listening: any;
  try {
    let started: unknown;
    if (waitPort === undefined) started = listening = await within(30_000, proc.firstLog(isListeningLine), notStarted);
    else started = await within(30_000, proc.firstListen((server) => server.port === waitPort), notStarted);
    if (!started) {
      const { code } = await proc.exited;
      throw new Error(`engine exited early (code ${code}): ${proc.err()} ${proc.out()}`);
    }
    if (waitPort !== undefined) {
      const res = await call('GET', `http://127.0.0.1:${waitPort}/`, { auth: null });
      assert.equal(res.status, 200, `GET / on port ${waitPort} once it listens: ${res.text}`);
    }
  } catch (error) {
    killChild(proc.child);
    throw error;
  }
  return {
    ...proc,
    http: listening?.http,
    https: listening?.https,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.child.exitCode === null && proc.child.signalCode === null) process.kill(proc.pid, signal);
      const timer = setTimeout(() => killChild(proc.child), 15_000);
      const result = await proc.exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Runs the engine expecting it to stop by itself (a failed start); kills it after `ms` (then `signal` is set). */
async function runToExit(options: { env?: Record<string, string>; args?: string[]; cwd?: string; dataDir?: string; omitEnv?: string[] }, ms = 12_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; text: string }> {
  const env: Record<string, string> = { ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: '0', ENGINE_DATA_DIR: options.dataDir ?? tempDir('fail'), ...options.env };
  for (const name of options.omitEnv ?? []) delete env[name];
  const proc = spawnEngine({ env, args: options.args, cwd: options.cwd });
  const timer = setTimeout(() => killChild(proc.child), ms);
  try {
    const result = await proc.exited;
    return { ...result, text: proc.err() + proc.out() };
  } finally {
    clearTimeout(timer);
    killChild(proc.child);
  }
}

function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

/** A free TCP port (free on every interface at the time of asking). */
function freePort(): Promise<number> {
  return freePortBelowEphemeral('0.0.0.0');
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolvePort(true)));
  });
}

/** Listening TCP sockets owned by a process: its fds' socket inodes matched in /proc/net/tcp{,6}. */
function listeningSockets(pid: number): { address: string; port: number; any: boolean; loopback: boolean }[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match) inodes.add(match[1]);
    } catch { /* fd closed meanwhile */ }
  }
  const found: { address: string; port: number; any: boolean; loopback: boolean }[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9])) continue;
      const [hexAddr, hexPort] = cols[1].split(':');
      const port = parseInt(hexPort, 16);
      let address: string;
      if (hexAddr.length === 8) {
        address = [0, 2, 4, 6].map((i) => parseInt(hexAddr.slice(i, i + 2), 16)).reverse().join('.');
      } else {
        const words = [0, 8, 16, 24].map((i) => hexAddr.slice(i, i + 8).match(/../g)!.reverse().join(''));
        address = words.join('').match(/.{4}/g)!.join(':');
      }
      const any = /^0+$/.test(hexAddr);
      const loopback = address.startsWith('127.') || /^(0000:){7}0001$/.test(address) || /^(0000:){5}ffff:7f/i.test(address);
      found.push({ address, port, any, loopback });
    }
  }
  return found;
}

function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) if (info.family === 'IPv4' && !info.internal) return info.address;
  }
  return undefined;
}

/** Whether a TCP connection is accepted (true) or refused (false); a connect that gets neither answer fails. */
function canConnect(host: string, port: number): Promise<boolean> {
  const socket = netConnect({ host, port });
  const answer = new Promise<boolean>((resolveConnect) => {
    socket.once('connect', () => resolveConnect(true));
    socket.once('error', () => resolveConnect(false));
  });
  return within(10_000, answer, () => `connecting to ${host}:${port}: neither accepted nor refused within 10 s`).finally(() => socket.destroy());
}

function peerFingerprint(httpsUrl: string): Promise<string> {
  const url = new URL(httpsUrl);
  return new Promise((resolveFp, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false, servername: 'localhost' }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolveFp(fp);
    });
    socket.once('error', reject);
  });
}

/** Every file under `dir`, recursively. */
function allFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files.push(...allFiles(path));
    else files.push(path);
  }
  return files;
}

/** Files under `dir` whose bytes contain `needle` (UTF-8, UTF-16LE, hex). */
function filesContaining(dir: string, needle: string): string[] {
  const patterns = [Buffer.from(needle, 'utf8'), Buffer.from(needle, 'utf16le'), Buffer.from(Buffer.from(needle).toString('hex')), Buffer.from(Buffer.from(needle).toString('hex').toUpperCase())];
  return allFiles(dir).filter((file) => {
    const bytes = readFileSync(file);
    return patterns.some((pattern) => bytes.includes(pattern));
  });
}

async function action(base: string, body: unknown) {
  const res = await call('POST', `${base}/api`, { body, auth: null });
  return res;
}

async function session(base: string, username: string, password: string): Promise<string> {
  const res = await action(base, { api: 'admin', action: 'createSession', params: { username, password } });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.errorCode, 0, res.text);
  assert.ok(typeof res.json.authToken === 'string' && res.json.authToken.length > 0, res.text);
  return res.json.authToken as string;
}

afterEach(() => {
  for (const child of [...children]) if (!shared.has(child)) killChild(child);
});

after(() => {
  for (const child of [...children]) killChild(child);
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------

describe('foundation acceptance (real processes)', function () {
  this.timeout(60_000);

  before(function () {
    assert.ok(existsSync(MAIN), `${MAIN} must be built first (npx tsc -p .)`);
    assert.ok(existsSync(join(ROOT, 'dist', 'examples', 'hello-plugin.js')), 'dist/examples/hello-plugin.js must be built');
  });

  describe('start, GET /, listeners', () => {
    it('starts with the embedded defaults (cwd elsewhere, ./data relative to it) and answers GET / on HTTP and HTTPS with name, version and plugins', async () => {
      const cwd = tempDir('defaults');
      // The real default ports when they are free here; otherwise only the ports are moved.
      const defaultsFree = (await portIsFree(8080)) && (await portIsFree(8443));
      const env: Record<string, string> = {};
      if (!defaultsFree) { env.ENGINE_LISTENING_HTTP_PORT = String(await freePort()); env.ENGINE_LISTENING_HTTPS_PORT = String(await freePort()); }
      const engine = await startEngine({ cwd, env, ports: false });
      try {
        const httpPort = defaultsFree ? 8080 : Number(env.ENGINE_LISTENING_HTTP_PORT);
        const httpsPort = defaultsFree ? 8443 : Number(env.ENGINE_LISTENING_HTTPS_PORT);
        assert.equal(engine.http, `http://127.0.0.1:${httpPort}`);
        assert.equal(engine.https, `https://127.0.0.1:${httpsPort}`);
        for (const base of [`http://127.0.0.1:${httpPort}`, `https://127.0.0.1:${httpsPort}`]) {
          const res = await call('GET', `${base}/`, { auth: null });
          assert.equal(res.status, 200, `${base}: ${res.text}`);
          assert.equal(res.json.name, PKG.name);
          assert.equal(res.json.version, PKG.version);
          assert.deepEqual([...res.json.plugins].sort(), ['actions', 'data', 'explorer', 'http', 'messaging', 'metrics', 'mqtt', 'rest', 'sql', 'storage-lmdb']);
        }
        assert.ok(existsSync(join(cwd, 'data')), 'data_dir ./data is created relative to the working directory');
        // the default database exists
        const tables = await call('GET', `http://127.0.0.1:${httpPort}${REST}/table/main`);
        assert.equal(tables.status, 200, tables.text);
        assert.deepEqual(tables.json, { _tables: [] });
      } finally {
        await engine.stop();
      }
    });

    it('ENGINE_LISTENING_HTTP_PORT moves the HTTP listener; ENGINE_LISTENING_HTTPS_PORT=off closes HTTPS', async () => {
      const port = await freePort();
      const engine = await startEngine({ dataDir: tempDir(), env: { ENGINE_LISTENING_HTTP_PORT: String(port), ENGINE_LISTENING_HTTPS_PORT: 'off' } });
      try {
        assert.equal(engine.http, `http://127.0.0.1:${port}`);
        assert.equal(engine.https, undefined);
        const res = await call('GET', `http://127.0.0.1:${port}/`, { auth: null });
        assert.equal(res.status, 200);
        const sockets = listeningSockets(engine.pid);
        assert.deepEqual(sockets.map((s) => s.port), [port], `only the HTTP port listens: ${JSON.stringify(sockets)}`);
        assert.equal(existsSync(join(engine.http!, 'never')), false);
      } finally {
        const stopped = await engine.stop();
        assert.equal(stopped.code, 0);
      }
    });

    it('ENGINE_LISTENING_HTTPS_PORT moves the HTTPS listener and ENGINE_LISTENING_HTTP_PORT=off closes HTTP', async () => {
      const port = await freePort();
      const engine = await startEngine({ dataDir: tempDir(), env: { ENGINE_LISTENING_HTTP_PORT: 'off', ENGINE_LISTENING_HTTPS_PORT: String(port) } });
      try {
        assert.equal(engine.http, undefined);
        const res = await call('GET', `https://127.0.0.1:${port}/`, { auth: null });
        assert.equal(res.status, 200);
        assert.deepEqual(listeningSockets(engine.pid).map((s) => s.port), [port]);
      } finally {
        await engine.stop();
      }
    });
  });

  describe('settings: failed starts name the culprit', () => {
    it('ENGINE_LISTENING_HTTP_PORT=abc exits non-zero naming the setting', async () => {
      const r = await runToExit({ env: { ENGINE_LISTENING_HTTP_PORT: 'abc' } });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /listening_http_port/i, r.text);
    });

    it('an unknown ENGINE_ variable exits non-zero naming the setting', async () => {
      const r = await runToExit({ env: { ENGINE_NO_SUCH_SETTING: '1' } });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /no_such_setting/i, r.text);
    });

    it('an unknown setting in a --config file exits non-zero naming it', async () => {
      const dir = tempDir('cfg');
      const r = await runToExit({ args: ['--config', writeJson(dir, 'c.json', { frobnicate_level: 3 })] });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /frobnicate_level/, r.text);
    });

    it('a wrong type in a --config file exits non-zero naming the setting', async () => {
      const dir = tempDir('cfg');
      for (const [name, value] of [['body_limit_bytes', 'big'], ['plugins', 'rest'], ['log_level', 'loud'], ['listening_https_port', '8443x'], ['listening_http_port', 70000], ['listening_http_port', '8080']] as const) {
        // (the port variables are left out so that they do not override the file's value)
        const r = await runToExit({ args: ['--config', writeJson(dir, `${name}.json`, { listening_http_port: 0, listening_https_port: 0, [name]: value })], omitEnv: ['ENGINE_LISTENING_HTTP_PORT', 'ENGINE_LISTENING_HTTPS_PORT'] });
        assert.notEqual(r.code, 0, `${name}: ${r.text}`); assert.equal(r.signal, null);
        assert.match(r.text, new RegExp(name), r.text);
      }
    });

    it('a bad property inside a structured setting (roles) stops the start naming the setting', async () => {
      const dir = tempDir('cfg');
      const r = await runToExit({ args: ['--config', writeJson(dir, 'r.json', { roles: [{ name: 'x', grants: [], grnts: [] }] })] });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /grnts/, r.text);
      // The offending setting is `roles`; there is no setting "grnts" nor a variable ENGINE_GRNTS.
      assert.match(r.text, /roles/, `the message names the setting "roles": ${r.text}`);
      assert.doesNotMatch(r.text, /ENGINE_GRNTS/, `no such environment variable exists: ${r.text}`);
    });

    it('ENGINE_ values of the wrong type for booleans and objects name the setting', async () => {
      let r = await runToExit({ env: { ENGINE_MQTT_ALLOW_ANONYMOUS: 'maybe' } });
      assert.notEqual(r.code, 0); assert.match(r.text, /mqtt_allow_anonymous/, r.text);
      r = await runToExit({ env: { ENGINE_PLUGINS: 'rest' } });
      assert.notEqual(r.code, 0); assert.match(r.text, /plugins/, r.text);
    });

    it('a --config file that does not exist or is not JSON stops the start naming the file', async () => {
      const dir = tempDir('cfg');
      const missing = join(dir, 'nope.json');
      let r = await runToExit({ args: ['--config', missing] });
      assert.notEqual(r.code, 0); assert.match(r.text, /nope\.json/, r.text);
      const broken = writeJson(dir, 'broken.json', '{"listening_http_port": ');
      r = await runToExit({ args: ['--config', broken] });
      assert.notEqual(r.code, 0); assert.match(r.text, /broken\.json/, r.text);
    });

    it('an unknown plugin exits non-zero naming it', async () => {
      const dir = tempDir('cfg');
      const r = await runToExit({ args: ['--config', writeJson(dir, 'p.json', { plugins: ['storage-lmdb', 'data', 'http', 'no-such-plugin-xyz'] })] });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /no-such-plugin-xyz/, r.text);
    });

    it('a plugin with a missing dependency exits non-zero naming the plugin and the dependency', async () => {
      const dir = tempDir('cfg');
      // built-in: rest without http
      let r = await runToExit({ args: ['--config', writeJson(dir, 'p.json', { plugins: ['storage-lmdb', 'rest'] })] });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /rest/, r.text); assert.match(r.text, /http/, r.text);
      // third-party by path
      const pluginFile = join(dir, 'needy.js');
      writeFileSync(pluginFile, "module.exports = { name: 'needy', dependencies: ['ghost-dep'], register() {} };\n");
      r = await runToExit({ args: ['--config', writeJson(dir, 'q.json', { plugins: ['storage-lmdb', 'data', 'http', pluginFile] })] });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /needy/, r.text); assert.match(r.text, /ghost-dep/, r.text);
    });

    it('a plugin that hangs at start makes the server exit non-zero by itself, naming it and the timeout', async () => {
      const dir = tempDir('cfg');
      const pluginFile = join(dir, 'sleepy.js');
      writeFileSync(pluginFile, "module.exports = { name: 'sleepy', register() { return new Promise(() => {}); } };\n");
      const r = await runToExit({ args: ['--config', writeJson(dir, 'p.json', { plugins: ['storage-lmdb', 'data', 'http', pluginFile], plugin_timeout_ms: 500 })] });
      assert.notEqual(r.code, 0, r.text); assert.equal(r.signal, null, 'it stops by itself, not by our kill');
      assert.match(r.text, /plugin "sleepy" did not finish starting within 500 ms/, r.text);
    });

    it('a plugin that throws exits non-zero with its message', async () => {
      const dir = tempDir('cfg');
      const pluginFile = join(dir, 'broken.js');
      writeFileSync(pluginFile, "module.exports = { name: 'brokenplug', register() { throw new Error('kaboom-42'); } };\n");
      const r = await runToExit({ args: ['--config', writeJson(dir, 'p.json', { plugins: ['storage-lmdb', 'data', 'http', pluginFile] })] });
      assert.notEqual(r.code, 0); assert.equal(r.signal, null);
      assert.match(r.text, /kaboom-42/, r.text);
    });
  });

  describe('settings precedence: environment > config file > defaults', () => {
    it('the --config file wins over the defaults, and the environment over the file', async () => {
      const dir = tempDir('prec');
      const [p1, p2] = [await freePort(), await freePort()];
      const config = writeJson(dir, 'c.json', { listening_http_port: p1, listening_https_port: 'off', log_level: 'warn' });
      // file over defaults: port p1, log level warn (no info lines)
      let engine = await startEngine({ dataDir: join(dir, 'd'), args: ['--config', config], ports: false, waitPort: p1 });
      try {
        assert.deepEqual(listeningSockets(engine.pid).map((s) => s.port), [p1]);
      } finally { await engine.stop(); }
      // stop() resolves on the child's 'close': everything it logged, from the start to its exit
      // (its info line "stopping" included), has been read, so no info line can still arrive
      const levels = engine.logs().map((line) => line.level);
      assert.ok(levels.length > 0 && levels.every((level) => level >= 40), `only warn and above: ${engine.out()}`);
      // environment over the file: port p2 and log level info
      engine = await startEngine({ dataDir: join(dir, 'd'), args: ['--config', config], ports: false, waitPort: p2, env: { ENGINE_LISTENING_HTTP_PORT: String(p2), ENGINE_LOG_LEVEL: 'info' } });
      try {
        assert.deepEqual(listeningSockets(engine.pid).map((s) => s.port), [p2]);
        const info = await within(20_000, engine.firstLog((line) => line.level === 30), () => `no info line within 20 s: ${engine.out()}`);
        assert.ok(info, `info lines with ENGINE_LOG_LEVEL=info: ${engine.out()}`);
      } finally { await engine.stop(); }
    });

    it('ENGINE_CONFIG names the file as --config does', async () => {
      const dir = tempDir('prec');
      const p1 = await freePort();
      const config = writeJson(dir, 'c.json', { listening_http_port: p1, listening_https_port: null, default_database_name: 'otherdb' });
      const engine = await startEngine({ dataDir: join(dir, 'd'), ports: false, waitPort: p1, env: { ENGINE_CONFIG: config } });
      try {
        assert.deepEqual(listeningSockets(engine.pid).map((s) => s.port), [p1]);
        const res = await call('GET', `http://127.0.0.1:${p1}${REST}/table/otherdb`);
        assert.equal(res.status, 200, `the configured default database exists: ${res.text}`);
      } finally { await engine.stop(); }
    });

    it('an environment variable overrides a setting only given in the defaults (body_limit_bytes)', async () => {
      const engine = await startEngine({ dataDir: tempDir(), env: { ENGINE_BODY_LIMIT_BYTES: '2048' } });
      try {
        const big = await action(engine.http!, { api: 'admin', action: 'pingSession', params: { pad: 'x'.repeat(3000) } });
        assert.equal(big.status, 413, big.text);
      } finally { await engine.stop(); }
    });
  });

  describe('TLS certificate', () => {
    it('is generated on first start into data_dir and reused after a restart (same SHA-256 fingerprint)', async () => {
      const dataDir = tempDir('tls');
      let engine = await startEngine({ dataDir });
      let first: string;
      try {
        first = await peerFingerprint(engine.https!);
        const generated = engine.logs().find((line) => /self-signed/.test(line.msg ?? ''));
        assert.ok(generated, 'the log says a certificate was generated');
      } finally { await engine.stop(); }
      const certs = allFiles(dataDir).filter((file) => readFileSync(file, 'utf8').includes('BEGIN CERTIFICATE'));
      assert.ok(certs.length >= 1, 'a certificate file is kept in data_dir');
      assert.ok(certs.some((file) => new X509Certificate(readFileSync(file)).fingerprint256 === first), 'the file holds the served certificate');
      engine = await startEngine({ dataDir });
      try {
        assert.equal(await peerFingerprint(engine.https!), first);
        assert.ok(!engine.logs().some((line) => /generated/.test(line.msg ?? '')), 'not generated again');
      } finally { await engine.stop(); }
    });

    it('tls_cert_file / tls_key_file are served instead of a generated pair', async () => {
      const dir = tempDir('tlsfiles');
      const { execFileSync } = await import('node:child_process');
      const certFile = join(dir, 'cert.pem');
      const keyFile = join(dir, 'key.pem');
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=fa-test.example'], { stdio: 'ignore' });
      const expected = new X509Certificate(readFileSync(certFile)).fingerprint256;
      const dataDir = join(dir, 'data');
      const config = writeJson(dir, 'c.json', { tls_cert_file: certFile, tls_key_file: keyFile });
      const engine = await startEngine({ dataDir, args: ['--config', config] });
      try {
        assert.equal(await peerFingerprint(engine.https!), expected);
        const res = await call('GET', `${engine.https}/`, { auth: null });
        assert.equal(res.status, 200);
      } finally { await engine.stop(); }
      assert.ok(!allFiles(dataDir).some((file) => readFileSync(file).includes(Buffer.from('BEGIN CERTIFICATE'))), 'no certificate generated into data_dir');
    });
  });

  describe('accounts, the default password and the loopback rule', () => {
    it('fresh data dir: admin/ADMIN works, names are case-insensitive, loopback only with a warning', async () => {
      const dataDir = tempDir('acct');
      const engine = await startEngine({ dataDir });
      try {
        for (const name of ['admin', 'ADMIN', 'Admin']) {
          const res = await call('GET', `${engine.http}${REST}/table/main`, { auth: [name, 'ADMIN'] });
          assert.equal(res.status, 200, `${name}: ${res.text}`);
          await session(engine.http!, name, 'ADMIN');
        }
        const wrong = await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', 'admin'] });
        assert.equal(wrong.status, 401);
        assert.equal(wrong.json.errorCode, 12033);
        // loopback only
        const sockets = listeningSockets(engine.pid);
        assert.equal(sockets.length, 2, JSON.stringify(sockets));
        assert.ok(sockets.every((s) => s.loopback && !s.any), `bound to loopback only: ${JSON.stringify(sockets)}`);
        const external = externalAddress();
        if (external) {
          assert.equal(await canConnect(external, sockets[0].port), false, `not reachable on ${external}`);
        }
        const warning = engine.logs().find((line) => line.level === 40 && /default password/i.test(line.msg ?? ''));
        assert.ok(warning, `the log warns about the default password: ${engine.out()}`);
      } finally { await engine.stop(); }
      assert.deepEqual(filesContaining(dataDir, 'ADMIN'), [], 'the default password is not stored in plain text');
    });

    it('ENGINE_ADMIN_PASSWORD sets the first password only; then the server listens on every interface without the warning', async () => {
      const dataDir = tempDir('acct');
      const first = 'FirstPw-9d1c2b7e';
      let engine = await startEngine({ dataDir, env: { ENGINE_ADMIN_PASSWORD: first } });
      try {
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', first] })).status, 200);
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', 'ADMIN'] })).status, 401);
        const sockets = listeningSockets(engine.pid);
        assert.ok(sockets.length === 2 && sockets.every((s) => s.any), `every interface: ${JSON.stringify(sockets)}`);
        const external = externalAddress();
        if (external) {
          const res = await call('GET', `http://${external}:${sockets.find((s) => `http://127.0.0.1:${s.port}` === engine.http)!.port}/`, { auth: null });
          assert.equal(res.status, 200);
        }
        assert.ok(!engine.logs().some((line) => /default password/i.test(line.msg ?? '')), 'no default-password warning');
      } finally { await engine.stop(); }
      // a later start with another ENGINE_ADMIN_PASSWORD does not change it (first start only)
      engine = await startEngine({ dataDir, env: { ENGINE_ADMIN_PASSWORD: 'SecondPw-55aa' } });
      try {
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', first] })).status, 200);
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', 'SecondPw-55aa'] })).status, 401);
      } finally { await engine.stop(); }
      assert.deepEqual(filesContaining(dataDir, first), []);
      assert.deepEqual(filesContaining(dataDir, 'SecondPw-55aa'), []);
    });

    it('a changed admin password (createSession + alterAccount) works at once, survives a restart, the old one stops working, and the server then listens on all interfaces', async () => {
      const dataDir = tempDir('acct');
      const next = 'N3w-Adm1n-Pw-c0ffee';
      let engine = await startEngine({ dataDir });
      try {
        // warm the credential cache with the old password
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', 'ADMIN'] })).status, 200);
        const token = await session(engine.http!, 'admin', 'ADMIN');
        const altered = await action(engine.http!, { api: 'admin', action: 'alterAccount', authToken: token, params: { username: 'ADMIN', currentPassword: 'ADMIN', password: next } });
        assert.equal(altered.status, 200);
        assert.equal(altered.json.errorCode, 0, altered.text);
        assert.ok(!JSON.stringify(altered.json).includes(next), 'the response does not echo the password');
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', 'ADMIN'] })).status, 401, 'old password refused at once');
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', next] })).status, 200);
      } finally {
        const stopped = await engine.stop();
        assert.equal(stopped.code, 0);
      }
      engine = await startEngine({ dataDir });
      try {
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', next] })).status, 200);
        const old = await call('GET', `${engine.http}${REST}/table/main`, { auth: ['admin', 'ADMIN'] });
        assert.equal(old.status, 401);
        const oldSession = await action(engine.http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
        assert.equal(oldSession.json.errorCode, 12033);
        await session(engine.http!, 'Admin', next);
        const sockets = listeningSockets(engine.pid);
        assert.ok(sockets.length === 2 && sockets.every((s) => s.any), `every interface after the change: ${JSON.stringify(sockets)}`);
        const external = externalAddress();
        if (external) {
          const port = Number(new URL(engine.http!).port);
          assert.equal(await canConnect(external, port), true, `reachable on ${external}`);
          const res = await call('GET', `http://${external}:${port}/`, { auth: null });
          assert.equal(res.status, 200);
        }
        assert.ok(!engine.logs().some((line) => /default password/i.test(line.msg ?? '')), 'no default-password warning any more');
      } finally { await engine.stop(); }
      assert.deepEqual(filesContaining(dataDir, next), [], 'the new password is nowhere in data_dir');
      assert.deepEqual(filesContaining(dataDir, 'ADMIN'), [], 'nor the old one');
    });

    it('an account created through actions survives a restart, with a case-insensitive name', async () => {
      const dataDir = tempDir('acct');
      const pw = 'Carol-pw-77e1f0';
      let engine = await startEngine({ dataDir });
      try {
        const token = await session(engine.http!, 'admin', 'ADMIN');
        const created = await action(engine.http!, { api: 'admin', action: 'createAccount', authToken: token, params: { username: 'CaRoL', password: pw, roles: ['reader'] } });
        assert.equal(created.json.errorCode, 0, created.text);
        assert.equal(created.json.result.username, 'carol');
        const dup = await action(engine.http!, { api: 'admin', action: 'createAccount', authToken: token, params: { username: 'carol', password: 'x1234567' } });
        assert.equal(dup.json.errorCode, 12041, dup.text);
      } finally { await engine.stop(); }
      engine = await startEngine({ dataDir });
      try {
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth: ['CAROL', pw] })).status, 200);
      } finally { await engine.stop(); }
      assert.deepEqual(filesContaining(dataDir, pw), []);
    });

    it('an explicit listening_host is used, with a warning while the password is the default', async () => {
      const engine = await startEngine({ dataDir: tempDir('acct'), env: { ENGINE_LISTENING_HOST: '0.0.0.0' } });
      try {
        const sockets = listeningSockets(engine.pid);
        assert.ok(sockets.length === 2 && sockets.every((s) => s.any), JSON.stringify(sockets));
        assert.ok(engine.logs().some((line) => line.level >= 40 && /default password/i.test(line.msg ?? '')), engine.out());
      } finally { await engine.stop(); }
    });

    // (idle expiry runs on the engine's clock: test/actions/idle-expiry.test.ts advances it instead of sleeping)
    it('stored hashes are scrypt; tokens are random and at least 128 bits; credentials are cached', async () => {
      const dataDir = tempDir('acct');
      const engine = await startEngine({ dataDir });
      try {
        const t1 = await session(engine.http!, 'admin', 'ADMIN');
        const t2 = await session(engine.http!, 'admin', 'ADMIN');
        assert.notEqual(t1, t2);
        for (const token of [t1, t2]) assert.ok(Buffer.from(token, 'base64url').length >= 16, `token ${token} carries at least 128 bits`);
        // Basic auth on repeated requests (the credential cache; its speed is the benchmarks' business,
        // not a timed test's)
        for (let i = 0; i < 20; i++) assert.equal((await call('GET', `${engine.http}${REST}/table/main`)).status, 200);
      } finally { await engine.stop(); }
      assert.ok(allFiles(dataDir).some((file) => readFileSync(file).includes(Buffer.from('scrypt$'))), 'an scrypt$… hash is stored');
    });

    it('a revoked role and a deleted account take effect on the next request (no stale credential cache)', async () => {
      const engine = await startEngine({ dataDir: tempDir('acct') });
      try {
        const token = await session(engine.http!, 'admin', 'ADMIN');
        assert.equal((await action(engine.http!, { api: 'admin', action: 'createAccount', authToken: token, params: { username: 'bob', password: 'bob-pw-1234', roles: ['reader'] } })).json.errorCode, 0);
        const auth: [string, string] = ['bob', 'bob-pw-1234'];
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth })).status, 200);
        const revoked = await action(engine.http!, { api: 'admin', action: 'revokeRolesFromAccounts', authToken: token, params: { usernames: ['BOB'], roleNames: ['reader'] } });
        assert.equal(revoked.json.errorCode, 0, revoked.text);
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth })).status, 403);
        assert.equal((await action(engine.http!, { api: 'admin', action: 'deleteAccount', authToken: token, params: { username: 'bob' } })).json.errorCode, 0);
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`, { auth })).status, 401);
      } finally { await engine.stop(); }
    });

    it('a role declared in the settings cannot silently take away the built-in admin role', async () => {
      // docs/roles.md: built-in role `admin` = every command on every resource. A settings role
      // with the same name must either stop the start (naming it) or leave admin's rights intact.
      const dir = tempDir('acct');
      const config = writeJson(dir, 'c.json', { roles: [{ name: 'admin', grants: [] }] });
      const proc = spawnEngine({ env: { ENGINE_DATA_DIR: join(dir, 'd'), ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off' }, args: ['--config', config] });
      try {
        // the 'listening' line, or undefined when the process ends (its stdout closes) without one
        const listening = await within(20_000, proc.firstLog(isListeningLine), () => `neither listening nor stopped within 20 s: ${proc.err()} ${proc.out()}`);
        if (!listening) {
          const { code } = await proc.exited;
          assert.notEqual(code, 0);
          assert.match(proc.err() + proc.out(), /admin/);
          return;
        }
        const created = await call('POST', `${listening.http}${REST}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }] } });
        assert.equal(created.status, 200, `admin can still write: ${created.text}`);
        const token = await session(listening.http, 'admin', 'ADMIN');
        const roles = await action(listening.http, { api: 'admin', action: 'listRoles', authToken: token, params: {} });
        assert.equal(roles.json.errorCode, 0, `admin can still list roles: ${roles.text}`);
      } finally { killChild(proc.child); }
    });
  });

  describe('request limits and shutdown', () => {
    it('a body over body_limit_bytes is answered 413 with errorCode 12028 (actions and REST)', async () => {
      const dir = tempDir('limit');
      const config = writeJson(dir, 'c.json', { body_limit_bytes: 4096 });
      const engine = await startEngine({ dataDir: join(dir, 'd'), args: ['--config', config] });
      try {
        const small = await action(engine.http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', description: 'x'.repeat(100) } });
        assert.equal(small.json.errorCode, 0, small.text);
        const bigAction = await action(engine.http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN', description: 'x'.repeat(10_000) } });
        assert.equal(bigAction.status, 413, bigAction.text);
        assert.equal(bigAction.json.errorCode, 12028, bigAction.text);
        assert.equal(typeof bigAction.json.errorMessage, 'string');
        const created = await call('POST', `${engine.http}${REST}/table/main/big`, { body: { fields: [{ name: 's', type: 'lvarchar' }] } });
        assert.equal(created.status, 200, created.text);
        const bigRest = await call('POST', `${engine.http}${REST}/record/main/big`, { body: { s: 'y'.repeat(10_000) } });
        assert.equal(bigRest.status, 413, bigRest.text);
        assert.equal(bigRest.json.errorCode, 12028, bigRest.text);
        const bigHttps = await call('POST', `${engine.https}${REST}/record/main/big`, { body: { s: 'y'.repeat(10_000) } });
        assert.equal(bigHttps.status, 413, bigHttps.text);
      } finally { await engine.stop(); }
    });

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      it(`${signal} exits 0 by itself, closing the listeners, and acknowledged writes survive`, async () => {
        const dataDir = tempDir('sig');
        let engine = await startEngine({ dataDir });
        const port = Number(new URL(engine.http!).port);
        try {
          assert.equal((await call('POST', `${engine.http}${REST}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }] } })).status, 200);
          const ins = await call('POST', `${engine.http}${REST}/record/main/t`, { body: [{ n: 1 }, { n: 2 }] });
          assert.equal(ins.status, 200, ins.text);
        } finally {
          const stopped = await engine.stop(signal);
          assert.equal(stopped.code, 0, `exit code after ${signal}: ${engine.err()}`);
          assert.equal(stopped.signal, null, 'it exited by itself, not by the SIGKILL that follows 15 s later');
        }
        assert.equal(await canConnect('127.0.0.1', port), false);
        engine = await startEngine({ dataDir });
        try {
          const rec = await call('GET', `${engine.http}${REST}/record/main/t/2`);
          assert.equal(rec.status, 200, rec.text);
          assert.deepEqual(rec.json, { n: 2 });
        } finally { await engine.stop(); }
      });
    }

    it('SIGTERM with a write in flight: the write is all-or-nothing and acknowledged means stored', async () => {
      const dataDir = tempDir('sig');
      let engine = await startEngine({ dataDir });
      let answered: number | undefined;
      try {
        assert.equal((await call('POST', `${engine.http}${REST}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }, { name: 's', type: 'varchar', length: 200 }] } })).status, 200);
        const rows = Array.from({ length: 3000 }, (_, i) => ({ n: i, s: 'z'.repeat(150) }));
        const payload = Buffer.from(JSON.stringify(rows));
        // (a closing connection: keep-alive shutdown is the next test's subject)
        const req = httpRequest(`${engine.http}${REST}/record/main/t`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('admin:ADMIN').toString('base64')}`, 'content-type': 'application/json', 'content-length': String(payload.length), connection: 'close' } });
        const pending = new Promise<void>((settle) => {
          // acknowledged = the status line arrived (whatever becomes of the rest of the answer)
          req.on('response', (res) => {
            answered = res.statusCode;
            res.resume();
            res.on('error', () => undefined);
            res.on('close', () => settle());
          });
          req.on('error', () => { answered ??= -1; settle(); });
          req.on('close', () => { answered ??= -1; settle(); });
        });
        req.end(payload);
        // the signal goes once the whole write has been sent ('finish'), while the server handles it
        await once(req, 'finish');
        const stopped = await engine.stop('SIGTERM');
        await pending;
        assert.equal(stopped.code, 0);
      } finally { killChild(engine.child); }
      engine = await startEngine({ dataDir });
      try {
        const token = await session(engine.http!, 'admin', 'ADMIN');
        const res = await action(engine.http!, { api: 'db', action: 'getRecordsByTable', authToken: token, params: { tableName: 't', maxRecords: 1 } });
        assert.equal(res.json.errorCode, 0, res.text);
        const total = res.json.result.totalRecordCount;
        if (answered === 200) assert.equal(total, 3000);
        else assert.ok(total === 0 || total === 3000, `all or nothing, got ${total} (answer ${answered})`);
      } finally { await engine.stop(); }
    });

    it('SIGTERM while a keep-alive client keeps writing: the listeners close and the process exits by itself', async () => {
      const engine = await startEngine({ dataDir: tempDir('sig'), env: { ENGINE_LISTENING_HTTPS_PORT: 'off' } });
      const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
      const auth = `Basic ${Buffer.from('admin:ADMIN').toString('base64')}`;
      const post = (path: string, body: unknown, onSent?: () => void) => new Promise<number>((resolvePost) => {
        const payload = Buffer.from(JSON.stringify(body));
        const req = httpRequest(`${engine.http}${REST}${path}`, { method: 'POST', agent, headers: { authorization: auth, 'content-type': 'application/json', 'content-length': String(payload.length) } }, (res) => {
          res.resume();
          res.on('end', () => resolvePost(res.statusCode ?? 0));
        });
        req.on('error', () => resolvePost(-1));
        req.on('finish', () => onSent?.());
        req.end(payload);
      });
      let exited = false;
      void engine.exited.then(() => { exited = true; });
      try {
        assert.equal(await post('/table/main/t', { fields: [{ name: 'n', type: 'integer' }, { name: 's', type: 'varchar', length: 200 }] }), 200);
        const rows = Array.from({ length: 2000 }, (_, i) => ({ n: i, s: 'z'.repeat(150) }));
        // the signal arrives while a request is in flight on the keep-alive connection
        await post('/record/main/t', rows, () => { process.kill(engine.pid, 'SIGTERM'); });
        // the client writes until the process has exited; a server that never exits fails by the test's timeout
        while (!exited) await post('/record/main/t', rows);
        const exit = await engine.exited;
        assert.equal(exit.code, 0);
        assert.equal(exit.signal, null);
      } finally {
        agent.destroy();
        killChild(engine.child);
      }
    });
  });

  describe('one-protocol builds and third-party plugins', () => {
    it('config/rest-only.json loads only storage-lmdb, data, http and rest', async () => {
      const engine = await startEngine({ dataDir: tempDir(), args: ['--config', 'config/rest-only.json'] });
      try {
        const root = await call('GET', `${engine.http}/`, { auth: null });
        assert.deepEqual([...root.json.plugins].sort(), ['data', 'http', 'rest', 'storage-lmdb']);
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`)).status, 200);
        const api = await action(engine.http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
        assert.equal(api.status, 404, 'no actions route');
      } finally { await engine.stop(); }
    });

    it('config/mq-only.json loads only its plugins (storage-lmdb, http, actions, mqtt) and keeps HTTPS closed', async () => {
      const engine = await startEngine({ dataDir: tempDir(), args: ['--config', 'config/mq-only.json'], env: { ENGINE_LISTENING_HTTPS_PORT: 'off', ...MQTT_PORTS_ZERO } });
      try {
        const expected = JSON.parse(readFileSync(join(ROOT, 'config', 'mq-only.json'), 'utf8')).plugins as string[];
        const root = await call('GET', `${engine.http}/`, { auth: null });
        assert.deepEqual([...root.json.plugins].sort(), [...expected].sort());
        assert.ok(!root.json.plugins.includes('rest'));
        assert.equal((await call('GET', `${engine.http}${REST}/table/main`)).status, 404, 'no REST routes');
        await session(engine.http!, 'admin', 'ADMIN');
      } finally { await engine.stop(); }
    });

    it('config/mq-only.json on its own (no port variables for HTTPS) does not open HTTPS', async () => {
      const engine = await startEngine({ dataDir: tempDir(), args: ['--config', 'config/mq-only.json'], ports: false, env: { ENGINE_LISTENING_HTTP_PORT: '0', ...MQTT_PORTS_ZERO } });
      try {
        assert.equal(engine.https, undefined);
        assert.ok(await within(30_000, engine.firstLog((line) => line.msg === 'listening' && line.plugin === 'mqtt'), () => 'the mqtt plugin did not log listening'));
        assert.equal(listeningSockets(engine.pid).length, 5, 'HTTP and the four MQTT listeners (TCP, TLS, WS, WSS)');
      } finally { await engine.stop(); }
    });

    it('examples/hello-plugin (dist/examples/hello-plugin.js) loads by relative and absolute path; its command and route work', async () => {
      const dir = tempDir('hello');
      const relative = writeJson(dir, 'rel.json', { plugins: ['storage-lmdb', 'data', 'http', './dist/examples/hello-plugin.js'], plugin_options: { hello: { greeting: 'Hi' } } });
      let engine = await startEngine({ dataDir: join(dir, 'd1'), args: ['--config', relative] });
      try {
        const root = await call('GET', `${engine.http}/`, { auth: null });
        assert.ok(root.json.plugins.includes('hello'), root.text);
        const res = await call('GET', `${engine.http}/hello?name=Ann`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { message: 'Hi, Ann (from admin)' });
        const viaHttps = await call('GET', `${engine.https}/hello?name=Bo`, { auth: ['ADMIN', 'ADMIN'] });
        assert.deepEqual(viaHttps.json, { message: 'Hi, Bo (from admin)' });
        // the command validates its params (schema: name non-empty)
        const invalid = await call('GET', `${engine.http}/hello?name=`);
        assert.equal(invalid.status, 400, invalid.text);
        assert.equal(invalid.json.errorCode, 12012, invalid.text);
        const unauth = await call('GET', `${engine.http}/hello?name=Ann`, { auth: ['admin', 'wrong'] });
        assert.equal(unauth.status, 401, unauth.text);
        assert.equal(unauth.json.errorCode, 12033);
      } finally { await engine.stop(); }
      const absolute = writeJson(dir, 'abs.json', { plugins: ['storage-lmdb', 'data', 'http', 'rest', 'actions', join(ROOT, 'dist', 'examples', 'hello-plugin.js')] });
      engine = await startEngine({ dataDir: join(dir, 'd2'), args: ['--config', absolute], cwd: dir });
      try {
        const res = await call('GET', `${engine.http}/hello?name=Cy`);
        assert.deepEqual(res.json, { message: 'Hello, Cy (from admin)' });
      } finally { await engine.stop(); }
    });

    it('ENGINE_PLUGINS (a JSON array) chooses the plugins', async () => {
      const engine = await startEngine({ dataDir: tempDir(), env: { ENGINE_PLUGINS: '["storage-lmdb","http","actions"]' } });
      try {
        const root = await call('GET', `${engine.http}/`, { auth: null });
        assert.deepEqual([...root.json.plugins].sort(), ['actions', 'http', 'storage-lmdb']);
      } finally { await engine.stop(); }
    });

    it('a third-party plugin loads by package name; plugins close in reverse order', async () => {
      const dir = tempDir('pkg');
      const closeLog = join(dir, 'close.log');
      const pkgDir = join(dir, 'mods', 'node_modules', 'engine-plugin-fa');
      require('node:fs').mkdirSync(pkgDir, { recursive: true });
      writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name: 'engine-plugin-fa', version: '1.0.0', main: 'index.js' }));
      writeFileSync(join(pkgDir, 'index.js'), `module.exports = { default: { name: 'fa-pkg', dependencies: ['http'], register(engine) {
        engine.onClose(() => require('fs').appendFileSync(${JSON.stringify(closeLog)}, 'fa-pkg\\n'));
        engine.need('http').fastify.get('/fa-pkg', async () => ({ ok: true }));
      } } };\n`);
      const a = join(dir, 'pa.js');
      const b = join(dir, 'pb.js');
      writeFileSync(a, `module.exports = { name: 'pa', register(engine) { engine.onClose(() => require('fs').appendFileSync(${JSON.stringify(closeLog)}, 'pa\\n')); } };\n`);
      writeFileSync(b, `module.exports = { name: 'pb', dependencies: ['pa'], register(engine) { engine.onClose(async () => { await new Promise((r) => setImmediate(r)); require('fs').appendFileSync(${JSON.stringify(closeLog)}, 'pb\\n'); }); } };\n`);
      // (pb's close finishes on a later turn of the event loop: pa closes after it only if each close is awaited)
      // listed out of dependency order on purpose
      const config = writeJson(dir, 'c.json', { plugins: [b, 'storage-lmdb', a, 'http', 'engine-plugin-fa'] });
      const engine = await startEngine({ dataDir: join(dir, 'd'), args: ['--config', config], env: { NODE_PATH: join(dir, 'mods', 'node_modules') } });
      try {
        const root = await call('GET', `${engine.http}/`, { auth: null });
        const names: string[] = root.json.plugins;
        assert.ok(names.indexOf('pa') < names.indexOf('pb'), `pa before pb: ${names}`);
        assert.ok(names.indexOf('http') < names.indexOf('fa-pkg'));
        assert.deepEqual((await call('GET', `${engine.http}/fa-pkg`, { auth: null })).json, { ok: true });
      } finally {
        const stopped = await engine.stop();
        assert.equal(stopped.code, 0);
      }
      assert.deepEqual(readFileSync(closeLog, 'utf8').trim().split('\n'), ['fa-pkg', 'pb', 'pa']);
    });

    it('a duplicate plugin name or a dependency cycle stops the start naming it', async () => {
      const dir = tempDir('cyc');
      const a = join(dir, 'a.js');
      const b = join(dir, 'b.js');
      writeFileSync(a, "module.exports = { name: 'cyc-a', dependencies: ['cyc-b'], register() {} };\n");
      writeFileSync(b, "module.exports = { name: 'cyc-b', dependencies: ['cyc-a'], register() {} };\n");
      let r = await runToExit({ args: ['--config', writeJson(dir, 'c.json', { plugins: ['storage-lmdb', a, b] })] });
      assert.notEqual(r.code, 0); assert.match(r.text, /cyc-a/, r.text);
      const dupe = join(dir, 'dupe.js');
      writeFileSync(dupe, "module.exports = { name: 'http', register() {} };\n");
      r = await runToExit({ args: ['--config', writeJson(dir, 'd.json', { plugins: ['storage-lmdb', 'data', 'http', dupe] })] });
      assert.notEqual(r.code, 0); assert.match(r.text, /http/, r.text);
    });
  });

  describe('roles and error codes on one running server', () => {
    let engine: Running;
    let base: string;
    let adminToken: string;
    const readerPw = 'Reader-pw-31415';
    const workerPw = 'Worker-pw-27182';

    before(async () => {
      const dir = tempDir('roles');
      const config = writeJson(dir, 'c.json', {
        roles: [{
          name: 'only_t1',
          description: 'records of main/t1',
          grants: [
            { commands: ['record.*', 'table.list', 'table.describe'], resources: ['database:main', 'table:main/t1'] },
          ],
          denies: [{ commands: ['record.delete'], resources: ['table:main/t1'] }],
        }],
      });
      engine = await startEngine({ dataDir: join(dir, 'd'), args: ['--config', config] });
      shared.add(engine.child);
      base = engine.http!;
      adminToken = await session(base, 'admin', 'ADMIN');
      for (const [username, password, roles] of [['Reader1', readerPw, ['reader']], ['WORKER', workerPw, ['only_t1']]] as const) {
        const res = await action(base, { api: 'admin', action: 'createAccount', authToken: adminToken, params: { username, password, roles } });
        assert.equal(res.json.errorCode, 0, res.text);
      }
      for (const table of ['t1', 't2']) {
        const res = await call('POST', `${base}${REST}/table/main/${table}`, { body: { fields: [{ name: 'n', type: 'integer' }] } });
        assert.equal(res.status, 200, res.text);
        assert.equal((await call('POST', `${base}${REST}/record/main/${table}`, { body: { n: 1 } })).status, 200);
      }
    });

    after(async () => {
      if (!engine) return;
      try { await engine.stop(); } finally { shared.delete(engine.child); killChild(engine.child); }
    });

    it('the built-in reader role reads over REST but gets 403 (12030) for writes', async () => {
      const auth: [string, string] = ['reader1', readerPw];
      assert.equal((await call('GET', `${base}${REST}/table/main`, { auth })).status, 200);
      const rec = await call('GET', `${base}${REST}/record/main/t1/1`, { auth });
      assert.equal(rec.status, 200, rec.text);
      assert.deepEqual(rec.json, { n: 1 });
      const query = await call('POST', `${base}${REST}/query/main/t1/id_pk?top=5`, { auth, body: { find: { id: { operator: '>=', value: 1 } } } });
      assert.equal(query.status, 200, query.text);
      for (const [method, path, body] of [
        ['POST', '/record/main/t1', { n: 2 }],
        ['PATCH', '/record/main/t1/1', { n: 3 }],
        ['DELETE', '/record/main/t1/1', undefined],
        ['POST', '/table/main/t3', { fields: [{ name: 'n', type: 'integer' }] }],
        ['DELETE', '/table/main/t1', undefined],
      ] as const) {
        const res = await call(method, `${base}${REST}${path}`, { auth, body });
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
        assert.equal(res.json.errorCode, 12030, `${method} ${path}: ${res.text}`);
      }
      const still = await call('GET', `${base}${REST}/record/main/t1/1`);
      assert.deepEqual(still.json, { n: 1 }, 'nothing changed');
    });

    it('the built-in reader role reads over actions but gets 12030 for writes', async () => {
      const token = await session(base, 'READER1', readerPw);
      const list = await action(base, { api: 'db', action: 'listTables', authToken: token, params: {} });
      assert.equal(list.json.errorCode, 0, list.text);
      const read = await action(base, { api: 'db', action: 'getRecordsByTable', authToken: token, params: { tableName: 't1', maxRecords: 10 } });
      assert.equal(read.json.errorCode, 0, read.text);
      for (const [api, act, params] of [
        ['db', 'insertRecords', { tableName: 't1', sourceData: [{ n: 5 }] }],
        ['db', 'createTable', { tableName: 'r_t', fields: [{ name: 'n', type: 'integer' }] }],
        ['db', 'deleteRecords', { tableName: 't1', ids: [1] }],
        ['admin', 'createAccount', { username: 'mallory', password: 'whatever1' }],
      ] as const) {
        const res = await action(base, { api, action: act, authToken: token, params });
        assert.equal(res.status, 200);
        assert.equal(res.json.errorCode, 12030, `${act}: ${res.text}`);
      }
    });

    it('a role declared in the settings file applies (grants, denies) and is read-only', async () => {
      const auth: [string, string] = ['worker', workerPw];
      const ok = await call('POST', `${base}${REST}/record/main/t1`, { auth, body: { n: 7 } });
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await call('GET', `${base}${REST}/record/main/t1/1`, { auth: ['Worker', workerPw] })).status, 200);
      const other = await call('POST', `${base}${REST}/record/main/t2`, { auth, body: { n: 7 } });
      assert.equal(other.status, 403, other.text);
      assert.equal(other.json.errorCode, 12030);
      const otherRead = await call('GET', `${base}${REST}/record/main/t2/1`, { auth });
      assert.equal(otherRead.status, 403, otherRead.text);
      const denied = await call('DELETE', `${base}${REST}/record/main/t1/1`, { auth });
      assert.equal(denied.status, 403, `deny wins: ${denied.text}`);
      const createTable = await call('POST', `${base}${REST}/table/main/t9`, { auth, body: { fields: [{ name: 'n', type: 'integer' }] } });
      assert.equal(createTable.status, 403, createTable.text);
      const roles = await action(base, { api: 'admin', action: 'listRoles', authToken: adminToken, params: {} });
      assert.equal(roles.json.errorCode, 0, roles.text);
      const declared = roles.json.result.roles.find((role: any) => role.roleName === 'only_t1');
      assert.ok(declared, roles.text);
      assert.equal(declared.origin, 'settings');
      const builtins = roles.json.result.roles.filter((role: any) => role.origin === 'builtin').map((role: any) => role.roleName).sort();
      assert.deepEqual(builtins, ['admin', 'reader']);
      const alter = await action(base, { api: 'admin', action: 'alterRole', authToken: adminToken, params: { roleName: 'only_t1', grants: [] } });
      assert.equal(alter.json.errorCode, 12044, alter.text);
    });

    it('REST answers the documented codes and statuses', async () => {
      const cases: [string, string, unknown, [string, string] | null | undefined, number, number][] = [
        ['GET', '/table/main', undefined, null, 401, 12033],
        ['GET', '/table/main', undefined, ['admin', 'nope'], 401, 12033],
        ['GET', '/table/main', undefined, ['nobody', 'ADMIN'], 401, 12033],
        ['GET', '/table/nodb', undefined, undefined, 404, 4094],
        ['GET', '/record/main/nosuch/1', undefined, undefined, 404, 4023],
        ['GET', '/record/main/t1/999', undefined, undefined, 404, 101],
        ['POST', '/table/main/t1', { fields: [{ name: 'n', type: 'integer' }] }, undefined, 400, 4022],
        ['POST', '/record/main/t1', { nosuchcol: 1 }, undefined, 400, 4014],
        ['POST', '/record/main/t1', '{"n": ', undefined, 400, 12009],
        ['GET', '/index/main/t1/nosuchindex', undefined, undefined, 404, 4045],
        ['POST', '/query/main/t1/id_pk?top=5', { find: { id: { operator: '>=', value: 1 } }, filter: 'n == (' }, undefined, 400, 4072],
      ];
      for (const [method, path, body, auth, status, code] of cases) {
        const res = await call(method, `${base}${REST}${path}`, { body, auth });
        assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
        assert.equal(res.json?.errorCode, code, `${method} ${path}: ${res.text}`);
        assert.equal(typeof res.json.errorMessage, 'string');
        if (status === 401) assert.match(String(res.headers['www-authenticate']), /^Basic/);
      }
      const unknown = await call('GET', `${base}/no/such/route`, { auth: null });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json.errorCode, 12004, unknown.text);
    });

    it('actions answer the documented codes (HTTP 200 envelope; 400 for a non-JSON body) and echo requestId', async () => {
      const cases: [unknown, number][] = [
        [{ api: 'admin', action: 'createSession', params: { username: 'admin', password: 'wrong' } }, 12033],
        [{ api: 'admin', action: 'createSession', params: { username: 'admin' } }, 12025],
        [{ api: 'db', action: 'listTables', authToken: 'not-a-token', params: {} }, 12031],
        [{ api: 'db', action: 'noSuchAction', authToken: adminToken, params: {} }, 14701],
        [{ api: 'db', action: 'listTables', authToken: adminToken, params: { databaseName: 'nodb' } }, 4094],
        [{ api: 'db', action: 'describeTables', authToken: adminToken, params: { tableNames: ['nosuch'] } }, 4023],
        [{ api: 'db', action: 'createTable', authToken: adminToken, params: { tableName: 't1', fields: [{ name: 'n', type: 'integer' }] } }, 4022],
        [{ api: 'db', action: 'getRecordsByTable', authToken: adminToken, params: { tableName: 't1', maxRecords: 'many' } }, 12012],
        [{ api: 'admin', action: 'alterAccount', authToken: adminToken, params: { username: 'ghost', password: 'x1234567' } }, 12040],
      ];
      for (const [body, code] of cases) {
        const res = await action(base, { ...(body as object), requestId: { n: code } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.errorCode, code, `${JSON.stringify(body)} → ${res.text}`);
        assert.deepEqual(res.json.requestId, { n: code });
        assert.ok(typeof res.json.errorMessage === 'string' && res.json.errorMessage.length > 0);
      }
      const notJson = await call('POST', `${base}/api`, { body: 'this is not json', auth: null });
      assert.equal(notJson.status, 400, notJson.text);
      assert.equal(notJson.json.errorCode, 12009, notJson.text);
    });

    it('every code the server returned above is listed in docs/errors.md with that HTTP status', async () => {
      const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
      const table = new Map<number, number>();
      for (const match of doc.matchAll(/^\|\s*`ENGINE_ERR_\w+`\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|/gm)) table.set(Number(match[1]), Number(match[2]));
      const expectations: [number, number][] = [[12033, 401], [12031, 401], [12030, 403], [12025, 400], [12012, 400], [12009, 400], [12028, 413], [14701, 400], [12004, 404], [4094, 404], [4023, 404], [4022, 400], [4014, 400], [4045, 404], [101, 404], [4072, 400], [12040, 404], [12041, 400], [12044, 400], [2, 400]];
      for (const [code, status] of expectations) assert.equal(table.get(code), status, `docs/errors.md lists ${code} with HTTP ${status}`);
      // the established product's codes are all there
      for (const code of [12031, 12033, 12025, 12012, 14701, 12030, 4094, 4023, 4022, 4045, 4051, 4014, 2, 101, 4072, 12028, 14237, 14243, 14221]) {
        assert.ok(table.has(code), `docs/errors.md lists ${code}`);
      }
    });

    it('duplicate key answers 2 over REST', async () => {
      const idx = await call('POST', `${base}${REST}/index/main/t2/n_u`, { body: { fields: [{ name: 'n' }], unique: true } });
      assert.equal(idx.status, 200, idx.text);
      const dup = await call('POST', `${base}${REST}/record/main/t2`, { body: { n: 1 } });
      assert.equal(dup.status, 400, dup.text);
      assert.equal(dup.json.errorCode, 2, dup.text);
    });
  });
});
