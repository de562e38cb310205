/**
 * Starts a real engine in this process on a fresh temporary data folder and free ports, for
 * end-to-end tests through real sockets. Close it in `after`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Engine } from '../../kernel/engine';
import { loadSettings, type Settings } from '../../kernel/settings';
import type { EnginePlugin } from '../../kernel/plugin';
import type { Clock } from '../../kernel/clock';
import type { Logger } from 'pino';

export interface TestServer {
  engine: Engine;
  dataDir: string;
  http: string;
  https?: string;
  close(options?: { keepData?: boolean }): Promise<void>;
}

export function tempDataDir(label = 'engine-test'): string {
  return mkdtempSync(join(tmpdir(), `${label}.d-`)); // a dot in the name, as users' folders may have
}

export async function startServer(overrides: Partial<Settings> = {}, options: { env?: NodeJS.ProcessEnv; extraPlugins?: EnginePlugin<any>[]; clock?: Clock; logger?: Logger } = {}): Promise<TestServer> {
  const dataDir = overrides.data_dir ?? tempDataDir();
  const settings = loadSettings({
    env: {},
    overrides: {
      listening_http_port: 0,
      listening_https_port: 0,
      mqtt_port: 0,
      mqtts_port: 0,
      mqtt_ws_port: 0,
      mqtt_wss_port: 0,
      log_level: 'silent',
      ...overrides,
      data_dir: dataDir,
    },
  });
  const engine = await Engine.start({ settings, env: options.env ?? {}, extraPlugins: options.extraPlugins, clock: options.clock, logger: options.logger });
  const urls = engine.has('http') ? engine.need('http').urls : {};
  return {
    engine,
    dataDir,
    http: urls.http ?? '',
    https: urls.https,
    async close({ keepData = false } = {}) {
      await engine.close();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

const insecureAgent = new Agent({ rejectUnauthorized: false, keepAlive: true });

/** One real HTTP(S) request; `body` objects are sent as JSON, strings as they are. */
export function call(method: string, url: string, options: { body?: unknown; auth?: [string, string] | null; headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(payload.length);
  }
  const auth = options.auth === undefined ? ['admin', 'ADMIN'] : options.auth;
  if (auth) headers.authorization = `Basic ${Buffer.from(`${auth[0]}:${auth[1]}`).toString('base64')}`;
  const secure = url.startsWith('https:');
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(url, { method, headers, agent: secure ? insecureAgent : undefined }, (res) => {
      readResponse(res, resolve);
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Collects a response: status, headers, body text and its JSON (undefined when not JSON). */
export function readResponse(res: IncomingMessage, done: (result: HttpResult) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
    done({ status: res.statusCode ?? 0, headers: res.headers, text, json });
  });
}
