/**
 * A node paused for longer than its lease (docs/cluster.md, "Self-fencing", "A node paused"):
 * node3 is stopped with SIGSTOP while it holds MQTT sessions (kept and clean, each with a will),
 * node1 adopts them once node3's lease lapses and sends their wills, and while node3 is still
 * stopped its clients act: two keep their sockets and publish (the bytes wait in node3's
 * socket), two drop their sockets (the end waits there too). Resumed with SIGCONT, node3's event
 * loop meets those reads before its fence timer. What a user must be able to rely on: node3
 * serves nothing of the sessions it lost (no PUBLISH delivered from it, no publish of theirs
 * stored, no will sent by it), closes its connections (0x9C: it fences before it reads or
 * applies anything), each session has one owner, every acknowledged message reaches the
 * session where it is resumed, and node3 serves again once it has renewed and caught up.
 *
 * And the race of a survivor that read the paused node's key lapsed just before the node came
 * back: node1's stream writes are held in TCP proxies from before the pause, so its adoption
 * claim reaches the stream only after node3 has resumed, caught up, served again and taken back
 * its client; the claim must then take nothing from node3.
 *
 * Every wait is an event (a message, a socket's close, a log line, bytes held in a proxy); the
 * pause lasts until the wills have arrived (or the claim is held), however long that takes.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { barrier, connect, received } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';
import { call } from '../helpers/server';
import { TcpProxy } from '../helpers/tcp-proxy';

interface Listed {
  clientName: string;
  node?: string | null;
}

/** An action on a node as the admin (Basic credentials through an action session's token). */
async function action(node: EngineNode, name: string, params: object): Promise<any> {
  const login = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
  assert.equal(login.json.errorCode ?? 0, 0, login.text);
  const answer = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'mq', action: name, authToken: login.json.result.authToken, params } });
  assert.equal(answer.json.errorCode ?? 0, 0, answer.text);
  return answer.json.result;
}

/** The node each listed session of `pause-` names as its owner, as `node` lists them. */
async function owners(node: EngineNode): Promise<Record<string, string | null | undefined>> {
  const page = await action(node, 'listMqSessions', { filter: 'pause-' });
  return Object.fromEntries((page.sessions as Listed[]).map((s) => [s.clientName, s.node]));
}

/** Resolves once the client's socket has closed. */
function closed(client: MqttClient): Promise<void> {
  return new Promise((resolve) => {
    if (client.stream?.destroyed) resolve();
    else client.stream.once('close', () => resolve());
  });
}

const KEPT = { protocolVersion: 5 as const, clean: false, properties: { sessionExpiryInterval: 600 } };
const will = (id: string) => ({ topic: `pause/will/${id}`, payload: Buffer.from(id), qos: 1 as const, retain: false });

