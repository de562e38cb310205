/**
 * Durability of the pipelined QoS 1 path (docs/storage.md, "Writes and durability"): 16 `mqtt`
 * clients each keep 100 QoS 1 PUBLISH un-acknowledged, so commits follow one another while the
 * previous ones are being synced; the server process is killed with SIGKILL in the middle of the
 * stream and restarted on the same data folder. Every message that got a PUBACK is in the topic's
 * integration table, none twice, each publisher's in the order it published them.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { tempDataDir } from '../helpers/server';
import { startProcess, storedNumbers, type Running } from './durability-helpers';

const TOPIC = 'durable/sixteen';
const PUBLISHERS = 16;
const WINDOW = 100;
/** Acknowledgements (all publishers together) after which the server is killed. */
const KILL_AFTER = 4000;
/** A message's payload: its publisher and its number in that publisher's stream, as one JSON number. */
const PER_PUBLISHER = 1_000_000;

describe('mqtt 13b: 16 pipelined QoS 1 publishers across SIGKILL (server process)', function () {
  this.timeout(180_000);
  let running: Running | undefined;
  const acknowledged: number[] = [];
  let stored: number[] = [];

  before(async () => {
    const dataDir = tempDataDir('mqtt-durability-16');
    running = await startProcess(dataDir);
    const proc = running.proc;
    const killed = (): boolean => proc.child.exitCode !== null || proc.child.signalCode !== null;
    const clients = await Promise.all(Array.from({ length: PUBLISHERS }, (_, p) => {
      const client = mqtt.connect(`mqtt://127.0.0.1:${running!.mqttPort}`, {
        protocolVersion: 4, clientId: `durable-publisher-${p}`, username: 'admin', password: 'ADMIN', reconnectPeriod: 0, clean: true,
      });
      client.on('error', () => undefined);
      return new Promise<mqtt.MqttClient>((resolve, reject) => {
        client.once('connect', () => resolve(client));
        client.once('close', () => reject(new Error(`publisher ${p} not connected`)));
      });
    }));
    // Each publisher keeps WINDOW messages un-acknowledged; SIGKILL once KILL_AFTER are acknowledged.
    clients.forEach((client, p) => {
      let next = 0;
      const publishOne = (): void => {
        if (killed() || !client.connected) return;
        const payload = p * PER_PUBLISHER + next++;
        client.publish(TOPIC, String(payload), { qos: 1 }, (error) => {
          if (error) return;
          acknowledged.push(payload);
          if (acknowledged.length === KILL_AFTER) proc.child.kill('SIGKILL');
          publishOne();
        });
      };
      for (let i = 0; i < WINDOW; i++) publishOne();
    });
    await proc.exit;
    for (const client of clients) client.end(true);

    running = await startProcess(dataDir);
    stored = (await storedNumbers(running.http, TOPIC)).map((row) => row.n);
  });

  after(async () => {
    await running?.proc.stop('SIGTERM');
  });

  it('every PUBACKed message of 16 publishers with 100 in flight each is stored after SIGKILL and restart', () => {
    assert.ok(acknowledged.length >= KILL_AFTER, `only ${acknowledged.length} acknowledged`);
    const publishers = new Set(acknowledged.map((n) => Math.floor(n / PER_PUBLISHER)));
    assert.equal(publishers.size, PUBLISHERS, 'every publisher had messages acknowledged');
    const storedSet = new Set(stored);
    const lost = acknowledged.filter((n) => !storedSet.has(n));
    assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged messages lost`);
  });

  it('stores no message twice, and each publisher\'s messages in the order it published them', () => {
    assert.equal(new Set(stored).size, stored.length, 'no message stored twice');
    const last = new Map<number, number>();
    for (const n of stored) {
      const publisher = Math.floor(n / PER_PUBLISHER);
      const previous = last.get(publisher) ?? -1;
      assert.ok(n > previous, `publisher ${publisher}: ${n} stored after ${previous}`);
      last.set(publisher, n);
    }
  });
});
