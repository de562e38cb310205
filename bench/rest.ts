/**
 * `npm run bench -- rest`: the REST interface against a bare fastify route doing the same LMDB
 * operation directly (bench/reference-server.ts), and bulk insert against raw LMDB batched puts
 * (bench/raw-lmdb.ts), all measured in this run on this machine.
 *
 * For each server in turn (never both at once, so they do not share the cores):
 * start it as a child process on a fresh data folder, create table `bench` (name varchar(32),
 * qty integer, price float, note varchar(64)) and index `by_qty`, seed BENCH_SEED_ROWS rows
 * (default 100,000) with bulk inserts, then measure for BENCH_SECONDS each (after a warm-up):
 * 1. GET /record/main/bench/{random seeded id}                         (50 connections)
 * 2. POST /query/main/bench/by_qty?top=10 {find:{qty:{operator:'>=', value: random}}}
 *                                                                       (50 connections)
 * 3. POST /record/main/bench {one row}                                 (50 connections)
 * 4. POST /record/main/bench [1,000 rows]                              (BENCH_BULK_CONNECTIONS, default 4)
 */
import { join } from 'node:path';
import {
  basicAuth, intEnv, benchRounds, benchSeconds, median, engineEnv, formatNumber, formatRatio, freePort, httpOk, log, measure, profileArgs,
  removeTempDir, runChildJson, startChild, table, tempDir, type ChildServer, type LoadResult,
} from './load';
import type { RawResult } from './raw-lmdb';
import { QTY_RANGE, REST_FIELDS, restRow } from './rows';

const PREFIX = '/engine/api/v1';
const BULK_ROWS = 1000;
const SINGLE_CONNECTIONS = 50;

export interface RestFigures {
  get: LoadResult;
  query: LoadResult;
  single: LoadResult;
  bulk: LoadResult;
}

export interface RestReport {
  engine: RestFigures;
  reference: RestFigures;
  raw?: RawResult;
  seconds: number;
  rounds: number;
  seedRows: number;
  bulkConnections: number;
}

function bulkBody(first: number): string {
  const rows = [];
  for (let i = 0; i < BULK_ROWS; i++) rows.push(restRow(first + i));
  return JSON.stringify(rows);
}

