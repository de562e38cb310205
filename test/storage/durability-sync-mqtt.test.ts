/**
 * No PUBACK before its message is synced, checked where it can fail and under the load the
 * pipelined commits are for: the real server runs under `strace -f -xx`, 16 QoS 1 publishers each
 * keep 100 PUBLISH un-acknowledged, and every PUBACK must come after a sync of the data.mdb write
 * that first held its message (test/helpers/puback-trace.ts has the rules; each payload names its
 * packet id, each publisher has its own range of ids).
 *
 * A server that acknowledges before it syncs must fail the check: the same run with the test-only
 * `unsafe_no_sync` storage option does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { checkPubackTrace, markerPayload, type PubackReport } from '../helpers/puback-trace';

const MAIN = join(__dirname, '..', '..', 'main.js');
const TRACED_CALLS = 'openat,close,write,writev,pwrite64,pwritev,pwritev2,fdatasync,fsync,msync,sendto,sendmsg';
const PUBLISHERS = 16;
const WINDOW = 100;
/** Messages each publisher sends; its packet ids are publisher * 1000 + 1 ... + MESSAGES (unique in the run). */
const MESSAGES = 250;
const TOPIC = 'durable/traced';

interface TracedBroker {
  port: number;
  /** Stops the server (SIGTERM) and returns the trace. */
  stop(): Promise<string>;
}

/** `node dist/main.js` (storage, messaging, mqtt only) under strace, on a fresh data folder and a free port. */
function startTracedBroker(dir: string, options: { unsafeNoSync: boolean }): Promise<TracedBroker> {
  const traceFile = join(dir, 'trace.txt');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ENGINE_DATA_DIR: join(dir, 'data'),
    ENGINE_PLUGINS: JSON.stringify(['storage-lmdb', 'messaging', 'mqtt']),
    ENGINE_MQTT_PORT: '0', ENGINE_MQTTS_PORT: 'off', ENGINE_MQTT_WS_PORT: 'off', ENGINE_MQTT_WSS_PORT: 'off',
    ENGINE_LOG_LEVEL: 'info',
    ...(options.unsafeNoSync ? { NODE_ENV: 'test', ENGINE_PLUGIN_OPTIONS: '{"storage-lmdb":{"unsafe_no_sync":true}}' } : {}),
  };
  // -xx: every byte in hex (payload markers and PUBACK bytes are read back); -s large enough for a page.
  const strace = spawn('strace', ['-f', '-qq', '-xx', '-s', '65536', '-e', `trace=${TRACED_CALLS}`, '-o', traceFile, process.execPath, MAIN], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => strace.on('exit', (code) => resolve(code)));
  let output = '';
  return new Promise((resolve, reject) => {
    strace.on('error', (error) => reject(new Error(`cannot run strace (on Debian: apt-get install strace): ${error.message}`)));
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
    strace.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    strace.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((text) => text.includes('"msg":"listening"') && text.includes('"mqtt"'));
      if (!line) return;
      const { mqtt, pid } = JSON.parse(line) as { mqtt: string; pid: number };
      resolve({
        port: Number(new URL(mqtt).port),
        async stop() {
          process.kill(pid, 'SIGTERM');
          await exited;
          return readFileSync(traceFile, 'utf8');
        },
      });
    });
  });
}

/** One publisher over a raw socket: WINDOW QoS 1 PUBLISH in flight, MESSAGES in all; resolves with the ids acknowledged. */
function publishPipelined(port: number, publisher: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const acknowledged: number[] = [];
    const parser = mqttPacket.parser({ protocolVersion: 4 });
    let sent = 0;
    const socket = netConnect({ port, host: '127.0.0.1' });
    const publishNext = (): void => {
      if (sent === MESSAGES) return;
      const messageId = publisher * 1000 + ++sent;
      socket.write(mqttPacket.generate({ cmd: 'publish', topic: TOPIC, payload: markerPayload(messageId), qos: 1, messageId, dup: false, retain: false } as Packet));
    };
    parser.on('packet', (packet: Packet) => {
      if (packet.cmd === 'connack') {
        if (packet.returnCode !== 0) reject(new Error(`publisher ${publisher} refused: ${packet.returnCode}`));
        for (let i = 0; i < WINDOW; i++) publishNext();
      } else if (packet.cmd === 'puback') {
        acknowledged.push(packet.messageId!);
        if (acknowledged.length === MESSAGES) {
          socket.end();
          resolve(acknowledged);
        } else publishNext();
      }
    });
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`publisher ${publisher} closed after ${acknowledged.length} PUBACKs`)));
    socket.write(mqttPacket.generate({
      cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: `traced-${publisher}`, keepalive: 0,
      username: 'admin', password: Buffer.from('ADMIN'),
    } as Packet));
  });
}

async function tracedRun(options: { unsafeNoSync: boolean }): Promise<{ acknowledged: number; report: PubackReport }> {
  const dir = mkdtempSync(join(tmpdir(), 'engine-sync-mqtt-'));
  try {
    const broker = await startTracedBroker(dir, options);
    const published = await Promise.all(Array.from({ length: PUBLISHERS }, (_, p) => publishPipelined(broker.port, p + 1)))
      .then((ids) => ({ ids }), (error: unknown) => ({ error }));
    const trace = await broker.stop();
    if ('error' in published) throw published.error;
    const report = checkPubackTrace(trace);
    assert.ok(report.dataFiles > 0, 'the trace shows LMDB opening data.mdb');
    const acknowledged = published.ids.flat().length;
    assert.equal(report.pubacks, acknowledged, 'one traced PUBACK per PUBACK received');
    return { acknowledged, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('durability: no PUBACK before its message is synced, 16 pipelined QoS 1 publishers (strace)', function () {
  this.timeout(180_000);

  it('writes each PUBACK after a sync of the data.mdb write holding its message', async function () {
    const { acknowledged, report } = await tracedRun({ unsafeNoSync: false });
    assert.equal(acknowledged, PUBLISHERS * MESSAGES);
    assert.equal(report.written, PUBLISHERS * MESSAGES, 'every message seen written to data.mdb');
    assert.deepEqual(report.early.slice(0, 5), [], `${report.early.length} PUBACKs before their message was synced`);
  });

  it('catches a server that acknowledges before syncing (unsafe_no_sync)', async function () {
    const { report } = await tracedRun({ unsafeNoSync: true });
    assert.ok(report.early.length > 0, 'the check sees PUBACKs of unsynced messages');
  });
});
