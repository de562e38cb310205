/**
 * `npm run bench -- mq [--quick]`: the mq actions against MQTT on one engine, both measured in
 * this run. One engine child (plugins storage-lmdb, data, messaging, http, actions, mqtt; HTTP and
 * MQTT on free ports of 127.0.0.1; a fresh data folder; admin/ADMIN on both faces).
 *
 * Publish (BENCH_SECONDS per measurement, BENCH_ROUNDS alternating rounds, the median reported):
 *   actions  publishMessagesToMq of 100 messages a call from 4 HTTP connections (autocannon, in
 *            this process); a message counts when its call answered errorCode 0
 *   MQTT     QoS 1 PUBLISH from 4 connections, each keeping 100 un-acked (the load generator
 *            named by BENCH_MQTT_TOOL, its own process); a message counts when PUBACKed
 *   Both keep 400 messages in flight, of the same 64-byte payload; the engine stores every
 *   message durably before it answers either.
 *
 * Read (a topic of BENCH_MQ_READ_MESSAGES messages, default 100,000, published by the actions):
 *   actions  getMessagesFromMqTopic pages of 1,000 (startFrom head, then the last id + 1), one
 *            page after another on one connection, until the topic is read
 *   MQTT     a persistent session (clean session false) subscribed at QoS 1 before the topic was
 *            written reconnects and receives the whole backlog from the log (bench/mq-catchup.ts)
 *   Both are one reader walking the stored log from its start; after one uncounted warm-up walk
 *   each, each round reads it once more (the MQTT side with a session of its own, as a catch-up
 *   consumes the backlog). The engine's and this process's CPU over each read are reported.
 */
import { join } from 'node:path';
import {
  benchRounds, benchSeconds, cpuSecondsOf, engineEnv, formatNumber, formatRatio, freePort, httpOk, intEnv, log, measure, median, removeTempDir,
  startChild, table, tempDir, type ChildServer, type LoadResult,
} from './load';
import { catchUp, prepareSession } from './mq-catchup';
import { checkGenerator, runGenerator } from './mqtt-load';

const PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'actions', 'mqtt'];
const MESSAGES_PER_CALL = 100;
const CONNECTIONS = 4;
const PAGE = 1_000;
const SEED_PER_CALL = 5_000;
const PAYLOAD_BYTES = 64;
const PAYLOAD = 'x'.repeat(PAYLOAD_BYTES); // the bytes mqtt-bench publishes ('x' × --payload)
const ACTIONS_TOPIC = 'bench/mq/actions';
const MQTT_TOPIC = 'bench/mq/mqtt';
const READ_TOPIC = 'bench/mq/read';
const WARMUP_SESSION = 'bench-mq-catchup-warmup';

interface Settings { quick: boolean; seconds: number; rounds: number; readMessages: number }

interface PublishFigures { messagesPerSecond: number; p50: number; p99: number; note?: string }
interface ReadFigures { messagesPerSecond: number; seconds: number; engineCpu?: number; readerCpu?: number }

export interface MqReport {
  settings: Settings;
  publish: { actions: PublishFigures; mqtt: PublishFigures };
  read: { actions: ReadFigures; mqtt: ReadFigures };
  topicCounts: Record<string, number>;
}

/**
 * Runs `read` and adds the CPU share of the engine and of this process (the reader) over it:
 * a reader near 100% would mean the bench, not the engine, set the pace.
 */
async function withCpu(pid: number, read: () => Promise<{ messagesPerSecond: number; seconds: number }>): Promise<ReadFigures> {
  const engineBefore = cpuSecondsOf(pid);
  const readerBefore = process.cpuUsage();
  const result = await read();
  const engineAfter = cpuSecondsOf(pid);
  const reader = process.cpuUsage(readerBefore);
  return {
    messagesPerSecond: result.messagesPerSecond, seconds: result.seconds,
    engineCpu: engineBefore === undefined || engineAfter === undefined ? undefined : (engineAfter - engineBefore) / result.seconds,
    readerCpu: (reader.user + reader.system) / 1e6 / result.seconds,
  };
}