describe('cluster: a node paused (SIGSTOP) for longer than its lease', function () {
  this.timeout(240_000);
  const events: string[] = [];
  // A short lease (6 s): node3 fences 3 s after its last renewal, node1 adopts after 6 s.
  const cluster = clusterForSuite({ settings: { cluster_node_lease_ms: 6000 } }, () => `events: ${JSON.stringify(events)}`);
  // A stopped process ignores SIGTERM: node3 is resumed after a test that failed while it was stopped.
  afterEach(() => { cluster().nodes[2].process?.child.kill('SIGCONT'); });

  it('serves nothing of the sessions a survivor adopted meanwhile once resumed: no delivery, no publish stored, no will of its own; its clients are closed (0x9C), each will is sent once, nothing acknowledged is lost, and it serves again', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const watcher = await connect(node1.mqtt, { clientId: 'pause-watch', protocolVersion: 5 });
    const seen: string[] = [];
    watcher.on('message', (topic, payload) => {
      seen.push(`${topic}=${payload.toString()}`);
      events.push(`watcher: ${topic}`);
    });
    await watcher.subscribeAsync(['pause/will/#', 'pause/from/#'], { qos: 1 });

    // node3's sessions: A kept and B clean keep their sockets through the pause; C kept and D
    // clean drop theirs while node3 is stopped. A and B subscribe to what is published meanwhile.
    const a = await connect(node3.mqtt, { clientId: 'pause-A', ...KEPT, will: will('A') });
    const b = await connect(node3.mqtt, { clientId: 'pause-B', protocolVersion: 4, clean: true, will: will('B') });
    const c = await connect(node3.mqtt, { clientId: 'pause-C', ...KEPT, will: will('C') });
    const d = await connect(node3.mqtt, { clientId: 'pause-D', protocolVersion: 5, clean: true, will: will('D') });
    // E kept and F clean have a keep alive of 2 s: resumed, node3 finds them silent for longer
    // than 1.5 times that (its keep-alive sweep is a timer due before its fence timer).
    const e = await connect(node3.mqtt, { clientId: 'pause-E', ...KEPT, keepalive: 2, will: will('E') });
    const f = await connect(node3.mqtt, { clientId: 'pause-F', protocolVersion: 4, clean: true, keepalive: 2, will: will('F') });
    for (const client of [e, f]) client.on('error', () => undefined);
    await a.subscribeAsync('pause/data', { qos: 1 });
    await b.subscribeAsync('pause/data', { qos: 1 });
    const deliveredFromNode3: string[] = [];
    for (const [name, client] of [['A', a], ['B', b]] as const) {
      client.on('message', (topic, payload) => deliveredFromNode3.push(`${name}: ${topic}=${payload.toString()}`));
    }
    // A's DISCONNECT reason code (-1: closed without one).
    const aDisconnect = new Promise<number>((resolve) => {
      a.once('disconnect', (packet) => resolve(packet.reasonCode ?? 0));
      a.stream.once('close', () => resolve(-1));
    });
    const aClosed = closed(a);
    const bClosed = closed(b);
    // The sessions, their subscriptions and wills are applied on the survivors before the pause.
    await barrier(node3, node1, 'pause-1');
    await barrier(node3, node2, 'pause-2');

    const publisher = await connect(node2.mqtt, { clientId: 'pause-pub' });
    const wills = ['A', 'B', 'C', 'D', 'E', 'F'].map((id) => received(watcher, `pause/will/${id}`));
    const child = node3.process!.child;
    child.kill('SIGSTOP');
    events.push('node3 stopped');
    try {
      // Acknowledged while node3 is stopped, before and after the adoption: A must get both where it resumes.
      await publisher.publishAsync('pause/data', 'before adoption', { qos: 1 });
      // node3's lease lapses; node1 adopts its four sessions and sends their wills.
      await Promise.all(wills);
      events.push('wills arrived');
      // The adoption, as node1 lists it (node1 applied its claims before it sent the wills).
      const listed = await owners(node1);
      assert.equal(listed['pause-A'], 'node1', 'node1 lists pause-A as its own');
      assert.equal(listed['pause-C'], 'node1', 'node1 lists pause-C as its own');
      assert.equal(listed['pause-E'], 'node1', 'node1 lists pause-E as its own');
      await publisher.publishAsync('pause/data', 'after adoption', { qos: 1 });

      // node3's clients act while it is stopped: A and B publish (the bytes wait in node3's
      // socket), C and D drop their connections (the end waits there too).
      a.publish('pause/from/A', 'A qos 1', { qos: 1 }, () => undefined);
      await new Promise<void>((resolve) => a.publish('pause/from/A', 'A qos 0', { qos: 0 }, () => resolve()));
      await new Promise<void>((resolve) => b.publish('pause/from/B', 'B qos 0', { qos: 0 }, () => resolve()));
      const cClosed = closed(c);
      const dClosed = closed(d);
      c.end(true);
      d.end(true);
      await Promise.all([cClosed, dClosed]);
    } finally {
      child.kill('SIGCONT');
      events.push('node3 resumed');
    }

    // node3 closes A and B; it fenced before it read or applied anything (so A hears 0x9C, not 0x8E).
    await Promise.all([aClosed, bClosed]);
    assert.equal(await aDisconnect, 0x9c, 'node3 fenced itself before anything else (DISCONNECT 0x9C)');
    // It renews its lease, catches up (the claims that moved its sessions) and serves again.
    await node3.process!.logged((line) => /unfenced/.test(String(line.msg)));
    assert.ok(node3.process!.logs().some((line) => /this node is fenced/.test(String(line.msg))), 'node3 logged that it fenced itself');

    // A resumes its session on node2: both acknowledged messages are there.
    const resumed = await connect(node2.mqtt, { clientId: 'pause-A', ...KEPT });
    const got: string[] = [];
    const both = new Promise<void>((resolve) => resumed.on('message', (_topic, payload) => {
      got.push(payload.toString());
      if (got.includes('before adoption') && got.includes('after adoption')) resolve();
    }));
    await both;

    // node3 serves again (a CONNECT and a publish through it), and everything node3 and node2
    // wrote is applied on node1 before the wills and publishes are counted.
    await barrier(node3, node1, 'pause-3');
    await barrier(node2, node1, 'pause-4');
    assert.deepEqual(seen.filter((s) => s.startsWith('pause/will/')).sort(), ['pause/will/A=A', 'pause/will/B=B', 'pause/will/C=C', 'pause/will/D=D', 'pause/will/E=E', 'pause/will/F=F'], 'each will once, none from node3');
    assert.deepEqual(seen.filter((s) => s.startsWith('pause/from/')), [], 'nothing node3 read from the lost sessions after its resume was stored');
    assert.deepEqual(deliveredFromNode3, [], 'node3 delivered nothing to the connections of the sessions it lost');

    // One owner each, the same on every node: A is node2's (resumed there), C node1's (adopted);
    // B and D (clean, adopted and ended at once) are not node3's.
    await barrier(node1, node2, 'pause-5');
    await barrier(node1, node3, 'pause-6');
    await barrier(node2, node3, 'pause-7');
    for (const node of [node1, node2, node3]) {
      const listed = await owners(node);
      assert.equal(listed['pause-A'], 'node2', `pause-A's owner as ${node.name} lists it`);
      assert.equal(listed['pause-C'], 'node1', `pause-C's owner as ${node.name} lists it`);
      assert.equal(listed['pause-E'], 'node1', `pause-E's owner as ${node.name} lists it`);
      assert.notEqual(listed['pause-F'], 'node3', `pause-F as ${node.name} lists it`);
      assert.notEqual(listed['pause-B'], 'node3', `pause-B as ${node.name} lists it`);
      assert.notEqual(listed['pause-D'], 'node3', `pause-D as ${node.name} lists it`);
    }
    await Promise.all([resumed, publisher, watcher].map((client) => client.endAsync()));
    for (const client of [e, f]) client.end(true);
  });
});

