/**
 * The MQ admin actions act on the whole cluster from any node (docs/cluster.md, "Admin actions
 * across the cluster"): disconnectMqClient closes a client another node serves (that node closes
 * it, MQTT 5 hearing DISCONNECT 0x98 as on one node), deleteMqSession ends another node's MQTT
 * session (its client hears 0x8E, its claim goes with it), deleteMqSessions ends the disconnected
 * sessions every node holds (as the explorer's "Remove disconnected sessions" sends it),
 * describeMqSessions without names and getMqOverview give every node's sessions and figures, each
 * node answering for itself over NATS request/reply; an account without the rights gets the same
 * answers through another node as through the session's own; a node killed (SIGKILL) has its
 * disconnected sessions adopted and ended by deleteMqSessions before its lease lapses; a node
 * stopped (SIGSTOP) is marked as not answering, the rest of the answer comes, and an action on its
 * client answers NODE_UNREACHABLE (12062).
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { barrier, connect } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';
import { call } from '../helpers/server';

interface Answer {
  errorCode?: number;
  errorMessage?: string;
  result?: any;
}

/** An action on a node as `username` (through an action session's token); the whole answer. */
async function answerOf(node: EngineNode, username: string, password: string, name: string, params: object, api = 'mq'): Promise<Answer> {
  const login = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username, password } } });
  assert.equal(login.json.errorCode ?? 0, 0, login.text);
  const answer = await call('POST', `${node.http}/api`, { auth: null, body: { api, action: name, authToken: login.json.result.authToken, params } });
  return answer.json as Answer;
}

/** An action's result, as admin unless told; fails the test on an errorCode. */
async function action(node: EngineNode, name: string, params: object, api = 'mq', username = 'admin', password = 'ADMIN'): Promise<any> {
  const answer = await answerOf(node, username, password, name, params, api);
  assert.equal(answer.errorCode ?? 0, 0, JSON.stringify(answer));
  return answer.result;
}

/** Ends the client with a DISCONNECT; resolves once the server closed its socket (it has ended the connection by then). */
function endAndClosed(client: MqttClient): Promise<void> {
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  client.end();
  return closed;
}

/** Connects as admin; resolves with the client and its CONNACK's Session Present. */
function connectForConnack(url: string, options: mqtt.IClientOptions): Promise<{ client: MqttClient; sessionPresent: boolean }> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 20_000, username: 'admin', password: 'ADMIN', ...options });
    client.once('connect', (connack) => resolve({ client, sessionPresent: connack.sessionPresent }));
    client.once('error', reject);
  });
}

const READER = { username: 'adm-reader', password: 'adm-reader-password-1' };
const NO_ROLE = { username: 'adm-norole', password: 'adm-norole-password-1' };

