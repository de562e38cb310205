/**
 * Health checks and SIGTERM drain (docs/operations.md, "Health checks and shutdown"), against the
 * real program (`node dist/main.js`, test/helpers/engine-process.ts) under load: MQTT 5 and 3.1.1
 * clients publishing at QoS 1 and REST inserts while SIGTERM arrives. Every acknowledged write is
 * there after a restart, MQTT 5 clients hear DISCONNECT 0x8B, the process exits 0, and a request
 * that never finishes does not hold the exit.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { call, startServer, tempDataDir } from '../helpers/server';
import { spawnEngine, type EngineProcess } from '../helpers/engine-process';
import { definePlugin } from '../../kernel/plugin';
import mqttPacket from 'mqtt-packet';
import { connectPacket, RawClient } from '../mqtt/mqtt-helpers';

const PLUGINS = '["storage-lmdb","data","messaging","http","rest","actions","mqtt","metrics"]';

/** The MQTT listener's URL, from the server's own `listening` log line of the mqtt plugin. */
function mqttUrl(proc: EngineProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const find = (): boolean => {
      const line = proc.logs().find((entry) => entry.msg === 'listening' && entry.plugin === 'mqtt');
      if (line) resolve(line.mqtt as string);
      return line !== undefined;
    };
    if (find()) return;
    const onData = (): void => { if (find()) proc.child.stdout!.off('data', onData); };
    proc.child.stdout!.on('data', onData);
    void proc.exit.then(() => reject(new Error(`the engine exited first: ${proc.output()}`)));
  });
}

interface Publisher {
  client: MqttClient;
  topic: string;
  acknowledged: string[];
  /** The DISCONNECT the server sent, if any. */
  disconnect?: { reasonCode?: number };
  closed: Promise<void>;
}

/** A client that keeps `window` QoS 1 publishes in flight until its connection ends. */
async function startPublisher(url: string, clientId: string, protocolVersion: 4 | 5, window = 16): Promise<Publisher> {
  const client = mqtt.connect(url, { clientId, username: 'admin', password: 'ADMIN', protocolVersion, reconnectPeriod: 0, clean: true });
  await new Promise<void>((resolve, reject) => { client.once('connect', () => resolve()); client.once('error', reject); });
  const publisher: Publisher = { client, topic: `load/${clientId}`, acknowledged: [], closed: new Promise((resolve) => client.once('close', () => resolve())) };
  client.on('disconnect', (packet) => { publisher.disconnect = { reasonCode: packet.reasonCode }; });
  client.on('error', () => undefined);
  let next = 0;
  let open = true;
  void publisher.closed.then(() => { open = false; });
  const publishOne = (): void => {
    if (!open) return;
    const payload = `${clientId}-${next++}`;
    client.publish(publisher.topic, payload, { qos: 1 }, (error) => {
      if (error) return;
      publisher.acknowledged.push(payload);
      publishOne();
    });
  };
  for (let i = 0; i < window; i++) publishOne();
  return publisher;
}

/** REST inserts, `concurrency` at a time, until one fails; the ids acknowledged with 200. */
function insertLoop(base: string, concurrency: number): { acknowledged: number[]; done: Promise<void> } {
  const acknowledged: number[] = [];
  let open = true;
  const worker = async (): Promise<void> => {
    let n = 0;
    while (open) {
      try {
        const reply = await call('POST', `${base}/record/main/t`, { body: { n: n++ } });
        if (reply.status !== 200) { open = false; return; }
        acknowledged.push(...(reply.json._ids as number[]));
      } catch {
        open = false;
      }
    }
  };
  return { acknowledged, done: Promise.all(Array.from({ length: concurrency }, worker)).then(() => undefined) };
}