async function action(url: string, api: string, name: string, params: Record<string, unknown>, authToken?: string): Promise<any> {
  const answer = await httpOk('POST', `${url}/api`, { api, action: name, params, ...(authToken ? { authToken } : {}) });
  if (answer?.errorCode !== 0) throw new Error(`${api}.${name} answered ${JSON.stringify(answer).slice(0, 500)}`);
  return answer.result;
}

const messages = (count: number): Array<Record<string, unknown>> =>
  Array.from({ length: count }, () => ({ payload: PAYLOAD, mqttPayloadType: 'utf8', qos: 1 }));

function startEngine(httpPort: number, mqttPort: number, dataDir: string): Promise<ChildServer> {
  return startChild({
    name: 'engine', script: join(__dirname, '..', 'main.js'), port: httpPort,
    env: { ...engineEnv(httpPort, dataDir), ENGINE_PLUGINS: JSON.stringify(PLUGINS), ENGINE_MQTT_PORT: String(mqttPort) },
  });
}

async function publishByActions(url: string, authToken: string, settings: Settings, warmup: boolean): Promise<LoadResult> {
  const body = JSON.stringify({ api: 'mq', action: 'publishMessagesToMq', authToken, params: { topic: ACTIONS_TOPIC, messages: messages(MESSAGES_PER_CALL) } });
  return measure({
    url, connections: CONNECTIONS, seconds: settings.seconds, method: 'POST', body, warmup, unitsPerRequest: MESSAGES_PER_CALL,
    setup: (request) => ({ ...request, path: '/api' }),
    check: (text) => text.includes('"errorCode":0'),
  });
}

async function publishByMqtt(mqttPort: number, pid: number, settings: Settings): Promise<PublishFigures> {
  const result = await runGenerator(mqttPort, [
    '--scenario', 'qos1', '--pubs', String(CONNECTIONS), '--window', String(MESSAGES_PER_CALL), '--payload', String(PAYLOAD_BYTES),
    '--duration', String(settings.seconds), '--warmup', '1', '--topic', MQTT_TOPIC, '--username', 'admin', '--password', 'ADMIN',
    '--pid', String(pid),
  ], (settings.seconds + 40) * 1000);
  if (result.error) throw new Error(`mqtt-bench qos1: ${result.error}`);
  if (!result.acked_rate) throw new Error(`mqtt-bench qos1: no PUBACK (${JSON.stringify(result).slice(0, 300)})`);
  return {
    messagesPerSecond: result.acked_rate, p50: result.latency?.p50_ms ?? NaN, p99: result.latency?.p99_ms ?? NaN,
    note: result.disconnects ? `${result.disconnects} disconnects` : undefined,
  };
}

