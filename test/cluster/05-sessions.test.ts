/**
 * Sessions across nodes (docs/cluster.md, "Sessions"): a CONNECT claims its client id through the
 * stream; the node that held it closes its connection (0x8E) and the session goes on where the
 * client reconnected, its in-flight QoS 1/2 messages resent with DUP and the same packet ids.
 * Two CONNECTs with one client id on two nodes at once leave exactly one connection.
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import type { Packet } from 'mqtt-packet';
import { connect } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';
import { RawClient, connectPacket } from '../mqtt/mqtt-helpers';
import { call } from '../helpers/server';

/** A raw client with a persistent session on the node (3.1.1 clean session 0, or MQTT 5 with an expiry). */
async function rawSession(node: EngineNode, clientId: string, protocolVersion: 4 | 5): Promise<{ raw: RawClient; connack: any }> {
  const raw = await RawClient.open(node.mqttPort, protocolVersion);
  raw.send(connectPacket({
    clientId, clean: false, protocolVersion,
    ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: 3600 } } : {}),
  }), protocolVersion);
  const connack = await raw.next('connack');
  assert.ok(connack, `${clientId}: CONNACK on ${node.name}`);
  assert.equal(connack.returnCode ?? connack.reasonCode, 0);
  return { raw, connack };
}

async function rawSubscribe(raw: RawClient, filter: string, qos: 1 | 2, protocolVersion: 4 | 5): Promise<void> {
  raw.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: filter, qos }] } as Packet, protocolVersion);
  const suback = await raw.next('suback');
  assert.deepEqual(suback.granted, [qos]);
}

/** The next `count` packets of `cmd`. */
async function take(raw: RawClient, cmd: Packet['cmd'], count: number): Promise<any[]> {
  const packets: any[] = [];
  for (let i = 0; i < count; i++) {
    const packet = await raw.next(cmd);
    assert.ok(packet, `${cmd} ${i + 1} of ${count} arrived (${raw.received.join(' ')})`);
    packets.push(packet);
  }
  return packets;
}

/** ['clientName'] when the node holds that session, else [] (the action listMqSessions lists every node's sessions, each with its node). */
async function sessionsHeld(node: EngineNode, clientName: string): Promise<string[]> {
  const login = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
  const authToken = login.json.result.authToken as string;
  const listed = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'mq', action: 'listMqSessions', authToken, params: { filter: clientName } } });
  assert.equal(listed.json.errorCode ?? 0, 0, listed.text);
  return (listed.json.result.sessions as Array<{ clientName: string; node?: string }>)
    .filter((entry) => entry.clientName === clientName && entry.node === node.name).map((entry) => entry.clientName);
}

