/**
 * A node cut off from every nats-server fences itself (docs/cluster.md, "Self-fencing"): node3
 * reaches the servers only through TCP proxies this test controls. Cut, it closes its clients
 * (MQTT 5: DISCONNECT 0x9C) before any survivor can take it for dead, so the will a survivor then
 * sends never meets a connection still served by node3; the client resumes its session on a live
 * node; node3 refuses CONNECTs until the proxies are restored, then serves again.
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { barrier, connect, received } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';
import { TcpProxy } from '../helpers/tcp-proxy';

/** The CONNACK reason code a CONNECT to `url` is answered with (MQTT 5). */
function connackCode(url: string, clientId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { clientId, protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 20_000, username: 'admin', password: 'ADMIN' });
    client.once('connect', (connack) => { client.end(true); resolve(connack.reasonCode ?? 0); });
    client.once('error', (error: Error & { code?: number }) => {
      client.end(true);
      if (typeof error.code === 'number') resolve(error.code);
      else reject(error);
    });
  });
}

const KEPT = { protocolVersion: 5 as const, clean: false, properties: { sessionExpiryInterval: 600 } };

describe('cluster: a node cut off from every nats-server fences itself', function () {
  this.timeout(240_000);
  const proxies: TcpProxy[] = [];
  const events: string[] = [];
  // A short lease (6 s): node3 fences 3 s after its last renewal, a survivor adopts after 6 s.
  const cluster = clusterForSuite({
    settings: { cluster_node_lease_ms: 6000 },
    natsUrls: async (index, urls) => {
      if (index !== 2) return undefined;
      for (const url of urls) proxies.push(await TcpProxy.start(Number(new URL(url).port)));
      return proxies.map((proxy) => proxy.url);
    },
  }, () => `events: ${JSON.stringify(events)}`);
  after(async () => { await Promise.all(proxies.map((proxy) => proxy.close())); });

  it('closes its client (0x9C) before a survivor sends the will, once; the client resumes elsewhere; CONNECTs are refused until the node is back', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const watcher = await connect(node1.mqtt, { clientId: 'fence-watch' });
    await watcher.subscribeAsync('fence/will', { qos: 1 });
    const wills: string[] = [];
    watcher.on('message', (topic, payload) => {
      if (topic !== 'fence/will') return;
      wills.push(payload.toString());
      events.push('will arrived');
    });
    const willArrived = received(watcher, 'fence/will');

    const client: MqttClient = await connect(node3.mqtt, { clientId: 'fence-client', ...KEPT, will: { topic: 'fence/will', payload: Buffer.from('fenced gone'), qos: 1, retain: false } });
    await client.subscribeAsync('fence/queue', { qos: 1 });
    // The session and its will are applied on the survivors before node3 is cut off.
    await barrier(node3, node1, 'fence-1');
    await barrier(node3, node2, 'fence-2');
    client.on('disconnect', (packet) => events.push(`DISCONNECT 0x${(packet.reasonCode ?? 0).toString(16)}`));
    const closed = new Promise<void>((resolve) => client.once('close', () => { events.push('client closed'); resolve(); }));

    for (const proxy of proxies) proxy.cut();
    await willArrived;
    assert.deepEqual(events.slice(0, 3), ['DISCONNECT 0x9c', 'client closed', 'will arrived'], 'node3 closed its client before the will was sent');
    await closed;
    assert.ok(node3.process!.logs().some((line) => /this node is fenced/.test(String(line.msg))), 'node3 logged that it fenced itself');

    // Fenced: a CONNECT to node3 is refused, Server unavailable.
    assert.equal(await connackCode(node3.mqtt, 'fence-probe'), 0x88);

    // A QoS 1 message published while the client is away waits in its session, adopted by a survivor.
    const publisher = await connect(node2.mqtt, { clientId: 'fence-pub' });
    await publisher.publishAsync('fence/queue', 'while away', { qos: 1 });
    const resumed = mqtt.connect(node2.mqtt, { clientId: 'fence-client', ...KEPT, reconnectPeriod: 0, connectTimeout: 20_000, username: 'admin', password: 'ADMIN' });
    const queued = new Promise<string>((resolve) => resumed.once('message', (_topic, payload) => resolve(payload.toString())));
    const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => { resumed.once('connect', resolve); resumed.once('error', reject); });
    assert.equal(connack.sessionPresent, true, 'the session was resumed on node2');
    assert.equal(await queued, 'while away');

    // Back in the cluster: node3 catches up, renews its lease and serves CONNECTs again.
    const unfenced = node3.process!.logged((line) => /unfenced/.test(String(line.msg)));
    for (const proxy of proxies) proxy.restore();
    await unfenced;
    assert.equal(await connackCode(node3.mqtt, 'fence-after'), 0);

    // Everything node3 and node2 wrote is applied on node1: the will came once.
    await barrier(node3, node1, 'fence-3');
    await barrier(node2, node1, 'fence-4');
    assert.deepEqual(wills, ['fenced gone']);
    resumed.end(true);
    publisher.end(true);
    watcher.end(true);
  });
});
