/**
 * `npm run bench -- logins`: durable single-record insert latency, alone and while 32 clients
 * flood the server with failed logins: wrong passwords for `admin` (the backoff soon answers
 * them without a password check), then unknown account names (fresh names each time, so every
 * one costs a check: the worst case for the hashing pool). Before password checks moved to their
 * own worker threads, wrong passwords pushed the insert p50 from about 5 ms to about 1 s: scrypt
 * held every thread of libuv's pool. See docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  basicAuth, benchSeconds, engineEnv, formatNumber, freePort, httpJson, log, measure, removeTempDir,
  startChild, table, tempDir, type AutocannonRequest, type LoadResult,
} from './load';

// autocannon ships no type declarations (see load.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: Record<string, unknown>) => Promise<{ non2xx: number; '2xx': number; errors: number; duration: number }>;

const FLOOD_CONNECTIONS = 32;

interface Flooded {
  what: string;
  insert: LoadResult;
  /** Failed logins answered per second during the flood. */
  loginsPerSecond: number;
}

export interface LoginsReport {
  alone: LoadResult;
  flooded: Flooded[];
  seconds: number;
}

export async function runLogins(): Promise<LoginsReport> {
  const seconds = benchSeconds();
  const dir = tempDir('logins');
  const port = await freePort();
  const server = await startChild({ name: 'engine', script: join(__dirname, '..', 'main.js'), env: { ...engineEnv(port, dir), ENGINE_PLUGINS: '["storage-lmdb","data","http","rest"]' }, port });
  try {
    const admin = basicAuth('admin', 'ADMIN');
    const created = await httpJson('POST', `${server.url}/engine/api/v1/table/main/t`, { fields: [{ name: 'n', type: 'integer' }] }, admin);
    if (created.status !== 200) throw new Error(`creating the table: ${created.text}`);
    const insert = () => measure({ url: `${server.url}/engine/api/v1/record/main/t`, method: 'POST', body: '{"n":1}', headers: admin, connections: 1, seconds });

    log(`logins: durable single inserts (1 connection) for ${seconds} s, alone`);
    const alone = await insert();
    const floods: Array<[string, AutocannonRequest]> = [
      ['wrong passwords for admin', { method: 'GET', path: '/engine/api/v1/table/main', headers: basicAuth('admin', 'wrong') }],
      ['unknown account names', {
        method: 'GET',
        path: '/engine/api/v1/table/main',
        setupRequest: (request) => ({ ...request, headers: basicAuth(`nobody-${randomBytes(6).toString('hex')}`, 'wrong') }),
      }],
    ];
    const flooded: Flooded[] = [];
    for (const [what, login] of floods) {
      log(`logins: the same while ${FLOOD_CONNECTIONS} connections send ${what}`);
      const flood = autocannon({ url: server.url, connections: FLOOD_CONNECTIONS, duration: seconds + 2, timeout: 60, requests: [login] });
      const measured = await insert();
      const result = await flood;
      flooded.push({ what, insert: measured, loginsPerSecond: result.non2xx / result.duration });
    }
    return { alone, flooded, seconds };
  } finally {
    await server.stop();
    removeTempDir(dir);
  }
}

export function printLogins(report: LoginsReport): void {
  const row = (what: string, result: LoadResult, logins: string): string[] => [what, result.latencyP50.toFixed(1), result.latencyP99.toFixed(1), formatNumber(result.requestsPerSecond), logins];
  process.stdout.write(`\n## Inserts under a flood of failed logins (${report.seconds} s)\n\n`);
  process.stdout.write(`${table(['durable single-record insert, 1 connection', 'p50 ms', 'p99 ms', 'req/s', 'failed logins/s'], [
    row('alone', report.alone, '—'),
    ...report.flooded.map((f) => row(`${FLOOD_CONNECTIONS} connections send ${f.what}`, f.insert, formatNumber(f.loginsPerSecond))),
  ])}\n`);
}
