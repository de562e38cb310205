/**
 * A node dies (docs/cluster.md, "Sessions" and "Failures"): its lease in the KV bucket lapses, one
 * survivor adopts its sessions and sends their wills, once; a client resending a QoS 2 PUBLISH
 * to another node after its node died has it stored once; and with an engine node and its
 * nats-server both SIGKILLed during a QoS 1/2 stream, every acknowledged message is delivered.
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import type { Packet } from 'mqtt-packet';
import { connect } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';
import { RawClient, connectPacket } from '../mqtt/mqtt-helpers';

/** Messages a client receives, by topic, with waits for what is to come. */
class Received {
  readonly byTopic = new Map<string, string[]>();
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];

  constructor(client: MqttClient) {
    client.on('message', (topic, payload) => {
      const list = this.byTopic.get(topic) ?? [];
      list.push(payload.toString());
      this.byTopic.set(topic, list);
      this.waiters = this.waiters.filter((w) => {
        if (!w.done()) return true;
        w.resolve();
        return false;
      });
    });
  }

  of(topic: string): string[] {
    return this.byTopic.get(topic) ?? [];
  }

  private until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  /** Resolves once `count` messages of the topic have arrived. */
  atLeast(topic: string, count: number): Promise<void> {
    return this.until(() => this.of(topic).length >= count);
  }

  /** Resolves once this payload has arrived on the topic. */
  seen(topic: string, payload: string): Promise<void> {
    return this.until(() => this.of(topic).includes(payload));
  }
}

/**
 * Resolves once `to` has applied everything `from` wrote before now: a message published on
 * `from` after those writes reaches a subscriber on `to` only then.
 */
async function barrier(from: EngineNode, to: EngineNode, name: string): Promise<void> {
  const subscriber = await connect(to.mqtt, { clientId: `${name}-sub` });
  await subscriber.subscribeAsync(`barrier/${name}`, { qos: 1 });
  const seen = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
  const publisher = await connect(from.mqtt, { clientId: `${name}-pub` });
  await publisher.publishAsync(`barrier/${name}`, name, { qos: 1 });
  await seen;
  subscriber.end(true);
  publisher.end(true);
}