describe('cluster: the MQ admin actions act on the whole cluster from any node', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();
  const clients: MqttClient[] = [];

  before(async function () {
    const [node1, node2, node3] = cluster().nodes;
    await action(node1, 'createAccount', { ...READER, roles: ['reader'] }, 'admin');
    await action(node1, 'createAccount', { ...NO_ROLE, roles: [] }, 'admin');
    // Each node has applied the accounts once a message node1 published after them reached it.
    await barrier(node1, node2, 'adm-accounts-2');
    await barrier(node1, node3, 'adm-accounts-3');
    // A clean MQTT 5 session on each node, subscribed; the reader's own session on node3.
    for (const [i, node] of [node1, node2, node3].entries()) {
      const client = await connect(node.mqtt, { clientId: `adm-c${i + 1}`, protocolVersion: 5 });
      await client.subscribeAsync(`adm/${i + 1}/#`, { qos: 1 });
      clients.push(client);
    }
    clients.push(await connect(node3.mqtt, { clientId: 'adm-reader-own', protocolVersion: 5, ...READER }));
    // Every node has applied the claims of the others' sessions.
    await barrier(node3, node1, 'adm-claims-1');
    await barrier(node3, node2, 'adm-claims-2');
    await barrier(node1, node2, 'adm-claims-12');
    await barrier(node2, node1, 'adm-claims-21');
  });

  after(async function () {
    await Promise.all(clients.map((client) => client.endAsync(true)));
  });

  it('describeMqSessions without names, on each node, describes the sessions of all three nodes, each with its node; with a name, another node\'s MQTT session is described by its node', async function () {
    for (const node of cluster().nodes) {
      const result = await action(node, 'describeMqSessions', {});
      const ours = (result.sessions as Array<Record<string, any>>).filter((s) => /^adm-c\d$/.test(s.clientName));
      assert.deepEqual(
        ours.map((s) => [s.clientName, s.node, s.connected, s.subscriptions.map((sub: { topicFilter: string }) => sub.topicFilter), s.protocolVersion]),
        [['adm-c1', 'node1', true, ['adm/1/#'], 5], ['adm-c2', 'node2', true, ['adm/2/#'], 5], ['adm-c3', 'node3', true, ['adm/3/#'], 5]],
        `describeMqSessions on ${node.name}`,
      );
      assert.deepEqual(result.nodes.map((part: { node: string; answered: boolean }) => [part.node, part.answered]).sort(),
        [['node1', true], ['node2', true], ['node3', true]], `the nodes' parts on ${node.name}`);
    }
    // Named: node3's MQTT session described through node1 (it used to answer NODE_BOUND).
    const named = await action(cluster().nodes[0], 'describeMqSessions', { clientNames: ['adm-c3'] });
    assert.deepEqual(named.sessions.map((s: Record<string, any>) => [s.clientName, s.node, s.connected, s.protocolVersion, s.subscriptions.length]), [['adm-c3', 'node3', true, 5, 1]]);
  });

  it('getMqOverview on each node counts the clients of every node, with each node\'s own figures, and so does the explorer\'s overview history', async function () {
    for (const node of cluster().nodes) {
      const overview = await action(node, 'getMqOverview', {});
      const parts = overview.nodes as Array<{ node: string; answered: boolean; clientsConnected: number; subscriptions: number }>;
      assert.deepEqual(parts.map((part) => [part.node, part.answered]).sort(), [['node1', true], ['node2', true], ['node3', true]], `the nodes' parts on ${node.name}`);
      assert.equal(parts[0].node, node.name, 'the node asked comes first');
      // Every node holds one of the suite's clients at least (node3 two): the totals are the nodes' sums.
      for (const part of parts) assert.ok(part.clientsConnected >= (part.node === 'node3' ? 2 : 1), JSON.stringify(parts));
      assert.equal(overview.clientsConnected, parts.reduce((sum, part) => sum + part.clientsConnected, 0), JSON.stringify(overview));
      assert.equal(overview.subscriptions, parts.reduce((sum, part) => sum + part.subscriptions, 0), JSON.stringify(overview));
      assert.ok(overview.clientsConnected >= 4, JSON.stringify(overview));
      // The explorer's overview history (mq.totals) counts the cluster's clients too: the suite's
      // four, where any one node holds two of them at most.
      const login = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      const history = await call('GET', `${node.http}/apps/explorer/overview-history`, { auth: null, headers: { authorization: `Bearer ${login.json.result.authToken}` } });
      assert.equal(history.status, 200, history.text);
      const latest = history.json.samples.at(-1);
      assert.ok(latest.clientsConnected >= 4, `the overview history's last sample on ${node.name}: ${JSON.stringify(latest)}`);
    }
  });

  it('an account without the rights gets, through node1, the answers node3 gives for node3\'s sessions (as on one node)', async function () {
    const [node1, , node3] = cluster().nodes;
    for (const [who, name, params] of [
      [READER, 'disconnectMqClient', { clientName: 'adm-c3' }],
      [NO_ROLE, 'disconnectMqClient', { clientName: 'adm-c3' }],
      [READER, 'describeMqSessions', { clientNames: ['adm-c3'] }],
      [NO_ROLE, 'describeMqSessions', { clientNames: ['adm-c3'] }],
    ] as const) {
      const there = await answerOf(node3, who.username, who.password, name, params);
      const here = await answerOf(node1, who.username, who.password, name, params);
      assert.ok((there.errorCode ?? 0) !== 0, `${who.username} ${name} on node3: ${JSON.stringify(there)}`);
      assert.deepEqual([here.errorCode, here.errorMessage], [there.errorCode, there.errorMessage], `${who.username} ${name} through node1`);
    }
    // Described without names and counted for deletion, the reader has its own session only, on every node.
    for (const node of cluster().nodes) {
      const described = await action(node, 'describeMqSessions', {}, 'mq', READER.username, READER.password);
      assert.deepEqual(described.sessions.map((s: Record<string, any>) => [s.clientName, s.node]), [['adm-reader-own', 'node3']], `the reader's describe on ${node.name}`);
      const counted = await action(node, 'deleteMqSessions', { disconnectedOnly: false, dryRun: true }, 'mq', READER.username, READER.password);
      assert.deepEqual(counted.clientNames, ['adm-reader-own'], `the reader's count on ${node.name}`);
    }
    // The admin's client on node3 is still connected.
    assert.equal(clients[2].connected, true);
  });

  it('disconnectMqClient on node1 closes a client connected to node3 (MQTT 5: DISCONNECT 0x98); its session stays', async function () {
    const [node1, , node3] = cluster().nodes;
    const client = await connect(node3.mqtt, { clientId: 'adm-kick3', protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 3600 } });
    await barrier(node3, node1, 'adm-kick-claim');
    const heard = new Promise<number | undefined>((resolve) => client.once('disconnect', (packet) => resolve(packet.reasonCode)));
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    const result = await action(node1, 'disconnectMqClient', { clientName: 'adm-kick3' });
    assert.deepEqual(result, { clientName: 'adm-kick3', disconnected: true });
    assert.equal(await heard, 0x98);
    await closed;
    // Kept as its expiry says: listed, not connected, on node3.
    await barrier(node3, node1, 'adm-kick-stored');
    const listed = await action(node1, 'listMqSessions', { filter: 'adm-kick3' });
    assert.deepEqual(listed.sessions.map((s: Record<string, any>) => [s.clientName, s.connected, s.node]), [['adm-kick3', false, 'node3']]);
    // A client no node serves: MQ_SESSION_NOT_FOUND, as on one node.
    assert.equal((await answerOf(node1, 'admin', 'ADMIN', 'disconnectMqClient', { clientName: 'adm-kick3' })).errorCode, 14237);
  });

  it('deleteMqSessions on node1, as the explorer\'s "Remove disconnected sessions" sends it, ends a disconnected kept session node3 holds: gone from every node\'s listing, and a reconnect finds no session', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const kept = await connect(node3.mqtt, { clientId: 'adm-kept3', clean: false });
    await kept.subscribeAsync('adm/kept/#', { qos: 1 });
    await endAndClosed(kept);
    await barrier(node3, node1, 'adm-kept-stored');
    const counted = await action(node1, 'deleteMqSessions', { disconnectedOnly: true, dryRun: true });
    assert.ok(counted.clientNames.includes('adm-kept3'), JSON.stringify(counted));
    assert.ok(!counted.clientNames.includes('adm-c3'), 'a connected client is not counted');
    const deleted = await action(node1, 'deleteMqSessions', { disconnectedOnly: true });
    assert.ok(deleted.clientNames.includes('adm-kept3'), JSON.stringify(deleted));
    assert.deepEqual(deleted.nodes.map((part: { node: string; answered: boolean }) => [part.node, part.answered]).sort(), [['node1', true], ['node2', true], ['node3', true]]);
    // node3's removal and release are in the stream before a message it publishes after them.
    await barrier(node3, node1, 'adm-kept-gone-1');
    await barrier(node3, node2, 'adm-kept-gone-2');
    for (const node of cluster().nodes) {
      const listed = await action(node, 'listMqSessions', { filter: 'adm-kept3' });
      assert.deepEqual(listed.sessions, [], `listMqSessions on ${node.name}`);
    }
    const { client: again, sessionPresent } = await connectForConnack(node2.mqtt, { clientId: 'adm-kept3', clean: false });
    await again.endAsync(true);
    assert.equal(sessionPresent, false, 'the reconnect found a session');
  });

  it('deleteMqSession on node1 ends a kept MQTT session node2 holds: its connected client hears DISCONNECT 0x8E (as on one node), and a reconnect finds no session', async function () {
    const [node1, node2] = cluster().nodes;
    const client = await connect(node2.mqtt, { clientId: 'adm-del2', protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 3600 } });
    await client.subscribeAsync('adm/del/#', { qos: 1 });
    await barrier(node2, node1, 'adm-del-claim');
    const heard = new Promise<number | undefined>((resolve) => client.once('disconnect', (packet) => resolve(packet.reasonCode)));
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await action(node1, 'deleteMqSession', { clientName: 'adm-del2' });
    assert.equal(await heard, 0x8e);
    await closed;
    await barrier(node2, node1, 'adm-del-gone');
    assert.deepEqual((await action(node1, 'listMqSessions', { filter: 'adm-del2' })).sessions, []);
    const { client: again, sessionPresent } = await connectForConnack(node2.mqtt, { clientId: 'adm-del2', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 60 } });
    await again.endAsync(true);
    assert.equal(sessionPresent, false, 'the reconnect found a session');
    // The reader may not end another account's session through another node either: 14237, as on one node.
    const refused = await answerOf(node1, READER.username, READER.password, 'deleteMqSession', { clientName: 'adm-c2' });
    assert.equal(refused.errorCode, 14237, JSON.stringify(refused));
    assert.equal(clients[1].connected, true);
  });

  it('with node3 killed (SIGKILL), deleteMqSessions on node1 adopts and ends its disconnected kept session before any lease lapses: gone from the listings, and a reconnect finds no session', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const kept = await connect(node3.mqtt, { clientId: 'adm-dead3', clean: false });
    await kept.subscribeAsync('adm/dead/#', { qos: 1 });
    await endAndClosed(kept);
    await barrier(node3, node1, 'adm-dead-stored');
    const before = await action(node1, 'listMqSessions', { filter: 'adm-dead3' });
    assert.deepEqual(before.sessions.map((s: Record<string, any>) => [s.clientName, s.connected, s.node]), [['adm-dead3', false, 'node3']]);
    await node3.stop('SIGKILL');
    // Until NATS has dropped node3's subscription everywhere, a request to it waits out the
    // timeout instead: counted (dryRun) until node1 finds nobody listening for node3 (each round
    // bounded by cluster_request_timeout_ms, the whole by the test's timeout).
    for (;;) {
      const counted = await action(node1, 'deleteMqSessions', { disconnectedOnly: true, dryRun: true });
      const part = counted.nodes.find((entry: { node: string }) => entry.node === 'node3');
      // (Left out: node3's lease lapsed and node1 adopted its sessions already; node1 counts them as its own.)
      if (part === undefined || /nobody answers/.test(part.reason)) {
        assert.ok(counted.clientNames.includes('adm-dead3'), JSON.stringify(counted));
        break;
      }
    }
    const deleted = await action(node1, 'deleteMqSessions', { disconnectedOnly: true });
    assert.ok(deleted.clientNames.includes('adm-dead3'), JSON.stringify(deleted));
    await barrier(node1, node2, 'adm-adopted-gone');
    for (const node of [node1, node2]) {
      const listed = await action(node, 'listMqSessions', { filter: 'adm-dead3' });
      assert.deepEqual(listed.sessions, [], `listMqSessions on ${node.name}`);
    }
    const { client: again, sessionPresent } = await connectForConnack(node2.mqtt, { clientId: 'adm-dead3', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 60 } });
    await again.endAsync(true);
    assert.equal(sessionPresent, false, 'the reconnect found a session');
  });

  // Last: node2 may fence itself once resumed (paused for longer than half a lease on a loaded machine).
  it('with node2 stopped (SIGSTOP), describeMqSessions without names and getMqOverview on node1 answer, node2 marked as not answering; disconnectMqClient of its client answers 12062', async function () {
    const [node1, node2] = cluster().nodes;
    const child = node2.process!.child;
    child.kill('SIGSTOP');
    let described: any;
    let overview: any;
    let disconnect: Answer;
    try {
      [described, overview, disconnect] = await Promise.all([
        action(node1, 'describeMqSessions', {}),
        action(node1, 'getMqOverview', {}),
        answerOf(node1, 'admin', 'ADMIN', 'disconnectMqClient', { clientName: 'adm-c2' }),
      ]);
    } finally {
      child.kill('SIGCONT');
    }
    // NODE_UNREACHABLE: what happened on node2 is not known (it may act on the request once resumed).
    assert.equal(disconnect.errorCode, 12062, JSON.stringify(disconnect));
    assert.match(disconnect.errorMessage!, /node "node2", which holds the MQTT connection, did not answer \(no answer within/);
    // node3 (killed before) is marked too while it owns sessions, or left out once they were adopted.
    const result1 = (result: any): [string, boolean] => [result.nodes[0].node, result.nodes[0].answered];
    const node2Part = (result: any): { answered: boolean; reason: string } => result.nodes.find((part: { node: string }) => part.node === 'node2');
    assert.deepEqual(result1(described), ['node1', true]);
    assert.equal(node2Part(described).answered, false);
    assert.match(node2Part(described).reason, /no answer within/);
    assert.deepEqual(described.sessions.filter((s: { clientName: string }) => /^adm-c\d$/.test(s.clientName)).map((s: { clientName: string }) => s.clientName), ['adm-c1']);
    assert.deepEqual(result1(overview), ['node1', true]);
    assert.equal(node2Part(overview).answered, false, JSON.stringify(overview));
    assert.equal(overview.clientsConnected, overview.nodes.filter((part: { answered: boolean }) => part.answered).reduce((sum: number, part: { clientsConnected: number }) => sum + part.clientsConnected, 0));
  });
});
