/**
 * Durability of the broker as a real process (`node dist/main.js`): a QoS 1 stream from an `mqtt`
 * client, SIGKILL in the middle, a restart on the same data folder. Every message that got a
 * PUBACK is in the topic's integration table (read over REST) exactly once and in publish order; a
 * persistent subscriber that acknowledged nothing gets its in-flight messages again (DUP, same
 * packet id) and then the rest; a retained message survives.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import type { Packet } from 'mqtt-packet';
import { call, tempDataDir } from '../helpers/server';
import { spawnEngine, type EngineProcess } from '../helpers/engine-process';
import { RawClient, connectPacket } from './mqtt-helpers';
import { integrationTableName } from './session-helpers';

const TOPIC = 'Durable/Stream-1';
const RETAINED_TOPIC = 'durable/retained';
const SUBSCRIBER = 'durable-subscriber';
const KILL_AFTER = 600;
const WINDOW = 32;

interface Running {
  proc: EngineProcess;
  http: string;
  mqttPort: number;
}

/** Starts the server process and resolves once both its HTTP and MQTT listening lines are out. */
async function startProcess(dataDir: string): Promise<Running> {
  const proc = spawnEngine({
    ENGINE_DATA_DIR: dataDir,
    ENGINE_PLUGINS: JSON.stringify(['storage-lmdb', 'data', 'http', 'rest', 'messaging', 'mqtt']),
    ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
    ENGINE_MQTT_PORT: '0', ENGINE_MQTTS_PORT: 'off', ENGINE_MQTT_WS_PORT: 'off', ENGINE_MQTT_WSS_PORT: 'off',
  });
  const lines = await new Promise<{ http: string; mqtt: string }>((resolve, reject) => {
    const check = (): void => {
      const listening = proc.logs().filter((line) => line.msg === 'listening');
      const http = listening.find((line) => typeof line.http === 'string')?.http as string | undefined;
      const mqttUrl = listening.find((line) => line.plugin === 'mqtt')?.mqtt as string | undefined;
      if (http && mqttUrl) {
        proc.child.stdout!.off('data', check);
        resolve({ http, mqtt: mqttUrl });
      }
    };
    proc.child.stdout!.on('data', check);
    void proc.exit.then((code) => reject(new Error(`the server exited (${code}) before listening: ${proc.output()}`)));
    check();
  });
  return { proc, http: lines.http, mqttPort: Number(new URL(lines.mqtt).port) };
}

/** A stored JSON payload (REST renders json variants as their value) as the number published. */
function publishedNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(JSON.parse(value));
  if (value && typeof value === 'object' && 'value' in value) return publishedNumber((value as { value: unknown }).value);
  throw new Error(`unexpected stored payload ${JSON.stringify(value)}`);
}

async function storedNumbers(http: string): Promise<Array<{ id: number; n: number }>> {
  const table = integrationTableName(TOPIC);
  const listed = await call('GET', `${http}/engine/api/v1/table/main`);
  assert.equal(listed.status, 200, listed.text);
  assert.ok(listed.json._tables.includes(table), `${table} in ${listed.text}`);
  const found = await call('POST', `${http}/engine/api/v1/query/main/${table}/create_ts_idx?top=1000000`, {
    body: { find: { create_ts: { operator: '>=', value: '2000-01-01T00:00:00.000' } } },
  });
  assert.equal(found.status, 200, found.text);
  return (found.json._records as Array<{ _id: number; source_payload: unknown }>)
    .map((record) => ({ id: record._id, n: publishedNumber(record.source_payload) }))
    .sort((a, b) => a.id - b.id);
}

