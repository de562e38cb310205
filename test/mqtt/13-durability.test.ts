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
import { tempDataDir } from '../helpers/server';
import { RawClient, connectPacket } from './mqtt-helpers';
import { startProcess, storedNumbers, type Running } from './durability-helpers';

const TOPIC = 'Durable/Stream-1';
const RETAINED_TOPIC = 'durable/retained';
const SUBSCRIBER = 'durable-subscriber';
const KILL_AFTER = 600;
const WINDOW = 32;

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
    stored = await storedNumbers(running.http, TOPIC);

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