describe('cluster: a node dies', function () {
  this.timeout(240_000);
  // A short lease: a dead node's sessions are adopted about 6 s after it died.
  const cluster = clusterForSuite({ settings: { cluster_node_lease_ms: 6000 } });

  it('SIGKILL of an engine node: a survivor sends the wills of its clients (a clean session and a kept one) exactly once', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const watcher = await connect(node1.mqtt, { clientId: 'will-watch' });
    await watcher.subscribeAsync('wills/#', { qos: 1 });
    const received = new Received(watcher);
    const clean = await connect(node3.mqtt, { clientId: 'will-clean', clean: true, will: { topic: 'wills/clean', payload: Buffer.from('clean gone'), qos: 1, retain: false } });
    const kept = await connect(node3.mqtt, {
      clientId: 'will-kept', protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 600 },
      will: { topic: 'wills/kept', payload: Buffer.from('kept gone'), qos: 1, retain: false },
    });
    // Both sessions and their wills are applied on the survivors before node3 dies.
    await barrier(node3, node1, 'wills-1');
    await barrier(node3, node2, 'wills-2');
    const closed = Promise.all([clean, kept].map((c) => new Promise<void>((resolve) => c.once('close', () => resolve()))));

    await node3.stop('SIGKILL');
    await closed;
    await received.atLeast('wills/clean', 1);
    await received.atLeast('wills/kept', 1);

    // node3 comes back: it owns neither session any more and sends no will again; a message it
    // publishes after catching up arrives after anything it might have sent.
    await node3.start();
    await barrier(node3, node1, 'wills-3');
    await barrier(node2, node1, 'wills-4');
    assert.deepEqual(received.of('wills/clean'), ['clean gone']);
    assert.deepEqual(received.of('wills/kept'), ['kept gone']);
    const adopted = [node1, node2].filter((n) => n.process!.logs().some((line) => /lease has lapsed/.test(String(line.msg))));
    assert.equal(adopted.length, 1, 'one survivor adopted node3\'s sessions');

    // The kept session is the adopter's now: resumed on any node, it is present.
    const resumed = mqtt.connect(node2.mqtt, { clientId: 'will-kept', protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 600 }, reconnectPeriod: 0, username: 'admin', password: 'ADMIN' });
    const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => { resumed.once('connect', resolve); resumed.once('error', reject); });
    assert.equal(connack.sessionPresent, true);
    resumed.end(true);
    watcher.end(true);
  });

  it('a QoS 2 PUBLISH acknowledged by a node that then died, sent again to another node, is stored once', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const watcher = await connect(node1.mqtt, { clientId: 'dedupe-watch', protocolVersion: 5 });
    await watcher.subscribeAsync('dedupe/#', { qos: 2 });
    const received = new Received(watcher);

    const raw = await RawClient.open(node3.mqttPort, 5);
    raw.send(connectPacket({ clientId: 'dedupe-pub', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 600 } }), 5);
    assert.equal((await raw.next('connack'))?.reasonCode, 0);
    const publish = { cmd: 'publish', topic: 'dedupe/t', payload: Buffer.from('once'), qos: 2, messageId: 7, retain: false, dup: false } as Packet;
    raw.send(publish, 5);
    const pubrec = await raw.next('pubrec');
    assert.equal(pubrec?.messageId, 7);
    await received.atLeast('dedupe/t', 1);

    await node3.stop('SIGKILL');
    await raw.closed;
    // The client did not take the PUBREC in (as far as it knows): it sends the PUBLISH again, to node2.
    const again = await RawClient.open(node2.mqttPort, 5);
    again.send(connectPacket({ clientId: 'dedupe-pub', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 600 } }), 5);
    const connack = await again.next('connack');
    assert.equal(connack?.reasonCode, 0);
    assert.equal(connack?.sessionPresent, true);
    again.send({ ...publish, dup: true } as Packet, 5);
    assert.equal((await again.next('pubrec'))?.messageId, 7);
    again.send({ cmd: 'pubrel', messageId: 7 } as Packet, 5);
    assert.equal((await again.next('pubcomp'))?.messageId, 7);
    again.send({ cmd: 'publish', topic: 'dedupe/t', payload: Buffer.from('next'), qos: 2, messageId: 8, retain: false, dup: false } as Packet, 5);
    await again.next('pubrec');
    await received.atLeast('dedupe/t', 2);
    assert.deepEqual(received.of('dedupe/t'), ['once', 'next']);
    again.destroy();
    watcher.end(true);
    await node3.start();
  });

  it('an engine node and its nats-server SIGKILLed during a QoS 1 and QoS 2 stream: every acknowledged message is delivered on the other nodes', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const subscriber = await connect(node1.mqtt, { clientId: 'crash-sub', protocolVersion: 5 });
    await subscriber.subscribeAsync('crash/#', { qos: 2 });
    const received = new Received(subscriber);
    const other = await connect(node2.mqtt, { clientId: 'crash-sub2', protocolVersion: 5 });
    await other.subscribeAsync('crash/#', { qos: 1 });
    const receivedOther = new Received(other);

    const publisher = await connect(node3.mqtt, { clientId: 'crash-pub', protocolVersion: 5 });
    publisher.on('error', () => undefined);
    const acknowledged: Record<string, string[]> = { 'crash/q1': [], 'crash/q2': [] };
    let stop = false;
    let enough: () => void = () => undefined;
    const acknowledgedEnough = new Promise<void>((resolve) => { enough = resolve; });
    const publishing = (async () => {
      for (let n = 0; !stop; n += 50) {
        const batch: Array<Promise<unknown>> = [];
        for (let i = n; i < n + 50; i++) {
          for (const [topic, qos] of [['crash/q1', 1], ['crash/q2', 2]] as const) {
            batch.push(publisher.publishAsync(topic, String(i), { qos }).then(() => {
              acknowledged[topic].push(String(i));
              if (acknowledged['crash/q2'].length >= 200) enough();
            }, () => undefined));
          }
        }
        await Promise.all(batch);
      }
    })();
    // Killed mid-stream, with 200 QoS 2 messages acknowledged.
    await acknowledgedEnough;
    await Promise.all([node3.stop('SIGKILL'), cluster().nats.servers[2].stop('SIGKILL')]);
    stop = true;
    publisher.end(true);
    await publishing;
    const total = acknowledged['crash/q1'].length + acknowledged['crash/q2'].length;
    assert.ok(total >= 200, `acknowledged ${total}`);
    for (const topic of ['crash/q1', 'crash/q2']) {
      const last = String(Math.max(...acknowledged[topic].map(Number)));
      // Stored in order per publisher: once the last acknowledged one has arrived, every one before it has.
      await received.seen(topic, last);
      await receivedOther.seen(topic, last);
      const seen = new Set(received.of(topic));
      assert.deepEqual(acknowledged[topic].filter((m) => !seen.has(m)), [], `${topic}: every acknowledged message reached node1 (last ${last})`);
      const seenOther = new Set(receivedOther.of(topic));
      assert.deepEqual(acknowledged[topic].filter((m) => !seenOther.has(m)), [], `${topic}: every acknowledged message reached node2`);
    }
    // QoS 2 once each.
    assert.equal(new Set(received.of('crash/q2')).size, received.of('crash/q2').length);
    subscriber.end(true);
    other.end(true);
    await cluster().nats.servers[2].start();
    await node3.start();
  });
});