describe('cluster: sessions resumable on any node', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();

  it('QoS 1 and QoS 2 subscribers that hold back their acks reconnect to another node: the former connection is closed (0x8E), the in-flight messages come again with DUP and the same packet ids, PUBRELs again where PUBREC was sent, and QoS 2 arrives once', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const N = 20;
    const q1 = await rawSession(node1, 'resume-q1', 5);
    const q2 = await rawSession(node1, 'resume-q2', 4);
    await rawSubscribe(q1.raw, 'resume/q1', 1, 5);
    await rawSubscribe(q2.raw, 'resume/q2', 2, 4);

    const publisher = await connect(node3.mqtt, { clientId: 'resume-pub' });
    for (let i = 0; i < N; i++) {
      await publisher.publishAsync('resume/q1', `one-${i}`, { qos: 1 });
      await publisher.publishAsync('resume/q2', `two-${i}`, { qos: 2 });
    }
    // Delivered by node1, none acknowledged yet.
    const first1 = await take(q1.raw, 'publish', N);
    const first2 = await take(q2.raw, 'publish', N);
    assert.deepEqual(first1.map((p) => p.payload.toString()), Array.from({ length: N }, (_, i) => `one-${i}`));
    assert.deepEqual(first2.map((p) => p.payload.toString()), Array.from({ length: N }, (_, i) => `two-${i}`));
    // QoS 2: the first half is received (PUBREC); the broker answers PUBREL and waits for PUBCOMP.
    const half = first2.slice(0, N / 2);
    for (const p of half) q2.raw.send({ cmd: 'pubrec', messageId: p.messageId } as Packet, 4);
    const pubrels = await take(q2.raw, 'pubrel', N / 2);
    assert.deepEqual(pubrels.map((p) => p.messageId), half.map((p) => p.messageId));

    // A barrier: a message published on node1 after those acknowledgements reaches a subscriber on
    // node2 only once node2 has applied everything node1 wrote before it (its session state too).
    const barrier = await connect(node2.mqtt, { clientId: 'resume-barrier-sub' });
    await barrier.subscribeAsync('resume/barrier', { qos: 1 });
    const barrierSeen = new Promise<void>((resolve) => barrier.once('message', () => resolve()));
    const marker = await connect(node1.mqtt, { clientId: 'resume-barrier-pub' });
    await marker.publishAsync('resume/barrier', 'after the acks', { qos: 1 });
    await barrierSeen;

    // The same client ids on node2, while the node1 connections are still open.
    const again1 = await rawSession(node2, 'resume-q1', 5);
    const again2 = await rawSession(node2, 'resume-q2', 4);
    assert.equal(again1.connack.sessionPresent, true);
    assert.equal(again2.connack.sessionPresent, true);
    const takenOver = await q1.raw.next('disconnect');
    assert.equal(takenOver?.reasonCode, 0x8e, 'MQTT 5 hears Session taken over');
    await q1.raw.closed;
    await q2.raw.closed;

    // QoS 1: every message again, DUP, same packet ids, in order.
    const resent1 = await take(again1.raw, 'publish', N);
    assert.deepEqual(resent1.map((p) => [p.messageId, p.payload.toString(), p.dup]), first1.map((p) => [p.messageId, p.payload.toString(), true]));
    for (const p of resent1) again1.raw.send({ cmd: 'puback', messageId: p.messageId } as Packet, 5);

    // QoS 2: PUBREL again for the first half, the second half again with DUP and the same ids.
    const rereleased = await take(again2.raw, 'pubrel', N / 2);
    assert.deepEqual(rereleased.map((p) => p.messageId), half.map((p) => p.messageId));
    const resent2 = await take(again2.raw, 'publish', N / 2);
    assert.deepEqual(resent2.map((p) => [p.messageId, p.payload.toString(), p.dup]), first2.slice(N / 2).map((p) => [p.messageId, p.payload.toString(), true]));
    for (const p of rereleased) again2.raw.send({ cmd: 'pubcomp', messageId: p.messageId } as Packet, 4);
    for (const p of resent2) again2.raw.send({ cmd: 'pubrec', messageId: p.messageId } as Packet, 4);
    const lastRels = await take(again2.raw, 'pubrel', N / 2);
    for (const p of lastRels) again2.raw.send({ cmd: 'pubcomp', messageId: p.messageId } as Packet, 4);

    // Nothing else comes: a last message on each topic is the next PUBLISH either client gets.
    await publisher.publishAsync('resume/q1', 'last', { qos: 1 });
    await publisher.publishAsync('resume/q2', 'last', { qos: 2 });
    const last1 = await again1.raw.next('publish');
    const last2 = await again2.raw.next('publish');
    assert.equal(last1.payload.toString(), 'last');
    assert.equal(last2.payload.toString(), 'last');
    assert.equal(last2.dup, false);
    assert.deepEqual(again2.raw.packets.filter((p) => p.cmd === 'publish'), [], 'no QoS 2 message a second time');

    for (const c of [publisher, barrier, marker]) c.end(true);
    again1.raw.destroy();
    again2.raw.destroy();
  });

  it('only the owner of a kept session sends its will: nodes restarted after the session was stored do not load it', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const watcher = await connect(node1.mqtt, { clientId: 'owner-will-watch' });
    await watcher.subscribeAsync('owner-will/#', { qos: 1 });
    const wills: string[] = [];
    let willArrived: () => void = () => undefined;
    const firstWill = new Promise<void>((resolve) => { willArrived = resolve; });
    watcher.on('message', (topic, payload) => {
      if (topic === 'owner-will/gone') {
        wills.push(payload.toString());
        willArrived();
      }
    });
    const kept = await connect(node1.mqtt, {
      clientId: 'owner-will', protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 600 },
      will: { topic: 'owner-will/gone', payload: Buffer.from('gone'), qos: 1, retain: false },
    });
    // The session (connected, its will in it) is applied on node2 and node3, which then restart
    // and load the stored sessions: a node that loaded it would take its connection for ended
    // and send its will.
    for (const [node, name] of [[node2, 'owner-2'], [node3, 'owner-3']] as const) {
      const subscriber = await connect(node.mqtt, { clientId: `${name}-sub` });
      await subscriber.subscribeAsync(`barrier/${name}`, { qos: 1 });
      const seen = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
      await watcher.publishAsync(`barrier/${name}`, name, { qos: 1 });
      await seen;
      subscriber.end(true);
    }
    await Promise.all([node2.stop(), node3.stop()]);
    await Promise.all([node2.start(), node3.start()]);
    // Only node1 holds the session: the restarted nodes did not load it (they would sweep its
    // expiry and send its will as if its connection had ended).
    assert.deepEqual(await sessionsHeld(node1, 'owner-will'), ['owner-will']);
    assert.deepEqual(await sessionsHeld(node2, 'owner-will'), []);
    assert.deepEqual(await sessionsHeld(node3, 'owner-will'), []);
    // The connection ends without DISCONNECT: its will comes once, from node1.
    kept.stream.destroy();
    await firstWill;
    const after = await connect(node2.mqtt, { clientId: 'owner-will-after' });
    const seen = new Promise<void>((resolve) => watcher.on('message', (topic) => { if (topic === 'owner-will/after') resolve(); }));
    await after.publishAsync('owner-will/after', 'after', { qos: 1 });
    await seen;
    assert.deepEqual(wills, ['gone']);
    after.end(true);
    watcher.end(true);
  });

  it('two CONNECTs with one client id on two nodes at once leave exactly one connection, 20 rounds', async function () {
    const nodes = cluster().nodes;
    const checker = await connect(nodes[2].mqtt, { clientId: 'race-checker' });
    for (let round = 0; round < 20; round++) {
      const clientId = `race-${round}`;
      const a = nodes[round % 3];
      const b = nodes[(round + 1) % 3];
      const outcome = (url: string) => new Promise<{ client: MqttClient; closed: Promise<number | undefined> }>((resolve, reject) => {
        const client = mqtt.connect(url, { clientId, protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 600 }, reconnectPeriod: 0, connectTimeout: 60_000, username: 'admin', password: 'ADMIN' });
        let reason: number | undefined;
        client.on('disconnect', (packet) => { reason = packet.reasonCode; });
        const closed = new Promise<number | undefined>((done) => client.once('close', () => done(reason)));
        client.once('connect', () => resolve({ client, closed }));
        client.once('error', reject);
      });
      const [first, second] = await Promise.all([outcome(a.mqtt), outcome(b.mqtt)]);
      // One of them is taken over (the claim applied first loses); the other stays.
      const loser = await Promise.race([first.closed.then(() => first), second.closed.then(() => second)]);
      const winner = loser === first ? second : first;
      assert.equal(await loser.closed, 0x8e, `round ${round}: the connection that lost hears 0x8E`);
      assert.equal(winner.client.connected, true, `round ${round}: the other one is still connected`);
      // The winner's session is the live one: it gets what is published on a third connection's node.
      await winner.client.subscribeAsync(`race/${round}`, { qos: 1 });
      const got = new Promise<string>((resolve) => winner.client.once('message', (_t, payload) => resolve(payload.toString())));
      await checker.publishAsync(`race/${round}`, `round ${round}`, { qos: 1 });
      assert.equal(await got, `round ${round}`);
      assert.equal(winner.client.connected, true, `round ${round}: exactly one owner`);
      winner.client.end(true);
    }
    checker.end(true);
  });
});
