/**
 * `npm run bench -- actions`: bulk inserts through the JSON-action interface against raw LMDB
 * batched puts of similar rows (bench/raw-lmdb.ts), both measured in this run.
 *
 * A client creates a session (admin createSession), drops (deleteTables, its error ignored when
 * the table does not exist) and creates table `bench_actions` with its own `id bigint` primary key
 * and five other columns, then posts `insertRecords` batches of BENCH_ACTIONS_BATCH rows (default
 * 5,000, dataFormat arrays) from BENCH_ACTIONS_CONNECTIONS (default 4) concurrent connections for
 * BENCH_SECONDS (after a warm-up). Only answers with `errorCode` 0 count.
 */
import { join } from 'node:path';
import {
  intEnv, benchRounds, benchSeconds, engineEnv, median, formatNumber, formatRatio, freePort, httpOk, log, measure, profileArgs, removeTempDir,
  runChildJson, startChild, table, tempDir, type LoadResult,
} from './load';
import type { RawResult } from './raw-lmdb';
import { ACTIONS_FIELDS, actionsBatchJson } from './rows';

const TABLE = 'bench_actions';

export interface ActionsReport {
  engine: LoadResult;
  raw: RawResult;
  seconds: number;
  rounds: number;
  batch: number;
  connections: number;
}

async function action(url: string, api: string, name: string, params: Record<string, unknown>, authToken?: string): Promise<any> {
  const answer = await httpOk('POST', `${url}/api`, { api, action: name, params, ...(authToken ? { authToken } : {}) });
  if (answer?.errorCode !== 0) throw new Error(`${api}.${name} answered ${JSON.stringify(answer).slice(0, 500)}`);
  return answer;
}

export async function runActions(): Promise<ActionsReport> {
  const seconds = benchSeconds();
  const batch = intEnv('BENCH_ACTIONS_BATCH', 5000);
  const connections = intEnv('BENCH_ACTIONS_CONNECTIONS', 4);
  log(`actions: ${seconds} s, insertRecords of ${formatNumber(batch)} rows from ${connections} connections`);

  const rounds = benchRounds();
  const dataDir = tempDir('actions-engine');
  const rawDir = tempDir('actions-raw');
  const rawRuns: RawResult[] = [];
  const port = await freePort();
  const server = await startChild({
    name: 'engine', script: join(__dirname, '..', 'main.js'), env: engineEnv(port, dataDir), port,
    nodeArgs: profileArgs('actions-engine'),
  });
  let engine: LoadResult;
  try {
    const session = await action(server.url, 'admin', 'createSession', { username: 'admin', password: 'ADMIN' });
    const authToken: string = session.authToken || session.result?.authToken;
    if (typeof authToken !== 'string' || !authToken) throw new Error(`createSession gave no authToken: ${JSON.stringify(session)}`);
    await httpOk('POST', `${server.url}/api`, { api: 'db', action: 'deleteTables', authToken, params: { tableNames: [TABLE] } });
    await action(server.url, 'db', 'createTable', { tableName: TABLE, fields: ACTIONS_FIELDS }, authToken);
    // One batch by hand first: a wrong request shape shows here, not as a run of failures.
    await httpOk('POST', `${server.url}/api`, actionsBatchJson(authToken, TABLE, 1, 10)).then((answer) => {
      if (answer?.errorCode !== 0) throw new Error(`insertRecords answered ${JSON.stringify(answer).slice(0, 500)}`);
    });
    let next = 11;
    const firstMeasured = next;
    const engineRuns: LoadResult[] = [];
    for (let round = 1; round <= rounds; round++) {
      log(`insertRecords, round ${round}/${rounds}: engine`);
      engineRuns.push(await measure({
        warmup: round === 1, url: server.url, connections, seconds, method: 'POST', body: '{}', unitsPerRequest: batch,
        setup: (request) => {
          const first = next;
          next += batch;
          return { ...request, path: '/api', body: actionsBatchJson(authToken, TABLE, first, batch) };
        },
        check: (body) => body.includes('"errorCode":0'),
      }));
      log(`raw LMDB batched puts (1,000 rows per transaction), round ${round}/${rounds}`);
      rawRuns.push(await runChildJson<RawResult>('raw LMDB', join(__dirname, 'raw-lmdb.js'), ['actions', String(seconds), rawDir]));
    }
    engine = median(engineRuns, (r) => r.unitsPerSecond);
    log(`insertRecords per round: engine ${engineRuns.map((r) => formatNumber(r.unitsPerSecond)).join(', ')}; raw LMDB ${rawRuns.map((r) => formatNumber(r.rowsPerSecond)).join(', ')}`);
    // The rows are there: the hand-made batch and the first measured one.
    const read = await action(server.url, 'db', 'getRecordsByIds', { tableName: TABLE, ids: [1, firstMeasured, firstMeasured + batch - 1] }, authToken);
    const text = JSON.stringify(read.result);
    if (![1, firstMeasured, firstMeasured + batch - 1].every((id) => text.includes(`"name ${id}"`))) throw new Error(`getRecordsByIds answered ${text.slice(0, 500)}`);
  } finally {
    await server.stop();
    removeTempDir(dataDir);
    removeTempDir(rawDir);
  }

  const raw = median(rawRuns, (r) => r.rowsPerSecond);
  return { engine, raw, seconds, rounds, batch, connections };
}

export function printActions(report: ActionsReport): void {
  const ratio = report.engine.unitsPerSecond / report.raw.rowsPerSecond;
  process.stdout.write(`\nActions benchmark (median of ${report.rounds} alternating rounds of ${report.seconds} s, insertRecords of ${formatNumber(report.batch)} rows, dataFormat arrays, ${report.connections} connections, every write durable)\n\n`);
  process.stdout.write(`${table(['measurement', 'engine', 'reference', 'reference is', 'ratio', 'target', ''], [[
    'insertRecords (rows/s)',
    formatNumber(report.engine.unitsPerSecond),
    formatNumber(report.raw.rowsPerSecond),
    'raw LMDB, 1,000 puts/txn',
    formatRatio(ratio),
    '≥ 0.6×',
    ratio >= 0.6 ? 'met' : '**missed**',
  ]])}\n\n`);
  process.stdout.write(`insertRecords latency p50 / p99: ${report.engine.latencyP50} / ${report.engine.latencyP99} ms`
    + `; ${report.engine.ok} batches counted`
    + (report.engine.non2xx + report.engine.errors + report.engine.failed > 0
      ? `; not counted: ${report.engine.non2xx} non-2xx, ${report.engine.errors} errors, ${report.engine.failed} error answers`
      : '')
    + '\n\n');
}
