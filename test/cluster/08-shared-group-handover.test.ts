/**
 * A dead node's share of a shared subscription group (docs/cluster.md, "Shared subscriptions"):
 * once its lease lapses, the survivor that adopts its sessions removes its announced members
 * through the stream, and every message published after that reaches the group exactly once, on
 * the live members. When the node comes back with a member, the group is shared again, still once.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { connect, received } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';
import { call } from '../helpers/server';

/**
 * Each member publishes a barrier after its SUBACK (so after its node's announcement in the
 * stream); once every member has every barrier, every node has applied every announcement.
 */
async function barrierAll(members: MqttClient[], name: string): Promise<void> {
  const arrived = members.map((client) => Promise.all(members.map((_, j) => received(client, `barrier/${name}-${j}`))));
  await Promise.all(members.map((client, j) => client.publishAsync(`barrier/${name}-${j}`, 'x', { qos: 1 })));
  await Promise.all(arrived);
}

/** Publishes `count` QoS 1 messages, then a trailing barrier every member waits for (each node delivers in log order). */
async function publishAndDrain(publisher: MqttClient, members: MqttClient[], prefix: string, count: number): Promise<void> {
  const sends: Array<Promise<unknown>> = [];
  for (let n = 0; n < count; n++) sends.push(publisher.publishAsync('handover/t', `${prefix}-${n}`, { qos: 1 }));
  await Promise.all(sends);
  const end = members.map((client) => received(client, `barrier/${prefix}-end`));
  await publisher.publishAsync(`barrier/${prefix}-end`, 'x', { qos: 1 });
  await Promise.all(end);
}

describe('cluster: a dead node\'s share of a shared subscription group', function () {
  this.timeout(240_000);
  // A short lease for this cluster only: a dead node is judged dead about 6 s after it died.
  const cluster = clusterForSuite({ settings: { cluster_node_lease_ms: 6000 } });
  // node1's member of the group, its messages, and the publisher on node3, across the cases.
  let member1: MqttClient;
  let publisher: MqttClient;
  const got1: string[] = [];

  it('after node2 is SIGKILLed and its lease lapses, each of 200 messages published afterwards reaches the group exactly once, on node1\'s member', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const got2: string[] = [];
    member1 = await connect(node1.mqtt, { clientId: 'handover-m1' });
    const member2 = await connect(node2.mqtt, { clientId: 'handover-m2' });
    member1.on('message', (topic, payload) => { if (topic === 'handover/t') got1.push(payload.toString()); });
    member2.on('message', (topic, payload) => { if (topic === 'handover/t') got2.push(payload.toString()); });
    for (const client of [member1, member2]) {
      await client.subscribeAsync('$share/g/handover/#', { qos: 1 });
      await client.subscribeAsync('barrier/#', { qos: 1 });
    }
    await barrierAll([member1, member2], 'joined');
    publisher = await connect(node3.mqtt, { clientId: 'handover-pub' });
    // Both nodes hold the group: each gets a share.
    await publishAndDrain(publisher, [member1, member2], 'before', 100);
    assert.equal(new Set([...got1, ...got2]).size, 100);
    assert.equal(got1.length + got2.length, 100, `once each before (${got1.length} + ${got2.length})`);
    assert.ok(got1.length > 0 && got2.length > 0, `both members got some (${got1.length} + ${got2.length})`);

    const handedOver = node1.process!.logged((line) => /share of the shared subscription groups goes to the live members/.test(String(line.msg)) && line.node === 'node2');
    const member2Closed = new Promise<void>((resolve) => member2.once('close', () => resolve()));
    await node2.stop('SIGKILL');
    await member2Closed;
    // node1 (the first live node by name) adopts node2's sessions and removes its members.
    await handedOver;

    got1.length = 0;
    await publishAndDrain(publisher, [member1], 'after', 200);
    assert.equal(new Set(got1).size, got1.length, 'no message twice after node2 died');
    assert.equal(got1.length, 200, `every message once on node1's member after node2 died (${got1.length})`);
    assert.ok(!node3.process!.logs().some((line) => /share of the shared subscription groups/.test(String(line.msg))), 'one survivor removed node2\'s members');
  });

  it('the claim of node2\'s clean session, adopted by node1 when node2 died, is released by node1\'s sweep: its client name is free for an MQ API session on node3', async function () {
    const [node1, , node3] = cluster().nodes;
    // node1 adopted `handover-m2` (a clean session: nothing stored, its claim holds nothing).
    await node1.process!.logged((line) => /released the claims of client ids/.test(String(line.msg))
      && Array.isArray(line.clientIds) && (line.clientIds as string[]).includes('handover-m2'));
    // node3 has applied the release once it has a message node1 published after it.
    const watcher = await connect(node3.mqtt, { clientId: 'release-watch' });
    await watcher.subscribeAsync('barrier/released', { qos: 1 });
    const seen = received(watcher, 'barrier/released');
    const sender = await connect(node1.mqtt, { clientId: 'release-send' });
    await sender.publishAsync('barrier/released', 'x', { qos: 1 });
    await seen;
    const login = await call('POST', `${node3.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const authToken = login.json.result.authToken as string;
    const created = await call('POST', `${node3.http}/api`, { auth: null, body: { api: 'mq', action: 'createMqApiSession', authToken, params: { clientName: 'handover-m2' } } });
    assert.equal(created.json.errorCode, 0, created.text);
    await Promise.all([watcher, sender].map((client) => client.endAsync()));
  });

  it('node2 restarted with a member shares the group again with node1\'s member, each message once', async function () {
    const node2 = cluster().nodes[1];

    // node2 comes back with a member: it announces it, and the group is shared again.
    await node2.start();
    const again = await connect(node2.mqtt, { clientId: 'handover-m2b' });
    const got2b: string[] = [];
    again.on('message', (topic, payload) => { if (topic === 'handover/t') got2b.push(payload.toString()); });
    await again.subscribeAsync('$share/g/handover/#', { qos: 1 });
    await again.subscribeAsync('barrier/#', { qos: 1 });
    await barrierAll([member1, again], 'rejoined');
    got1.length = 0;
    await publishAndDrain(publisher, [member1, again], 'back', 200);
    const all = [...got1, ...got2b];
    assert.equal(new Set(all).size, all.length, 'no message twice after node2 came back');
    assert.equal(all.length, 200, `every message once after node2 came back (${got1.length} + ${got2b.length})`);
    assert.ok(got2b.length > 0, 'node2\'s new member gets a share');
    await Promise.all([member1, again, publisher].map((client) => client.endAsync()));
  });
});