async function seed(server: ChildServer, headers: Record<string, string>, rows: number): Promise<void> {
  const started = Date.now();
  const url = `${server.url}${PREFIX}/record/main/bench`;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows) {
      const first = next;
      next += BULK_ROWS;
      const result = await httpOk('POST', url, bulkBody(first), headers);
      if (!Array.isArray(result?._ids) || result._ids.length !== BULK_ROWS) throw new Error(`seeding: unexpected answer ${JSON.stringify(result).slice(0, 200)}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  log(`${server.name}: seeded ${formatNumber(rows)} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Creates the table and index, seeds, and checks that a GET and a query answer what was seeded. */
async function prepare(server: ChildServer, headers: Record<string, string>, seedRows: number): Promise<void> {
  await httpOk('POST', `${server.url}${PREFIX}/table/main/bench`, { fields: REST_FIELDS }, headers);
  await httpOk('POST', `${server.url}${PREFIX}/index/main/bench/by_qty`, { fields: [{ name: 'qty' }] }, headers);
  await seed(server, headers, seedRows);
  const one = await httpOk('GET', `${server.url}${PREFIX}/record/main/bench/1`, undefined, headers);
  if (typeof one?.name !== 'string' || !one.name.startsWith('name ')) throw new Error(`${server.name}: GET record 1 answered ${JSON.stringify(one)}`);
  const found = await httpOk('POST', `${server.url}${PREFIX}/query/main/bench/by_qty?top=10`, { find: { qty: { operator: '>=', value: 500 } } }, headers);
  if (!Array.isArray(found?._records) || found._records.length !== 10) throw new Error(`${server.name}: query answered ${JSON.stringify(found).slice(0, 300)}`);
}

interface Target { server: ChildServer; headers: Record<string, string>; nextRow: number }
type Measurement = (target: Target, warmup: boolean) => Promise<LoadResult>;

function measurements(seconds: number, seedRows: number, bulkConnections: number): Record<keyof RestFigures, Measurement> {
  const random = (n: number): number => Math.floor(Math.random() * n);
  const bodies = [bulkBody(1_000_000), bulkBody(2_000_000), bulkBody(3_000_000), bulkBody(4_000_000)];
  return {
    get: ({ server, headers }, warmup) => measure({ warmup,
      url: server.url, connections: SINGLE_CONNECTIONS, seconds, headers,
      setup: (request) => ({ ...request, path: `${PREFIX}/record/main/bench/${1 + random(seedRows)}` }),
    }),
    query: ({ server, headers }, warmup) => measure({ warmup,
      url: server.url, connections: SINGLE_CONNECTIONS, seconds, headers, method: 'POST', body: '{}',
      setup: (request) => ({
        ...request,
        path: `${PREFIX}/query/main/bench/by_qty?top=10`,
        body: `{"find":{"qty":{"operator":">=","value":${random(QTY_RANGE - 1000)}}}}`,
      }),
    }),
    single: (target, warmup) => measure({ warmup,
      url: target.server.url, connections: SINGLE_CONNECTIONS, seconds, headers: target.headers, method: 'POST', body: '{}',
      setup: (request) => ({ ...request, path: `${PREFIX}/record/main/bench`, body: JSON.stringify(restRow(target.nextRow++)) }),
    }),
    bulk: ({ server, headers }, warmup) => {
      let b = 0;
      return measure({
        warmup, url: server.url, connections: bulkConnections, seconds, headers, method: 'POST', body: bodies[0], unitsPerRequest: BULK_ROWS,
        setup: (request) => ({ ...request, path: `${PREFIX}/record/main/bench`, body: bodies[b++ % bodies.length] }),
      });
    },
  };
}

/** The measurements to run: env BENCH_REST_ONLY (comma-separated among get, query, single, bulk), default all. */
function only(): Array<keyof RestFigures> {
  const all = ['get', 'query', 'single', 'bulk'] as const;
  const wanted = process.env.BENCH_REST_ONLY?.split(',').map((name) => name.trim());
  return wanted ? all.filter((name) => wanted.includes(name)) : [...all];
}

const LABELS: Record<keyof RestFigures, string> = {
  get: 'GET by id',
  query: 'index query top=10',
  single: 'single-record insert',
  bulk: `bulk insert (${BULK_ROWS} rows per request)`,
};

export async function runRest(): Promise<RestReport> {
  const seconds = benchSeconds();
  const rounds = benchRounds();
  const seedRows = Math.ceil(intEnv('BENCH_SEED_ROWS', 100_000) / BULK_ROWS) * BULK_ROWS;
  const bulkConnections = intEnv('BENCH_BULK_CONNECTIONS', 4);
  const dist = join(__dirname, '..');
  log(`REST: ${rounds} rounds of ${seconds} s per measurement, ${formatNumber(seedRows)} seeded rows, bulk with ${bulkConnections} connections`);

  // Both servers are started and seeded first; then each measurement runs against the engine and
  // right after against the bare route (the idle one costs nothing), so that both figures of a
  // ratio are taken under the same conditions of the machine.
  const engineDir = tempDir('rest-engine');
  const referenceDir = tempDir('rest-reference');
  const rawDir = tempDir('rest-raw');
  const servers: ChildServer[] = [];
  try {
    const enginePort = await freePort();
    const engineServer = await startChild({
      name: 'engine', script: join(dist, 'main.js'), env: engineEnv(enginePort, engineDir), port: enginePort, nodeArgs: profileArgs('rest-engine'),
    });
    servers.push(engineServer);
    const referencePort = await freePort();
    const referenceServer = await startChild({
      name: 'bare fastify', script: join(__dirname, 'reference-server.js'),
      env: { ...process.env, BENCH_PORT: String(referencePort), BENCH_DATA_DIR: referenceDir }, port: referencePort,
    });
    servers.push(referenceServer);
    const engineTarget: Target = { server: engineServer, headers: basicAuth('admin', 'ADMIN'), nextRow: seedRows };
    const referenceTarget: Target = { server: referenceServer, headers: {}, nextRow: seedRows };
    await prepare(engineServer, engineTarget.headers, seedRows);
    await prepare(referenceServer, referenceTarget.headers, seedRows);

    const engine = {} as RestFigures;
    const reference = {} as RestFigures;
    let raw: RawResult | undefined;
    const runs = measurements(seconds, seedRows, bulkConnections);
    const rawRuns: RawResult[] = [];
    for (const key of only()) {
      const engineRuns: LoadResult[] = [];
      const referenceRuns: LoadResult[] = [];
      for (let round = 1; round <= rounds; round++) {
        log(`${LABELS[key]}, round ${round}/${rounds}: engine`);
        engineRuns.push(await runs[key](engineTarget, round === 1));
        log(`${LABELS[key]}, round ${round}/${rounds}: bare fastify`);
        referenceRuns.push(await runs[key](referenceTarget, round === 1));
        if (key === 'bulk') {
          log(`raw LMDB batched puts (1,000 rows per transaction), round ${round}/${rounds}`);
          rawRuns.push(await runChildJson<RawResult>('raw LMDB', join(__dirname, 'raw-lmdb.js'), ['rest', String(seconds), rawDir]));
        }
      }
      engine[key] = median(engineRuns, (r) => r.unitsPerSecond);
      reference[key] = median(referenceRuns, (r) => r.unitsPerSecond);
      log(`${LABELS[key]} per round: engine ${engineRuns.map((r) => formatNumber(r.unitsPerSecond)).join(', ')}; bare fastify ${referenceRuns.map((r) => formatNumber(r.unitsPerSecond)).join(', ')}`);
    }
    raw = rawRuns.length ? median(rawRuns, (r) => r.rowsPerSecond) : undefined;
    if (raw) log(`raw LMDB per round: ${rawRuns.map((r) => formatNumber(r.rowsPerSecond)).join(', ')}`);
    return { engine, reference, raw, seconds, rounds, seedRows, bulkConnections };
  } finally {
    for (const server of servers) await server.stop();
    for (const dir of [engineDir, referenceDir, rawDir]) removeTempDir(dir);
  }
}

export function printRest(report: RestReport): void {
  const { engine, reference, raw } = report;
  const row = (what: string, e: number, r: number, reference: string, target: number): string[] => {
    const ratio = e / r;
    return [what, formatNumber(e), formatNumber(r), reference, formatRatio(ratio), `≥ ${target.toFixed(1)}×`, ratio >= target ? 'met' : '**missed**'];
  };
  const rows: string[][] = [];
  if (engine.single) rows.push(row('single-record insert (req/s, 50 conn.)', engine.single.requestsPerSecond, reference.single.requestsPerSecond, 'bare fastify route', 0.7));
  if (engine.get) rows.push(row('GET by id (req/s, 50 conn.)', engine.get.requestsPerSecond, reference.get.requestsPerSecond, 'bare fastify route', 0.7));
  if (engine.query) rows.push(row('index query top=10 (req/s, 50 conn.)', engine.query.requestsPerSecond, reference.query.requestsPerSecond, 'bare fastify route', 0.7));
  if (engine.bulk) {
    rows.push(row(`bulk insert (rows/s, 1,000/request, ${report.bulkConnections} conn.)`, engine.bulk.unitsPerSecond, reference.bulk.unitsPerSecond, 'bare fastify route', 0.6));
    if (raw) rows.push(row('bulk insert (rows/s)', engine.bulk.unitsPerSecond, raw.rowsPerSecond, 'raw LMDB, 1,000 puts/txn', 0.6));
  }
  process.stdout.write(`\nREST benchmark (median of ${report.rounds} alternating rounds of ${report.seconds} s per measurement, ${formatNumber(report.seedRows)} seeded rows, every write durable)\n\n`);
  process.stdout.write(`${table(['measurement', 'engine', 'reference', 'reference is', 'ratio', 'target', ''], rows)}\n\n`);
  const ms = (r?: LoadResult): string => (r ? `${r.latencyP50} / ${r.latencyP99}` : '—');
  const latency = (name: string, f: RestFigures): string[] => [name, ms(f.single), ms(f.get), ms(f.query), ms(f.bulk)];
  process.stdout.write('Latency p50 / p99 (ms)\n\n');
  process.stdout.write(`${table(['server', 'single insert', 'GET', 'query', 'bulk insert'], [latency('engine', engine), latency('bare fastify', reference)])}\n\n`);
  const errors = (['single', 'get', 'query', 'bulk'] as const)
    .flatMap((k) => [[`engine ${k}`, engine[k]], [`bare fastify ${k}`, reference[k]]] as const)
    .filter(([, r]) => r && r.non2xx + r.errors + r.failed > 0)
    .map(([name, r]) => `${name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.failed} failed`);
  if (errors.length) process.stdout.write(`Not counted: ${errors.join('; ')}\n\n`);
}
