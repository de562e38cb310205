/**
 * `npm run bench -- sql`: SQL reads (getRecordsUsingSql) against the same reads through the db
 * actions' index reads (getRecordsInKeyRange, the getRecordsByIndex family with a key range), in
 * one run on one engine child:
 * - a point SELECT on an indexed column (`WHERE k = ?`, a random k each request), against the
 *   key range `{"=": [k]}` of the same unique index;
 * - a 1,000-row index range (`WHERE k >= ? AND k < ? + 1000`), against `{">=": [a], "<": [a + 1000]}`.
 * Table `bench_sql` holds BENCH_SQL_ROWS rows (default 100,000); both sides answer dataFormat
 * arrays; BENCH_SQL_CONNECTIONS (default 8) concurrent connections; BENCH_SQL_ONLY=point|range runs
 * one read alone (to profile it). Target: SQL ≥ 0.5× the action.
 */
import { join } from 'node:path';
import {
  intEnv, benchRounds, benchSeconds, engineEnv, median, formatNumber, formatRatio, freePort, httpOk, log, measure, profileArgs, removeTempDir,
  startChild, table, tempDir, type LoadResult,
} from './load';

const TABLE = 'bench_sql';
const RANGE = 1000;

export interface SqlReport {
  rows: number;
  seconds: number;
  rounds: number;
  connections: number;
  results: Array<{ name: string; sql: LoadResult; action: LoadResult }>;
}

async function action(url: string, api: string, name: string, params: Record<string, unknown>, authToken?: string): Promise<any> {
  const answer = await httpOk('POST', `${url}/api`, { api, action: name, params, ...(authToken ? { authToken } : {}) });
  if (answer?.errorCode !== 0) throw new Error(`${api}.${name} answered ${JSON.stringify(answer).slice(0, 500)}`);
  return answer;
}

