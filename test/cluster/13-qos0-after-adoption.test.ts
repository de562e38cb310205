/**
 * QoS 0 stays at most once when a dead node's session moves to a survivor (docs/cluster.md,
 * "What each QoS gives across a node's death"): a live session's position is stored now and then,
 * so the survivor resumes it from an older position than the dead node had delivered up to. QoS
 * 1/2 messages from there come again (at least once); QoS 0 messages published before the client
 * resumed are passed over, so none the dead node delivered comes twice.
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { connect } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';

const FIRST = 1000;
const AFTER = 300;

/** Publishes `count` QoS 0 messages, then a QoS 1 marker on the same topic (stored after them). */
async function publishQos0(publisher: MqttClient, tag: string, count: number): Promise<void> {
  for (let n = 0; n < count; n++) publisher.publish('q0/t', `${tag}-${n}`, { qos: 0 });
  await publisher.publishAsync('q0/t', `${tag}-end`, { qos: 1 });
}

/** Resolves when the client got a message on q0/t with this payload. */
function payloadArrives(client: MqttClient, payload: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (topic: string, body: Buffer): void => {
      if (topic !== 'q0/t' || body.toString() !== payload) return;
      client.off('message', listener);
      resolve();
    };
    client.on('message', listener);
  });
}

describe('cluster: QoS 0 is never repeated after a dead node\'s session is adopted', function () {
  this.timeout(240_000);
  // A short lease: node2 is judged dead about 6 s after it died.
  const cluster = clusterForSuite({ settings: { cluster_node_lease_ms: 6000 } });

  it(`a kept QoS 0 subscriber on node2 got ${FIRST} messages; node2 is SIGKILLed, node1 adopts the session, the client resumes it on node3: none of the ${FIRST} comes again, and each of ${AFTER} published afterwards comes once`, async function () {
    const [node1, node2, node3] = cluster().nodes;
    const got: string[] = [];
    const first = await connect(node2.mqtt, { clientId: 'q0-sub', clean: false });
    first.on('message', (topic, payload) => { if (topic === 'q0/t') got.push(payload.toString()); });
    await first.subscribeAsync('q0/#', { qos: 0 });
    const publisher = await connect(node1.mqtt, { clientId: 'q0-pub' });
    const firstEnd = payloadArrives(first, 'first-end');
    await publishQos0(publisher, 'first', FIRST);
    await firstEnd;

    const adopted = node1.process!.logged((line) => /lease has lapsed; this node takes over its sessions/.test(String(line.msg)) && line.node === 'node2');
    const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    await node2.stop('SIGKILL');
    await closed;
    await adopted;

    // Resumed on node3: the session node1 adopted is present, at the position last stored.
    const again = mqtt.connect(node3.mqtt, { clientId: 'q0-sub', clean: false, reconnectPeriod: 0, connectTimeout: 20_000, username: 'admin', password: 'ADMIN' });
    again.on('message', (topic, payload) => { if (topic === 'q0/t') got.push(payload.toString()); });
    const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => {
      again.once('connect', resolve);
      again.once('error', reject);
    });
    assert.equal(connack.sessionPresent, true, 'the adopted session is resumed');
    const afterEnd = payloadArrives(again, 'after-end');
    await publishQos0(publisher, 'after', AFTER);
    await afterEnd;

    const counts = new Map<string, number>();
    for (const payload of got) counts.set(payload, (counts.get(payload) ?? 0) + 1);
    const twice = [...counts].filter(([, count]) => count > 1).map(([payload]) => payload);
    assert.deepEqual(twice.slice(0, 10), [], `no QoS 0 message twice (${twice.length} repeated)`);
    for (let n = 0; n < AFTER; n++) assert.equal(counts.get(`after-${n}`), 1, `after-${n} once`);
    await Promise.all([again, publisher].map((client) => client.endAsync()));
  });
});
