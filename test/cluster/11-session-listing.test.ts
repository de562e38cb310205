/**
 * The listings of sessions in a cluster (docs/cluster.md, "Listing sessions"): listMqSessions and
 * listMqSubscriptions list every session of the logical server on every node, each with the node
 * that owns it (the stored sessions and the claims the stream replicates), with the same
 * authorization as on one node: an account without `mq.takeover` sees its own sessions only.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { barrier, connect, received } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';
import { call } from '../helpers/server';

interface Listed {
  clientName: string;
  kind: string;
  owner: string;
  connected: boolean;
  subscriptionCount: number | null;
  node?: string | null;
}

/** An action on a node, as `username` (Basic credentials through an action session's token). */
async function action(node: EngineNode, username: string, password: string, name: string, params: object, api = 'mq'): Promise<any> {
  const login = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username, password } } });
  assert.equal(login.json.errorCode ?? 0, 0, login.text);
  const answer = await call('POST', `${node.http}/api`, { auth: null, body: { api, action: name, authToken: login.json.result.authToken, params } });
  assert.equal(answer.json.errorCode ?? 0, 0, answer.text);
  return answer.json.result;
}

/** Each client publishes a barrier after what it did; once every client has every barrier, every node has applied what came before. */
async function barrierAll(clients: MqttClient[], name: string): Promise<void> {
  const arrived = clients.map((client) => Promise.all(clients.map((_, j) => received(client, `listbar/${name}-${j}`))));
  await Promise.all(clients.map((client, j) => client.publishAsync(`listbar/${name}-${j}`, 'x', { qos: 1 })));
  await Promise.all(arrived);
}

/**
 * Ends the client with a DISCONNECT and resolves once its socket is closed, which the server does
 * as it ends the session (endAsync resolves when the DISCONNECT is written, before the server read it).
 */
function endAndClosed(client: MqttClient): Promise<void> {
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  client.end();
  return closed;
}

describe('cluster: sessions listed cluster-wide', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();

  it('MQTT sessions (kept and clean, connected or not) and an MQ API session on three nodes are listed whole by listMqSessions and listMqSubscriptions on each node, each with the node that owns it; a reader account sees only its own session', async function () {
    const [node1, node2, node3] = cluster().nodes;
    // The reader's account, created through node1, is on node2 and node3 once they have applied
    // what node1 wrote before a barrier message they deliver.
    await action(node1, 'admin', 'ADMIN', 'createAccount', { username: 'lister', password: 'lister-password-1', roles: ['reader'] }, 'admin');
    await barrier(node1, node2, 'account-on-node2');
    await barrier(node1, node3, 'account-on-node3');
    // One watcher per node for the barriers (their names are not listed below).
    const watchers = await Promise.all(cluster().nodes.map((node, i) => connect(node.mqtt, { clientId: `watch-${i}` })));
    for (const watcher of watchers) await watcher.subscribeAsync('listbar/#', { qos: 1 });

    // node1: a kept session, connected, with a subscription; a clean one.
    const kept1 = await connect(node1.mqtt, { clientId: 'list-kept1', clean: false });
    await kept1.subscribeAsync('list/kept/#', { qos: 1 });
    const clean1 = await connect(node1.mqtt, { clientId: 'list-clean1' });
    // node2: a kept session, subscribed, then disconnected; the reader's clean session.
    const off2 = await connect(node2.mqtt, { clientId: 'list-off2', clean: false });
    await off2.subscribeAsync('list/off/#', { qos: 0 });
    await endAndClosed(off2);
    const clean2 = await connect(node2.mqtt, { clientId: 'list-clean2', username: 'lister', password: 'lister-password-1' });
    // node3: an MQ API session with a subscription; a clean MQTT session.
    await action(node3, 'admin', 'ADMIN', 'createMqApiSession', { clientName: 'list-api3' });
    await action(node3, 'admin', 'ADMIN', 'subscribeToMq', { clientName: 'list-api3', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'list/api/#', qos: 1 }] });
    const clean3 = await connect(node3.mqtt, { clientId: 'list-clean3' });
    await barrierAll(watchers, 'set');

    const expected = [
      { clientName: 'list-api3', kind: 'mqApi', owner: 'admin', connected: false, node: 'node3' },
      { clientName: 'list-clean1', kind: 'mqtt', owner: 'admin', connected: true, node: 'node1' },
      { clientName: 'list-clean2', kind: 'mqtt', owner: 'lister', connected: true, node: 'node2' },
      { clientName: 'list-clean3', kind: 'mqtt', owner: 'admin', connected: true, node: 'node3' },
      { clientName: 'list-kept1', kind: 'mqtt', owner: 'admin', connected: true, node: 'node1' },
      { clientName: 'list-off2', kind: 'mqtt', owner: 'admin', connected: false, node: 'node2' },
    ];
    // A clean session's subscriptions are in its node's memory only: counted there, null elsewhere.
    const subscriptionCount = (name: string, asked: string): number | null => {
      if (name === 'list-api3' || name === 'list-kept1' || name === 'list-off2') return 1;
      return expected.find((e) => e.clientName === name)!.node === asked ? 0 : null;
    };
    for (const node of cluster().nodes) {
      const page = await action(node, 'admin', 'ADMIN', 'listMqSessions', { filter: 'list-' });
      const sessions = page.sessions as Listed[];
      assert.deepEqual(sessions.map((s) => ({ clientName: s.clientName, kind: s.kind, owner: s.owner, connected: s.connected, node: s.node })), expected, `listMqSessions on ${node.name}`);
      assert.deepEqual(sessions.map((s) => s.subscriptionCount), expected.map((e) => subscriptionCount(e.clientName, node.name)), `subscription counts on ${node.name}`);
      assert.equal(page.total, expected.length);
      const subscriptions = await action(node, 'admin', 'ADMIN', 'listMqSubscriptions', { filter: 'list/' });
      assert.deepEqual(
        (subscriptions.subscriptions as Array<Record<string, unknown>>).map((s) => [s.clientName, s.topicFilter, s.connected, s.node]),
        [['list-api3', 'list/api/#', false, 'node3'], ['list-kept1', 'list/kept/#', true, 'node1'], ['list-off2', 'list/off/#', false, 'node2']],
        `listMqSubscriptions on ${node.name}`,
      );
      // The reader (no mq.takeover) sees its own session only, on every node, as on one node.
      const own = await action(node, 'lister', 'lister-password-1', 'listMqSessions', { filter: 'list-' });
      assert.deepEqual((own.sessions as Listed[]).map((s) => [s.clientName, s.node]), [['list-clean2', 'node2']], `the reader's list on ${node.name}`);
    }

    await Promise.all([kept1, clean1, clean2, clean3, ...watchers].map((client) => client.endAsync()));
  });
});