export async function runSql(): Promise<SqlReport> {
  const seconds = benchSeconds();
  const rounds = benchRounds();
  const rows = intEnv('BENCH_SQL_ROWS', 100_000);
  const connections = intEnv('BENCH_SQL_CONNECTIONS', 8);
  log(`sql: ${formatNumber(rows)} rows, ${seconds} s per measurement, ${connections} connections`);
  const dataDir = tempDir('sql-engine');
  const port = await freePort();
  const server = await startChild({ name: 'engine', script: join(__dirname, '..', 'main.js'), env: engineEnv(port, dataDir), port, nodeArgs: profileArgs('sql-engine') });
  try {
    const session = await action(server.url, 'admin', 'createSession', { username: 'admin', password: 'ADMIN' });
    const authToken: string = session.authToken;
    await action(server.url, 'db', 'createTable', { tableName: TABLE, fields: [{ name: 'k', type: 'integer' }, { name: 'name', type: 'varchar', length: 24 }, { name: 'v', type: 'float' }] }, authToken);
    await action(server.url, 'db', 'createIndex', { tableName: TABLE, indexName: 'by_k', unique: true, fields: [{ name: 'k' }] }, authToken);
    for (let start = 0; start < rows; start += 5000) {
      const count = Math.min(5000, rows - start);
      await action(server.url, 'db', 'insertRecords', { tableName: TABLE, dataFormat: 'arrays', fieldNames: ['k', 'name', 'v'], sourceData: Array.from({ length: count }, (_, i) => [start + i, `name ${start + i}`, (start + i) / 7]) }, authToken);
    }
    const arrays = { dataFormat: 'arrays' };
    const random = (span: number): number => Math.floor(Math.random() * (rows - span));
    const scenarios: Array<{ name: string; sql: () => unknown; action: () => unknown; expect: number }> = [
      {
        name: 'point SELECT on an indexed column',
        sql: () => ({ api: 'db', action: 'getRecordsUsingSql', authToken, responseOptions: arrays, params: { sql: `SELECT * FROM ${TABLE} WHERE k = ?`, sqlParams: [random(1)] } }),
        action: () => ({ api: 'db', action: 'getRecordsInKeyRange', authToken, responseOptions: arrays, params: { tableName: TABLE, indexName: 'by_k', indexRange: { '=': [random(1)] }, maxRecords: 1 } }),
        expect: 1,
      },
      {
        name: `${formatNumber(RANGE)}-row index range`,
        sql: () => { const a = random(RANGE); return { api: 'db', action: 'getRecordsUsingSql', authToken, responseOptions: arrays, params: { sql: `SELECT * FROM ${TABLE} WHERE k >= ? AND k < ?`, sqlParams: [a, a + RANGE] } }; },
        action: () => { const a = random(RANGE); return { api: 'db', action: 'getRecordsInKeyRange', authToken, responseOptions: arrays, params: { tableName: TABLE, indexName: 'by_k', indexRange: { '>=': [a], '<': [a + RANGE] }, maxRecords: RANGE } }; },
        expect: RANGE,
      },
    ];
    const results: SqlReport['results'] = [];
    // BENCH_SQL_ONLY=point|range runs one of them (to profile it alone).
    const only = process.env.BENCH_SQL_ONLY || undefined;
    if (only !== undefined && only !== 'point' && only !== 'range') throw new Error(`BENCH_SQL_ONLY=${only}: point or range`);
    for (const scenario of scenarios.filter((_, i) => only === undefined || only === (i === 0 ? 'point' : 'range'))) {
      // One request by hand first: a wrong request shape shows here.
      for (const make of [scenario.sql, scenario.action]) {
        const answer = await httpOk('POST', `${server.url}/api`, make());
        if (answer?.errorCode !== 0 || answer.result.data.length !== scenario.expect) throw new Error(`${scenario.name} answered ${JSON.stringify(answer).slice(0, 500)}`);
      }
      const sqlRuns: LoadResult[] = [];
      const actionRuns: LoadResult[] = [];
      for (let round = 1; round <= rounds; round++) {
        for (const [side, make, runs] of [['SQL', scenario.sql, sqlRuns], ['action', scenario.action, actionRuns]] as const) {
          log(`${scenario.name}, round ${round}/${rounds}: ${side}`);
          runs.push(await measure({
            warmup: round === 1, url: server.url, connections, seconds, method: 'POST', body: '{}',
            setup: (request) => ({ ...request, path: '/api', body: JSON.stringify(make()) }),
            check: (body) => body.includes('"errorCode":0'),
          }));
        }
      }
      results.push({ name: scenario.name, sql: median(sqlRuns, (r) => r.requestsPerSecond), action: median(actionRuns, (r) => r.requestsPerSecond) });
    }
    return { rows, seconds, rounds, connections, results };
  } finally {
    await server.stop();
    removeTempDir(dataDir);
  }
}

export function printSql(report: SqlReport): void {
  process.stdout.write(`\nSQL benchmark (median of ${report.rounds} alternating rounds of ${report.seconds} s, ${formatNumber(report.rows)} rows, ${report.connections} connections, dataFormat arrays)\n\n`);
  process.stdout.write(`${table(['read', 'getRecordsUsingSql (req/s)', 'getRecordsInKeyRange (req/s)', 'ratio', 'target', '', 'SQL p50 / p99 ms', 'action p50 / p99 ms'], report.results.map((result) => {
    const ratio = result.sql.requestsPerSecond / result.action.requestsPerSecond;
    return [
      result.name,
      formatNumber(result.sql.requestsPerSecond),
      formatNumber(result.action.requestsPerSecond),
      formatRatio(ratio),
      '≥ 0.5×',
      ratio >= 0.5 ? 'met' : '**missed**',
      `${result.sql.latencyP50} / ${result.sql.latencyP99}`,
      `${result.action.latencyP50} / ${result.action.latencyP99}`,
    ];
  }))}\n\n`);
}