describe('mqtt 13: durability across SIGKILL (server process)', function () {
  this.timeout(120_000);
  let running: Running | undefined;
  let acknowledged: number[] = [];
  let stored: Array<{ id: number; n: number }> = [];
  let inFlight: any[] = [];
  let resent: any[] = [];
  let sessionPresent: boolean | undefined;
  let retained: any;

  // One run, checked by the tests below: a stream killed with SIGKILL, a restart, the readers.
  before(async () => {
    const dataDir = tempDataDir('mqtt-durability');
    running = await startProcess(dataDir);
    // a persistent subscriber that acknowledges nothing: the broker keeps its messages in flight
    const subscriber = await RawClient.open(running.mqttPort);
    subscriber.send(connectPacket({ clientId: SUBSCRIBER, clean: false }));
    assert.equal((await subscriber.next('connack')).returnCode, 0);
    subscriber.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: TOPIC, qos: 1 }] } as Packet);
    assert.deepEqual((await subscriber.next('suback')).granted, [1]);

    const publisher = mqtt.connect(`mqtt://127.0.0.1:${running.mqttPort}`, {
      protocolVersion: 4, clientId: 'durable-publisher', username: 'admin', password: 'ADMIN', reconnectPeriod: 0, clean: true,
    });
    publisher.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => { publisher.once('connect', () => resolve()); publisher.once('close', () => reject(new Error('publisher not connected'))); });
    await publisher.publishAsync(RETAINED_TOPIC, 'survives', { qos: 1, retain: true });

    // the stream: WINDOW publishes in flight; SIGKILL as the subscriber receives its KILL_AFTER-th
    // message (so some deliveries are as fresh as can be when the process dies)
    const proc = running.proc;
    const kill = (): void => {
      if (subscriber.packets.filter((packet) => packet.cmd === 'publish').length < KILL_AFTER) return;
      subscriber.socket.off('data', kill);
      proc.child.kill('SIGKILL');
    };
    subscriber.socket.on('data', kill); // after the RawClient's own listener: its packets are parsed
    let next = 0;
    const publishOne = (): void => {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null || !publisher.connected) return;
      const n = next++;
      publisher.publish(TOPIC, String(n), { qos: 1 }, (error) => {
        if (!error) acknowledged.push(n);
        publishOne();
      });
    };
    for (let i = 0; i < WINDOW; i++) publishOne();
    await proc.exit;
    publisher.end(true);
    await subscriber.closed;
    inFlight = subscriber.packets.filter((packet: any) => packet.cmd === 'publish');

    running = await startProcess(dataDir);
    stored = await storedNumbers(running.http);

    // the subscriber comes back and acknowledges everything it gets, up to the last stored message
    const back = await RawClient.open(running.mqttPort);
    back.send(connectPacket({ clientId: SUBSCRIBER, clean: false }));
    const connack = await back.next('connack');
    assert.equal(connack.returnCode, 0);
    sessionPresent = connack.sessionPresent;
    const last = stored[stored.length - 1]?.n;
    for (;;) {
      const publish = await back.next('publish');
      if (!publish) break;
      back.send({ cmd: 'puback', messageId: publish.messageId } as Packet);
      resent.push(publish);
      if (Number(publish.payload.toString()) === last) break;
    }
    back.destroy();

    const late = await RawClient.open(running.mqttPort);
    late.send(connectPacket({ clientId: 'durable-late', clean: true }));
    await late.next('connack');
    late.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: RETAINED_TOPIC, qos: 1 }] } as Packet);
    retained = await late.next('publish');
    late.destroy();
  });

  after(async () => {
    await running?.proc.stop('SIGTERM');
  });

  it('every PUBACKed QoS 1 message is in the integration table after SIGKILL and restart, exactly once, in publish order', () => {
    assert.ok(acknowledged.length > KILL_AFTER / 2, `only ${acknowledged.length} acknowledged`);
    const storedSet = new Set(stored.map((row) => row.n));
    const lost = acknowledged.filter((n) => !storedSet.has(n));
    assert.deepEqual(lost, [], `${lost.length} acknowledged messages lost`);
    const numbers = stored.map((row) => row.n);
    assert.equal(new Set(numbers).size, numbers.length, 'no message stored twice');
    assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), 'stored in publish order');
  });

  it('a persistent subscriber that acknowledged nothing gets every stored message after the restart, once, in order', () => {
    assert.ok(inFlight.length > 0, 'the subscriber had messages in flight before the kill');
    assert.equal(sessionPresent, true, 'its session survived SIGKILL');
    assert.deepEqual(resent.map((publish) => Number(publish.payload.toString())), stored.map((row) => row.n));
  });

  it('the messages in flight at the kill are resent with DUP=1 and their packet ids [MQTT-4.4.0-1] [MQTT-3.3.1-1]', () => {
    const mismatched = inFlight.map((sent, index) => ({ sent, again: resent[index], index }))
      .filter(({ sent, again }) => !again || again.dup !== true || again.messageId !== sent.messageId || again.payload.toString() !== sent.payload.toString())
      .map(({ sent, again, index }) => `#${index} sent id ${sent.messageId} "${sent.payload}", again ${again ? `id ${again.messageId} dup ${again.dup} "${again.payload}"` : 'never'}`);
    assert.deepEqual(mismatched, [], `${mismatched.length} of ${inFlight.length} in-flight messages not resent as such`);
  });

  it('a retained message survives SIGKILL', () => {
    assert.ok(retained, 'a retained message after the restart');
    assert.equal(retained.payload.toString(), 'survives');
    assert.equal(retained.retain, true);
  });
});
