/**
 * What spans the nodes of a cluster (docs/cluster.md, "Shared subscriptions", "`$SYS`" and
 * "Node-bound state"): a shared subscription group with members on three nodes gets each message
 * exactly once across the cluster; the cluster-wide `$SYS/cluster/...` figures reach a subscriber
 * on any node; a transaction, cursor or action session opened on one node, used on another,
 * answers NODE_BOUND (12061) naming the node it lives on.
 */
import assert from 'node:assert/strict';
import { connect, received } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';
import { call } from '../helpers/server';

describe('cluster: shared subscriptions, $SYS and node-bound state across nodes', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();

  it('a $share group with members on three nodes gets each of 600 QoS 1 messages exactly once across the cluster, every member gets some, and once one leaves the other two share the next 300 once each', async function () {
    const members = await Promise.all(cluster().nodes.map((node, i) => connect(node.mqtt, { clientId: `share-member-${i}` })));
    const got: string[][] = members.map(() => []);
    members.forEach((client, i) => client.on('message', (topic, payload) => {
      if (topic === 'shared/t') got[i].push(payload.toString());
    }));
    for (const client of members) {
      await client.subscribeAsync('$share/workers/shared/#', { qos: 1 });
      await client.subscribeAsync('barrier/#', { qos: 1 });
    }
    // Each node announces its members in the stream after the SUBACK; a barrier each member
    // publishes after its SUBACK comes after that announcement in the stream. Once every member
    // has received the three barriers, every node has applied every node's membership.
    const barriers = members.map((client) => Promise.all(members.map((_, j) => received(client, `barrier/${j}`))));
    await Promise.all(members.map((client, j) => client.publishAsync(`barrier/${j}`, 'x', { qos: 1 })));
    await Promise.all(barriers);

    const TOTAL = 600;
    const publisher = await connect(cluster().nodes[0].mqtt, { clientId: 'share-pub' });
    const sends: Array<Promise<unknown>> = [];
    for (let n = 0; n < TOTAL; n++) sends.push(publisher.publishAsync('shared/t', String(n), { qos: 1 }));
    await Promise.all(sends);
    // A trailing barrier: each node delivers in log order, so once every member has it, every copy
    // of the 600 any node was going to deliver has been delivered.
    const end = members.map((client) => received(client, 'barrier/end'));
    await publisher.publishAsync('barrier/end', 'x', { qos: 1 });
    await Promise.all(end);

    const all = got.flat();
    const counts = new Map<string, number>();
    for (const payload of all) counts.set(payload, (counts.get(payload) ?? 0) + 1);
    const twice = [...counts].filter(([, count]) => count > 1).map(([payload]) => payload);
    assert.deepEqual(twice, [], 'no message delivered twice');
    assert.equal(counts.size, TOTAL, `every message delivered once (${got.map((g) => g.length).join(' + ')})`);
    for (let i = 0; i < members.length; i++) assert.ok(got[i].length > 0, `the member on ${cluster().nodes[i].name} got some`);

    // node2's only member leaves the group: its withdrawal reaches every node before the next
    // barrier, and from then on the other two members share every message, still once each.
    await members[1].unsubscribeAsync('$share/workers/shared/#');
    const again = members.map((client) => received(client, 'barrier/left'));
    await members[1].publishAsync('barrier/left', 'x', { qos: 1 });
    await Promise.all(again);
    for (const list of got) list.length = 0;
    for (let n = 0; n < 300; n++) sends.push(publisher.publishAsync('shared/t', `after-${n}`, { qos: 1 }));
    await Promise.all(sends);
    const end2 = members.map((client) => received(client, 'barrier/end2'));
    await publisher.publishAsync('barrier/end2', 'x', { qos: 1 });
    await Promise.all(end2);
    assert.deepEqual(got[1], [], 'nothing for the member that left');
    const after = [...got[0], ...got[2]];
    assert.equal(new Set(after).size, after.length, 'no message twice after the member left');
    assert.equal(after.length, 300, `every message once after the member left (${got[0].length} + ${got[2].length})`);
    await Promise.all([...members, publisher].map((client) => client.endAsync()));
  });

  it('$SYS/cluster/... on any node counts the three nodes and their clients, beside the node\'s own $SYS/broker/...', async function () {
    // One client connected to each node, then a subscriber on node3 reads the cluster's figures.
    const clients = await Promise.all(cluster().nodes.map((node, i) => connect(node.mqtt, { clientId: `sys-client-${i}` })));
    const watcher = await connect(cluster().nodes[2].mqtt, { clientId: 'sys-watcher' });
    const figures = new Map<string, string>();
    const waiting: Array<{ check: () => boolean; resolve: () => void }> = [];
    watcher.on('message', (topic, payload) => {
      figures.set(topic, payload.toString());
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i].check()) waiting.splice(i, 1)[0].resolve();
    });
    const until = (check: () => boolean): Promise<void> => (check() ? Promise.resolve() : new Promise((resolve) => waiting.push({ check, resolve })));
    await watcher.subscribeAsync(['$SYS/cluster/#', '$SYS/broker/clients/connected'], { qos: 0 });
    // Each node reports every 10 s and at start; another node's report is published at once where it is applied.
    await until(() => figures.get('$SYS/cluster/nodes') === '3'
      && cluster().nodes.every((node) => figures.get(`$SYS/cluster/node/${node.name}/clients/connected`) !== undefined));
    assert.ok(figures.has('$SYS/broker/clients/connected'), 'the node\'s own figures are still published');
    assert.ok(Number(figures.get('$SYS/cluster/messages/stored')) >= 0);
    for (const node of cluster().nodes) assert.match(figures.get(`$SYS/cluster/node/${node.name}/uptime`) ?? '', /^\d+ seconds$/);
    await Promise.all([...clients, watcher].map((client) => client.endAsync()));
  });

  it('an MQ API session is one session in the cluster: read on any node without repeats, its name in use on every node, changed and deleted from another node; another node\'s MQTT session answers 12061', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const action = async (node: typeof node1, name: string, authToken: string, params: object): Promise<{ errorCode: number; errorMessage: string; result: Record<string, unknown> }> => {
      const r = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'mq', action: name, authToken, params } });
      assert.equal(r.status, 200, r.text);
      return r.json;
    };
    const tokens = await Promise.all(cluster().nodes.map(async (node) => {
      const r = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      return r.json.result.authToken as string;
    }));
    const [token1, token2, token3] = tokens;
    const succeeded = (answer: { errorCode: number }): void => assert.equal(answer.errorCode, 0, JSON.stringify(answer));
    const read = async (node: typeof node1, token: string, maxMessages: number): Promise<string[]> => {
      const answer = await action(node, 'getMessagesFromMqApiSession', token, { clientName: 'api-reader', maxMessages });
      succeeded(answer);
      // Payloads that are not JSON come as hex.
      return (answer.result.messages as Array<{ payload: string }>).map((m) => Buffer.from(m.payload, 'hex').toString());
    };

    succeeded(await action(node1, 'createMqApiSession', token1, { clientName: 'api-reader' }));
    succeeded(await action(node1, 'subscribeToMq', token1, { clientName: 'api-reader', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'mqapi/#', qos: 1 }] }));
    // The name is taken cluster-wide: another node refuses a second session with it.
    assert.equal((await action(node3, 'createMqApiSession', token3, { clientName: 'api-reader' })).errorCode, 14221);

    const publisher = await connect(node3.mqtt, { clientId: 'mqapi-pub' });
    for (const payload of ['m0', 'm1', 'm2', 'm3']) await publisher.publishAsync('mqapi/t', payload, { qos: 1 });
    // Read on node2, then on node1, then on node3: each read goes on where the last one stopped.
    assert.deepEqual(await read(node2, token2, 2), ['m0', 'm1']);
    assert.deepEqual(await read(node1, token1, 1), ['m2']);
    assert.deepEqual(await read(node3, token3, 10), ['m3']);

    // Changed on node2, described on node1: one session.
    succeeded(await action(node2, 'subscribeToMq', token2, { clientName: 'api-reader', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'other/#', qos: 0 }] }));
    const described = await action(node1, 'describeMqSessions', token1, { clientNames: ['api-reader'] });
    succeeded(described);
    assert.match(JSON.stringify(described.result), /other\/#/);
    assert.match(JSON.stringify(described.result), /mqapi\/#/);
    // Deleted on node3: gone on every node.
    succeeded(await action(node3, 'deleteMqSession', token3, { clientName: 'api-reader' }));
    for (const [node, token] of [[node1, token1], [node2, token2]] as const) {
      assert.equal((await action(node, 'getMessagesFromMqApiSession', token, { clientName: 'api-reader' })).errorCode, 14237);
    }

    // A kept MQTT session connected to node1 stays with its connection: node2 says where it is.
    const held = await connect(node1.mqtt, { clientId: 'mqtt-held', clean: false });
    const subscribed = await action(node2, 'subscribeToMq', token2, { clientName: 'mqtt-held', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'x/#' }] });
    assert.equal(subscribed.errorCode, 12061, JSON.stringify(subscribed));
    assert.match(subscribed.errorMessage, /MQTT session was opened on node "node1".*this is node "node2"/);
    succeeded(await action(node1, 'subscribeToMq', token1, { clientName: 'mqtt-held', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'x/#' }] }));
    await Promise.all([held, publisher].map((client) => client.endAsync()));
  });

  it('a transaction, cursor, SQL cursor or action session of node1 used on node2 answers 12061 naming node1; unknown ids still answer as before', async function () {
    const [node1, node2] = cluster().nodes;
    const action = async (node: typeof node1, api: string, name: string, authToken: string | undefined, params: object = {}): Promise<{ errorCode: number; errorMessage: string; result: Record<string, unknown> }> => {
      const r = await call('POST', `${node.http}/api`, { auth: null, body: { api, action: name, authToken, params } });
      assert.equal(r.status, 200, r.text);
      return r.json;
    };
    const login = async (node: typeof node1): Promise<string> => (await action(node, 'admin', 'createSession', undefined, { username: 'admin', password: 'ADMIN' })).result.authToken as string;
    const token1 = await login(node1);
    const token2 = await login(node2);
    assert.equal((await call('POST', `${node1.http}/engine/api/v1/table/main/bound`, { body: { fields: [{ name: 'v', type: 'integer' }] } })).status, 200);
    assert.equal((await call('POST', `${node1.http}/engine/api/v1/record/main/bound`, { body: { v: 1 } })).status, 200);

    const boundToNode1 = (answer: { errorCode: number; errorMessage: string }, what: string): void => {
      assert.equal(answer.errorCode, 12061, JSON.stringify(answer));
      assert.match(answer.errorMessage, new RegExp(`${what} was opened on node "node1".*this is node "node2"`));
    };
    // The action session (its authToken) of node1, on node2.
    boundToNode1(await action(node2, 'db', 'createTransaction', token1), 'action session');
    const rest = await call('GET', `${node2.http}/engine/api/v1/table/main`, { auth: null, headers: { authorization: `Bearer ${token1}` } });
    assert.equal(rest.status, 421, rest.text);
    boundToNode1(rest.json, 'action session');
    // A transaction of node1, on node2 (with node2's own session).
    const { transactionId } = (await action(node1, 'db', 'createTransaction', token1)).result as { transactionId: string };
    assert.match(transactionId, /^node1\./);
    boundToNode1(await action(node2, 'db', 'commitTransaction', token2, { transactionId }), 'transaction');
    boundToNode1(await action(node2, 'db', 'getRecordsByTable', token2, { tableName: 'bound', transactionId }), 'transaction');
    // A cursor of node1, on node2.
    const opened = await action(node1, 'db', 'getRecordsByTable', token1, { tableName: 'bound', returnCursor: true });
    const cursorId = opened.result.cursorId as string;
    assert.match(cursorId, /^node1\./, JSON.stringify(opened));
    boundToNode1(await action(node2, 'db', 'getRecordsFromCursor', token2, { cursorId }), 'cursor');
    // A SQL cursor of node1 (its id `sql-node1.…`), on node2: fetched and closed.
    const sqlOpened = await action(node1, 'db', 'getRecordsUsingSql', token1, { sql: 'SELECT v FROM bound', returnCursor: true });
    const sqlCursorId = sqlOpened.result.cursorId as string;
    assert.match(sqlCursorId, /^sql-node1\./, JSON.stringify(sqlOpened));
    boundToNode1(await action(node2, 'db', 'getRecordsFromCursor', token2, { cursorId: sqlCursorId }), 'SQL cursor');
    boundToNode1(await action(node2, 'db', 'closeCursor', token2, { cursorId: sqlCursorId }), 'SQL cursor');
    assert.equal((await action(node1, 'db', 'getRecordsFromCursor', token1, { cursorId: sqlCursorId })).errorCode, 0);
    assert.equal((await action(node2, 'db', 'getRecordsFromCursor', token2, { cursorId: 'sql-node2.unknown' })).errorCode, 4080);
    assert.equal((await action(node2, 'db', 'getRecordsFromCursor', token2, { cursorId: 'sql-unknown' })).errorCode, 4080);
    // They still work on node1; ids no node made answer as they always did.
    assert.equal((await action(node1, 'db', 'getRecordsFromCursor', token1, { cursorId })).errorCode, 0);
    assert.equal((await action(node1, 'db', 'commitTransaction', token1, { transactionId })).errorCode, 0);
    assert.equal((await action(node2, 'db', 'getRecordsFromCursor', token2, { cursorId: 'node2.unknown' })).errorCode, 4080);
    assert.equal((await action(node2, 'db', 'getRecordsFromCursor', token2, { cursorId: 'unknown' })).errorCode, 4080);
    assert.equal((await action(node2, 'db', 'createTransaction', 'node2.unknown')).errorCode, 12031);
  });
});
