/**
 * `npm run bench [-- rest|actions|logins|mqtt|mq|explorer|sql|cluster]`: runs the REST benchmark, the actions benchmark, or
 * both (no argument); `logins` (insert latency under a flood of failed logins), `mqtt` (the
 * broker against Aedes and Mosquitto; `--quick`, `--only=SCENARIO,...`, `--scrape`) and `mq` (the mq actions against MQTT;
 * `--quick`), `explorer` (the web explorer in chromium), `sql` (SQL reads against the index
 * actions, bench/sql.ts) and `cluster` (3 nodes on NATS JetStream against one node,
 * docs/cluster.md) run only when named.
 * See docs/benchmarks.md. Settings by environment: BENCH_SECONDS (per measurement,
 * default 5), BENCH_SEED_ROWS, BENCH_BULK_CONNECTIONS, BENCH_ACTIONS_BATCH,
 * BENCH_ACTIONS_CONNECTIONS, BENCH_CPU_PROF_DIR (write a V8 CPU profile of each engine child there).
 *
 * Servers run in child processes started here (on 127.0.0.1, free ports, temporary data folders);
 * the load generator runs in this process. Everything stops by itself.
 */
import { printActions, runActions } from './actions';
import { printCluster, runCluster } from './cluster';
import { printExplorer, runExplorer } from './explorer';
import { log, stopAllChildren } from './load';
import { printLogins, runLogins } from './logins';
import { printMq, runMq } from './mq';
import { printMqtt, runMqtt } from './mqtt';
import { printRest, runRest } from './rest';
import { printSql, runSql } from './sql';

async function main(): Promise<void> {
  const which = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const unknown = which.filter((name) => name !== 'rest' && name !== 'actions' && name !== 'logins' && name !== 'mqtt' && name !== 'mq' && name !== 'explorer' && name !== 'sql' && name !== 'cluster');
  if (unknown.length) {
    process.stderr.write(`usage: npm run bench [-- rest|actions|logins|mqtt|mq|explorer|sql|cluster]   (unknown: ${unknown.join(', ')})\n`);
    process.exit(2);
  }
  const all = which.length === 0;
  if (all || which.includes('rest')) printRest(await runRest());
  if (all || which.includes('actions')) printActions(await runActions());
  if (which.includes('logins')) printLogins(await runLogins());
  if (which.includes('mqtt')) printMqtt(await runMqtt());
  if (which.includes('mq')) printMq(await runMq());
  if (which.includes('explorer')) printExplorer(await runExplorer());
  if (which.includes('sql')) printSql(await runSql());
  if (which.includes('cluster')) printCluster(await runCluster());
}

main().then(
  () => stopAllChildren().then(() => process.exit(0)),
  async (error: unknown) => {
    log(`failed: ${(error as Error).stack ?? String(error)}`);
    await stopAllChildren();
    process.exit(1);
  },
);
