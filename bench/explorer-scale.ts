/**
 * The explorer's server side at scale (part of `npm run bench -- explorer`): the answers the
 * Topics and Subscriptions screens wait for, timed over HTTP (`POST /api`, median of 5 calls) on
 * a server holding BENCH_EXPLORER_SCALE_TOPICS topics (default 100,000) and
 * BENCH_EXPLORER_SESSIONS MQTT client sessions (default 10,000, each kept with one subscription).
 *
 *   browseTopics, root       the topics spread over 100 branches: the root's 100 nodes
 *   browseTopics, one level  every topic under one node: its first page of 500 (each topic's
 *                            last value read for the preview) and a page deep in the level
 *   browseTopics, filter     a substring filter matching 1 % of the topics, at the root
 *   listMqSubscriptions      the first page of 100, the last page, and a search
 */
import mqtt from 'mqtt';
import { engineEnv, formatNumber, freePort, httpOk, intEnv, log, profileArgs, removeTempDir, startChild, table, tempDir } from './load';

const SEED_PER_CALL = 5_000;
const CALLS = 5;
const CONNECT_CONCURRENCY = 100;

export interface ScaleResult {
  topics: number;
  sessions: number;
  /** Label, the first call's ms, the median ms of the calls. */
  timings: Array<[string, number, number]>;
}

export async function runExplorerScale(): Promise<ScaleResult> {
  const topics = intEnv('BENCH_EXPLORER_SCALE_TOPICS', 100_000);
  const sessions = intEnv('BENCH_EXPLORER_SESSIONS', 10_000);
  const port = await freePort();
  const mqttPort = await freePort();
  const dataDir = tempDir('bench-explorer-scale');
  const server = await startChild({ name: 'engine', script: 'dist/main.js', env: { ...engineEnv(port, dataDir), ENGINE_MQTT_PORT: String(mqttPort) }, port, nodeArgs: profileArgs('explorer-scale') });
  try {
    const { authToken } = await httpOk('POST', `${server.url}/api`, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
    const api = (action: string, params: Record<string, unknown>) => httpOk('POST', `${server.url}/api`, { api: 'mq', action, authToken, params });
    log(`explorer scale: seeding ${formatNumber(topics)} topics (half over 100 branches, half under one node)`);
    const half = Math.floor(topics / 2);
    for (let start = 0; start < half; start += SEED_PER_CALL) {
      const messages = [];
      for (let i = start; i < Math.min(half, start + SEED_PER_CALL); i++) {
        messages.push({ topic: `spread/b${String(i % 100).padStart(2, '0')}/t${String(i).padStart(6, '0')}`, payload: { value: i } });
        messages.push({ topic: `flat/t${String(i).padStart(6, '0')}`, payload: { value: i } });
      }
      await api('publishMessagesToMq', { messages });
    }
    log(`explorer scale: ${formatNumber(sessions)} MQTT sessions with a subscription each`);
    for (let start = 0; start < sessions; start += CONNECT_CONCURRENCY) {
      const batch = [];
      for (let i = start; i < Math.min(sessions, start + CONNECT_CONCURRENCY); i++) {
        batch.push((async () => {
          const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { username: 'admin', password: 'ADMIN', clientId: `scale-${String(i).padStart(5, '0')}`, clean: false, reconnectPeriod: 0 });
          await client.subscribeAsync(`spread/b${String(i % 100).padStart(2, '0')}/#`, { qos: 1 });
          await client.endAsync();
        })());
      }
      await Promise.all(batch);
    }
    const timings: Array<[string, number, number]> = [];
    const time = async (label: string, action: string, params: Record<string, unknown>, check: (result: any) => boolean): Promise<void> => {
      const runs: number[] = [];
      for (let call = 0; call < CALLS; call++) {
        const start = performance.now();
        const answer = await api(action, params);
        runs.push(performance.now() - start);
        if (!check(answer.result ?? answer)) throw new Error(`explorer scale: ${label}: unexpected answer ${JSON.stringify(answer).slice(0, 300)}`);
      }
      const first = runs[0];
      runs.sort((a, b) => a - b);
      timings.push([label, first, runs[Math.floor(runs.length / 2)]]);
    };
    const level = topics - half;
    await time('browseTopics: the root', 'browseTopics', {}, (r) => r.total === 2 || r.total === 3);
    await time('browseTopics: spread (100 branches)', 'browseTopics', { prefix: 'spread' }, (r) => r.total === 100);
    await time(`browseTopics: flat, first 500 of ${formatNumber(level)} topics (with previews)`, 'browseTopics', { prefix: 'flat' }, (r) => r.nodes.length === 500 && r.nodes[0].preview !== undefined);
    await time('browseTopics: flat, a page in the middle', 'browseTopics', { prefix: 'flat', offset: Math.floor(level / 2) }, (r) => r.nodes.length === 500);
    await time('browseTopics: root, filter matching 1 %', 'browseTopics', { filter: 't0000' }, (r) => r.total >= 1);
    await time('listMqSubscriptions: first page of 100', 'listMqSubscriptions', { limit: 100 }, (r) => r.subscriptions.length === 100);
    await time('listMqSubscriptions: the last page', 'listMqSubscriptions', { limit: 100, offset: sessions - 100 }, (r) => r.subscriptions.length >= 100);
    await time('listMqSubscriptions: search', 'listMqSubscriptions', { limit: 100, filter: 'b42/' }, (r) => r.total === Math.ceil(sessions / 100));
    return { topics, sessions, timings };
  } finally {
    await server.stop();
    removeTempDir(dataDir);
  }
}

export function printExplorerScale(result: ScaleResult): void {
  process.stdout.write(`\nexplorer at scale (${formatNumber(result.topics)} topics, ${formatNumber(result.sessions)} MQTT sessions; median of ${CALLS} calls over HTTP)\n`);
  process.stdout.write(`${table(['answer', 'first call', 'median'], result.timings.map(([label, first, ms]) => [label, `${first.toFixed(1)} ms`, `${ms.toFixed(1)} ms`]))}\n`);
}