async function session(http: string): Promise<string> {
  const reply = await call('POST', `${http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
  assert.equal(reply.json.errorCode, 0, reply.text);
  return reply.json.authToken as string;
}

async function storedPayloads(http: string, token: string, topic: string): Promise<Set<string>> {
  const reply = await call('POST', `${http}/api`, { auth: null, body: { api: 'mq', action: 'getMessagesFromMqTopic', authToken: token, params: { topic, startFrom: 'head', maxMessages: 100000, binaryFormat: 'hex' } } });
  assert.equal(reply.json.errorCode, 0, reply.text);
  // MQTT payloads are bytes: asked for in hex, read back as text.
  return new Set((reply.json.result.messages as Array<{ payload: string }>).map((message) => Buffer.from(message.payload, 'hex').toString()));
}

describe('ops 02: health checks', function () {
  it('GET /health/live and /health/ready answer 200 without credentials, with nothing but the verdict', async () => {
    const server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'http', 'mqtt'], listening_https_port: null });
    try {
      for (const [path, status] of [['/health/live', 'live'], ['/health/ready', 'ready']]) {
        const reply = await call('GET', `${server.http}${path}`, { auth: null });
        assert.equal(reply.status, 200, reply.text);
        assert.deepEqual(reply.json, { status });
        assert.equal(reply.headers['cache-control'], 'no-store');
      }
    } finally {
      await server.close();
    }
  });

  it('GET /health/ready answers 503 {"status":"not ready"} while a plugin\'s readiness check fails, naming nothing', async () => {
    let caughtUp = false;
    const follower = definePlugin({ name: 'follower', register(engine) { engine.readiness.add('caught up', () => caughtUp); } });
    const server = await startServer({ plugins: ['storage-lmdb', 'http'], listening_https_port: null }, { extraPlugins: [follower] });
    try {
      const notReady = await call('GET', `${server.http}/health/ready`, { auth: null });
      assert.equal(notReady.status, 503);
      assert.deepEqual(notReady.json, { status: 'not ready' });
      assert.equal((await call('GET', `${server.http}/health/live`, { auth: null })).status, 200);
      caughtUp = true;
      assert.equal((await call('GET', `${server.http}/health/ready`, { auth: null })).status, 200);
    } finally {
      await server.close();
    }
  });

  it('is not ready from the moment shutdown begins', async () => {
    const server = await startServer({ plugins: ['storage-lmdb', 'http'], listening_https_port: null });
    assert.equal(server.engine.readiness.ready, true);
    const closing = server.close();
    assert.equal(server.engine.readiness.ready, false);
    await closing;
  });
});

describe('ops 02: the MQTT drain', function () {
  it('acknowledges the publishes it read before the DISCONNECT 0x8B, and stores them', async () => {
    const server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'http', 'mqtt', 'metrics'], listening_https_port: null });
    const core = server.engine.need('messaging');
    const raw = await RawClient.open(server.engine.need('mqtt').ports.mqtt!, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'drained' }), 5);
    await raw.next('connack');
    const count = 200;
    const burst = Array.from({ length: count }, (_, i) => mqttPacket.generate({ cmd: 'publish', topic: 'drain/burst', payload: Buffer.from(`m${i}`), qos: 1, messageId: i + 1, retain: false, dup: false }, { protocolVersion: 5 }));
    const received = core.stats.messagesReceived;
    raw.write(Buffer.concat(burst));
    // Shutdown begins as soon as the server has read the burst (its commit may still be running).
    await new Promise<void>((resolve) => {
      const check = (): void => (core.stats.messagesReceived - received >= count ? resolve() : void setImmediate(check));
      check();
    });
    const closed = server.close({ keepData: true });
    await raw.closed;
    await closed;
    const order = raw.received.filter((cmd) => cmd === 'puback' || cmd === 'disconnect');
    assert.deepEqual(order, [...Array<string>(count).fill('puback'), 'disconnect'], 'every PUBLISH read is acknowledged, then DISCONNECT');
    const disconnect = raw.packets.find((packet) => packet.cmd === 'disconnect') as { reasonCode?: number } | undefined;
    assert.equal(disconnect?.reasonCode, 0x8b);
    const again = await startServer({ plugins: ['storage-lmdb', 'messaging'], data_dir: server.dataDir });
    try {
      assert.equal(again.engine.need('storage').messageLog.countTopic('drain/burst'), count);
    } finally {
      await again.close();
    }
  });
});

describe('ops 02: SIGTERM drains under load', function () {
  this.timeout(120_000);

  it('answers what it took, commits it, sends MQTT 5 clients DISCONNECT 0x8B and exits 0; every acknowledged write survives a restart', async () => {
    const dataDir = tempDataDir();
    const env = { ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_PLUGINS: PLUGINS };
    const first = spawnEngine(env);
    const { http } = await first.listening;
    const url = await mqttUrl(first);
    const base = `${http}/engine/api/v1`;
    assert.equal((await call('POST', `${base}/table/main/t`, { body: { fields: [{ name: 'n', type: 'integer' }] } })).status, 200);
    assert.equal((await call('GET', `${http}/health/ready`, { auth: null })).status, 200);

    const publishers = await Promise.all([
      startPublisher(url, 'v5-a', 5), startPublisher(url, 'v5-b', 5), startPublisher(url, 'v5-c', 5), startPublisher(url, 'v311', 4),
    ]);
    const inserts = insertLoop(base, 8);
    // Under load: SIGTERM once every publisher and the inserts have had writes acknowledged.
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (publishers.every((p) => p.acknowledged.length >= 50) && inserts.acknowledged.length >= 20) resolve();
        else setImmediate(check);
      };
      check();
    });
    first.child.kill('SIGTERM');
    const code = await first.exit;
    await Promise.all(publishers.map((p) => p.closed));
    await inserts.done;
    assert.equal(code, 0, first.output().slice(-2000));
    assert.ok(first.logs().some((line) => line.msg === 'stopped'), 'the drain finished (no timeout)');
    for (const publisher of publishers.filter((p) => p.client.options.protocolVersion === 5)) {
      assert.equal(publisher.disconnect?.reasonCode, 0x8b, `${publisher.topic} heard DISCONNECT 0x8B`);
    }

    const second = spawnEngine(env);
    try {
      const again = (await second.listening).http!;
      const token = await session(again);
      for (const publisher of publishers) {
        const stored = await storedPayloads(again, token, publisher.topic);
        const lost = publisher.acknowledged.filter((payload) => !stored.has(payload));
        assert.deepEqual(lost, [], `${publisher.topic}: acknowledged (PUBACK) and not stored`);
      }
      for (const id of inserts.acknowledged) {
        assert.equal((await call('GET', `${again}/engine/api/v1/record/main/t/${id}`)).status, 200, `acknowledged record ${id} is missing`);
      }
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  it('a drain that never ends is cut at shutdown_timeout_seconds: the process logs it and exits 1', async () => {
    // A plugin (loaded by path, as users load theirs) whose drain never finishes.
    const pluginFile = join(tempDataDir('stuck-plugin'), 'stuck.js');
    writeFileSync(pluginFile, "module.exports = { name: 'stuck', register(engine) { engine.onDrain(() => new Promise(() => {})); } };\n");
    const proc = spawnEngine({
      ENGINE_DATA_DIR: tempDataDir(), ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
      ENGINE_PLUGINS: JSON.stringify(['storage-lmdb', 'http', pluginFile]), ENGINE_SHUTDOWN_TIMEOUT_SECONDS: '1',
    });
    await proc.listening;
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exit, 1, proc.output().slice(-2000));
    assert.ok(proc.logs().some((line) => line.msg === 'shutdown did not finish in time: exiting' && line.timeoutSeconds === 1));
    assert.ok(!proc.logs().some((line) => line.msg === 'stopped'));
  });

  it('a request that never finishes does not hold the exit: in-flight HTTP gets a bounded grace', async () => {
    const proc = spawnEngine({ ENGINE_DATA_DIR: tempDataDir(), ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_PLUGINS: PLUGINS });
    const { http } = await proc.listening;
    const { hostname, port } = new URL(http!);
    // A POST whose body never comes: the request stays in flight.
    const socket = netConnect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('POST /engine/api/v1/record/main/t HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\nauthorization: Basic YWRtaW46QURNSU4=\r\n\r\n{"n":');
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exit, 0, proc.output().slice(-2000));
    await socketClosed;
  });
});