/** Reads the whole read topic in pages and checks it got every message once, in id order. */
async function readByActions(url: string, authToken: string, expected: number): Promise<ReadFigures> {
  const started = process.hrtime.bigint();
  let startFrom: string | number = 'head';
  let count = 0;
  let lastId = -1;
  for (;;) {
    const result = await action(url, 'mq', 'getMessagesFromMqTopic', {
      topic: READ_TOPIC, startFrom, maxMessages: PAGE, includeMessageMetadata: true,
    }, authToken);
    const page: Array<{ id: number | string; payload: unknown }> = result.messages;
    if (page.length === 0) break;
    for (const message of page) {
      const id = Number(message.id);
      if (!(id > lastId) || message.payload !== PAYLOAD) throw new Error(`getMessagesFromMqTopic gave ${JSON.stringify(message).slice(0, 200)} after id ${lastId}`);
      lastId = id;
    }
    count += page.length;
    if (page.length < PAGE) break;
    startFrom = lastId + 1;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (count !== expected) throw new Error(`getMessagesFromMqTopic paging read ${count} messages, expected ${expected}`);
  return { messagesPerSecond: count / seconds, seconds };
}

export async function runMq(): Promise<MqReport> {
  checkGenerator();
  const quick = process.argv.includes('--quick');
  const settings: Settings = {
    quick,
    seconds: quick ? 2 : benchSeconds(),
    rounds: quick ? 1 : benchRounds(),
    readMessages: quick ? 20_000 : intEnv('BENCH_MQ_READ_MESSAGES', 100_000),
  };
  log(`mq: ${settings.rounds} rounds of ${settings.seconds} s publishing, then reading ${formatNumber(settings.readMessages)} messages${quick ? ' (quick)' : ''}`);
  const dataDir = tempDir('mq-engine');
  const [httpPort, mqttPort] = [await freePort(), await freePort()];
  const server = await startEngine(httpPort, mqttPort, dataDir);
  try {
    const session = await action(server.url, 'admin', 'createSession', { username: 'admin', password: 'ADMIN' });
    const authToken: string = session?.authToken;
    if (typeof authToken !== 'string' || !authToken) throw new Error(`createSession gave no authToken: ${JSON.stringify(session)}`);
    // One call by hand first: a wrong request shape shows here, not as a run of failures.
    const first = await action(server.url, 'mq', 'publishMessagesToMq', { topic: ACTIONS_TOPIC, messages: messages(MESSAGES_PER_CALL) }, authToken);
    if (first?.messageIds?.length !== MESSAGES_PER_CALL) throw new Error(`publishMessagesToMq answered ${JSON.stringify(first).slice(0, 300)}`);

    // The catch-up sessions subscribe before the read topic is written (a subscription never
    // receives messages older than itself).
    const sessionIds = Array.from({ length: settings.rounds }, (_, round) => `bench-mq-catchup-${round + 1}`);
    for (const clientId of [WARMUP_SESSION, ...sessionIds]) await prepareSession(mqttPort, clientId, READ_TOPIC);

    const pid = server.process.pid as number;
    const actionsRuns: LoadResult[] = [];
    const mqttRuns: PublishFigures[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      log(`publish, round ${round}/${settings.rounds}: publishMessagesToMq`);
      actionsRuns.push(await publishByActions(server.url, authToken, settings, round === 1));
      log(`publish, round ${round}/${settings.rounds}: MQTT QoS 1`);
      mqttRuns.push(await publishByMqtt(mqttPort, pid, settings));
    }
    log(`publish msg/s per round: actions ${actionsRuns.map((r) => formatNumber(r.unitsPerSecond)).join(', ')}; MQTT ${mqttRuns.map((r) => formatNumber(r.messagesPerSecond)).join(', ')}`);
    const actionsPublish = median(actionsRuns, (r) => r.unitsPerSecond);
    const mqttPublish = median(mqttRuns, (r) => r.messagesPerSecond);

    log(`seeding ${READ_TOPIC} with ${formatNumber(settings.readMessages)} messages`);
    for (let written = 0; written < settings.readMessages; written += SEED_PER_CALL) {
      await action(server.url, 'mq', 'publishMessagesToMq', { topic: READ_TOPIC, messages: messages(Math.min(SEED_PER_CALL, settings.readMessages - written)) }, authToken);
    }

    // A warm-up read each (not counted): the first walk of a path pays its JIT compilation.
    log('read warm-up: one getMessagesFromMqTopic walk, one MQTT catch-up');
    await readByActions(server.url, authToken, settings.readMessages);
    await catchUp(mqttPort, WARMUP_SESSION, settings.readMessages, 60_000);
    const actionsReads: ReadFigures[] = [];
    const mqttReads: ReadFigures[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      log(`read, round ${round}/${settings.rounds}: getMessagesFromMqTopic pages`);
      actionsReads.push(await withCpu(pid, () => readByActions(server.url, authToken, settings.readMessages)));
      log(`read, round ${round}/${settings.rounds}: MQTT persistent-session catch-up`);
      mqttReads.push(await withCpu(pid, () => catchUp(mqttPort, sessionIds[round - 1], settings.readMessages, 60_000)));
    }
    log(`read msg/s per round: actions ${actionsReads.map((r) => formatNumber(r.messagesPerSecond)).join(', ')}; MQTT ${mqttReads.map((r) => formatNumber(r.messagesPerSecond)).join(', ')}`);

    // What was counted is in the log.
    const described = await action(server.url, 'mq', 'describeTopics', { topics: [ACTIONS_TOPIC, MQTT_TOPIC, READ_TOPIC] }, authToken);
    const topicCounts: Record<string, number> = {};
    for (const topic of described.topics as Array<{ topic: string; messageCount: number }>) topicCounts[topic.topic] = topic.messageCount;
    if ((topicCounts[READ_TOPIC] ?? 0) !== settings.readMessages) throw new Error(`${READ_TOPIC} holds ${topicCounts[READ_TOPIC]} messages`);
    const countedActions = actionsRuns.reduce((sum, r) => sum + r.ok, 0) * MESSAGES_PER_CALL;
    if ((topicCounts[ACTIONS_TOPIC] ?? 0) < countedActions) throw new Error(`${ACTIONS_TOPIC} holds ${topicCounts[ACTIONS_TOPIC]} messages, fewer than the ${countedActions} counted`);

    return {
      settings,
      publish: {
        actions: { messagesPerSecond: actionsPublish.unitsPerSecond, p50: actionsPublish.latencyP50, p99: actionsPublish.latencyP99 },
        mqtt: mqttPublish,
      },
      read: {
        actions: median(actionsReads, (r) => r.messagesPerSecond),
        mqtt: median(mqttReads, (r) => r.messagesPerSecond),
      },
      topicCounts,
    };
  } finally {
    await server.stop();
    removeTempDir(dataDir);
  }
}

const ms = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 1)} ms` : '—');

const percent = (share?: number): string => (share === undefined ? '—' : `${Math.round(share * 100)}%`);
const readDetail = (figures: ReadFigures): string =>
  `${figures.seconds.toFixed(2)} s (engine CPU ${percent(figures.engineCpu)}, reader CPU ${percent(figures.readerCpu)})`;

export function printMq(report: MqReport): void {
  const { settings, publish, read } = report;
  process.stdout.write(
    `\nmq benchmark: one engine (plugins ${PLUGINS.join(', ')}), the mq actions over HTTP against MQTT 3.1.1 in the same run;\n` +
    `${PAYLOAD_BYTES}-byte payloads, every message stored durably before it is acknowledged; median of ${settings.rounds} alternating round(s)` +
    `${settings.quick ? ' (--quick)' : ''}.\n` +
    `Publish: ${settings.seconds} s each; publishMessagesToMq of ${MESSAGES_PER_CALL} messages a call from ${CONNECTIONS} connections, against\n` +
    `QoS 1 PUBLISH from ${CONNECTIONS} connections with ${MESSAGES_PER_CALL} un-acked each (mqtt-bench). Read: a topic of ${formatNumber(settings.readMessages)} messages,\n` +
    `getMessagesFromMqTopic pages of ${formatNumber(PAGE)} (startFrom = last id + 1), against a persistent session's QoS 1 catch-up.\n\n`,
  );
  process.stdout.write(`${table(['measurement', 'mq actions', 'MQTT', 'actions / MQTT'], [
    ['publish (msg/s)', formatNumber(publish.actions.messagesPerSecond), formatNumber(publish.mqtt.messagesPerSecond), formatRatio(publish.actions.messagesPerSecond / publish.mqtt.messagesPerSecond)],
    ['read a stored topic (msg/s)', formatNumber(read.actions.messagesPerSecond), formatNumber(read.mqtt.messagesPerSecond), formatRatio(read.actions.messagesPerSecond / read.mqtt.messagesPerSecond)],
  ])}\n\n`);
  process.stdout.write(
    `publish latency p50 / p99: publishMessagesToMq call (${MESSAGES_PER_CALL} messages) ${ms(publish.actions.p50)} / ${ms(publish.actions.p99)};` +
    ` MQTT PUBLISH → PUBACK ${ms(publish.mqtt.p50)} / ${ms(publish.mqtt.p99)}${publish.mqtt.note ? ` (${publish.mqtt.note})` : ''}\n` +
    `read of ${formatNumber(settings.readMessages)} messages: actions ${readDetail(read.actions)}; MQTT ${readDetail(read.mqtt)}\n` +
    `messages in the log per topic: ${Object.entries(report.topicCounts).map(([topic, count]) => `${topic} ${formatNumber(count)}`).join(', ')}\n\n`,
  );
}