describe('cluster: a survivor that read a paused node\'s key lapsed just before the node came back', function () {
  this.timeout(240_000);
  const events: string[] = [];
  const proxies: TcpProxy[] = [];
  // node1 (the survivor that adopts: the first live node by name) reaches the servers through
  // proxies that read its NATS operations from the start and hold nothing until told.
  const cluster = clusterForSuite({
    settings: { cluster_node_lease_ms: 6000 },
    natsUrls: async (index, urls) => {
      if (index !== 0) return undefined;
      for (const url of urls) {
        const proxy = await TcpProxy.start(Number(new URL(url).port));
        proxy.holdSubject('nothing.held.yet');
        proxies.push(proxy);
      }
      return proxies.map((proxy) => proxy.url);
    },
  }, () => `events: ${JSON.stringify(events)}`);
  // A stopped process ignores SIGTERM: node3 is resumed after a test that failed while it was stopped.
  afterEach(() => { cluster().nodes[2].process?.child.kill('SIGCONT'); });
  after(async () => { await Promise.all(proxies.map((proxy) => proxy.close())); });

  it('takes nothing from the node once it serves again: the adoption claim that arrives late is passed over, the client that reconnected to the node stays, and no will is sent', async function () {
    const [node1, node2, node3] = cluster().nodes;
    // On node1, which then owns a session: node2 counts node1 among the live owners, so node1
    // (first by name) is the survivor that adopts (its stream reads go on while its writes are held).
    const watcher = await connect(node1.mqtt, { clientId: 'race-watch' });
    const wills: string[] = [];
    watcher.on('message', (topic) => {
      wills.push(topic);
      events.push(`watcher: ${topic}`);
    });
    await watcher.subscribeAsync('race/will/#', { qos: 1 });
    const first = await connect(node3.mqtt, { clientId: 'race-X', ...KEPT, will: { topic: 'race/will/X', payload: Buffer.from('X gone'), qos: 1, retain: false } });
    await first.subscribeAsync('race/data', { qos: 1 });
    await barrier(node3, node1, 'race-1');
    await barrier(node3, node2, 'race-2');
    const firstClosed = closed(first);

    // From now on node1's stream writes wait in the proxies (its lease renewals and reads go on).
    for (const proxy of proxies) proxy.holdSubject('engine.writes');
    const claimHeld = Promise.any(proxies.map((proxy) => proxy.sent('owner/race-X')));
    const willFirst = received(watcher, 'race/will/X').then(() => { throw new Error('the will came before node1\'s adoption claim was held: another node adopted'); });
    const child = node3.process!.child;
    child.kill('SIGSTOP');
    events.push('node3 stopped');
    try {
      // node1 read node3's key lapsed and wrote its adoption claim: held.
      await Promise.race([claimHeld, willFirst]);
      events.push('adoption claim held');
    } finally {
      child.kill('SIGCONT');
      events.push('node3 resumed');
    }
    await firstClosed;
    await node3.process!.logged((line) => /unfenced/.test(String(line.msg)));

    // The client comes back to node3, which still owns its session (node1's claim is not in the stream).
    const again = await connect(node3.mqtt, { clientId: 'race-X', ...KEPT });
    again.on('disconnect', (packet) => events.push(`again: DISCONNECT 0x${(packet.reasonCode ?? 0).toString(16)}`));
    const stillHere = received(again, 'race/data');
    const takenOver = closed(again).then(() => { throw new Error(`the client that reconnected to node3 was closed: ${JSON.stringify(events)}`); });

    // node1's claim reaches the stream now; everything node1 wrote is applied on node2 and node3
    // before these barriers' messages.
    for (const proxy of proxies) proxy.release();
    events.push('node1 released');
    await barrier(node1, node3, 'race-3');
    await barrier(node1, node2, 'race-4');

    // The session stays node3's, served there (node3 applies node1's claim before this message),
    // and nobody sent its will.
    const publisher = await connect(node2.mqtt, { clientId: 'race-pub' });
    await publisher.publishAsync('race/data', 'still here', { qos: 1 });
    await Promise.race([stillHere, takenOver]);
    takenOver.catch(() => undefined);
    for (const node of [node1, node2, node3]) {
      const page = await action(node, 'listMqSessions', { filter: 'race-X' });
      assert.deepEqual((page.sessions as Listed[]).map((s) => [s.clientName, s.node]), [['race-X', 'node3']], `race-X's owner as ${node.name} lists it`);
    }
    await barrier(node3, node1, 'race-5');
    await barrier(node2, node1, 'race-6');
    assert.deepEqual(wills, [], 'no will was sent');
    await Promise.all([again, publisher, watcher].map((client) => client.endAsync()));
  });
});
