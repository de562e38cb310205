/**
 * Several nodes as one server (plugins/cluster-nats, docs/cluster.md): three nats-servers and
 * three engine processes on loopback. Messages published on any node reach subscribers on every
 * node, in order per publisher; retained messages are cluster-wide; REST inserts racing for one
 * unique key get the same winner on every node; and once the traffic is over, every node holds
 * the same tables, indexes, topics, shared state and internal stores.
 */
import assert from 'node:assert/strict';
import { connect, end } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';
import { converged, digestFolder } from '../helpers/cluster-digest';
import { call } from '../helpers/server';

describe('cluster: replication through the stream', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();

  it('3 publishers, one per node, 2,000 QoS 1 messages each: a subscriber on one node gets exactly 6,000, in order per publisher', async function () {
    const [a, b, c] = cluster().nodes;
    const subscriber = await connect(b.mqtt, { clientId: 'fan-sub', clean: true });
    await subscriber.subscribeAsync('fan/#', { qos: 1 });
    const PER = 2000;
    const next = new Map<string, number>();
    let total = 0;
    const outOfOrder: string[] = [];
    const all = new Promise<void>((resolve) => {
      subscriber.on('message', (topic, payload) => {
        const n = Number(payload.toString());
        const expected = next.get(topic) ?? 0;
        if (n !== expected) outOfOrder.push(`${topic}: ${n} after ${expected - 1}`);
        next.set(topic, n + 1);
        if (++total === 3 * PER) resolve();
      });
    });
    const publishers = await Promise.all([a, b, c].map((node, i) => connect(node.mqtt, { clientId: `fan-pub-${i}` })));
    await Promise.all(publishers.map(async (client, i) => {
      const sends: Array<Promise<unknown>> = [];
      for (let n = 0; n < PER; n++) sends.push(client.publishAsync(`fan/p${i}`, String(n), { qos: 1 }));
      await Promise.all(sends);
    }));
    await all;
    assert.deepEqual(outOfOrder, []);
    assert.equal(total, 3 * PER);
    assert.deepEqual([...next.entries()].sort(), [['fan/p0', PER], ['fan/p1', PER], ['fan/p2', PER]]);
    await Promise.all([...publishers, subscriber].map(end));
  });

  it('a message retained on one node is sent to a new subscriber on another node', async function () {
    const [a, , c] = cluster().nodes;
    const publisher = await connect(a.mqtt, { clientId: 'retain-pub' });
    // Another node applies a write a moment after the writing node acknowledged it: a message
    // published after the retained one, delivered on that node, says it has applied both.
    const watcher = await connect(c.mqtt, { clientId: 'retain-watch' });
    await watcher.subscribeAsync('sync/retained', { qos: 1 });
    const applied = new Promise<void>((resolve) => watcher.once('message', () => resolve()));
    await publisher.publishAsync('retained/one', 'kept', { qos: 1, retain: true });
    await publisher.publishAsync('sync/retained', 'after', { qos: 1 });
    await applied;
    await end(watcher);
    const subscriber = await connect(c.mqtt, { clientId: 'retain-sub' });
    const got = new Promise<[string, string, boolean]>((resolve) => {
      subscriber.once('message', (topic, payload, packet) => resolve([topic, payload.toString(), packet.retain]));
    });
    await subscriber.subscribeAsync('retained/#', { qos: 1 });
    assert.deepEqual(await got, ['retained/one', 'kept', true]);
    await Promise.all([publisher, subscriber].map(end));
  });

  it('a table and a record written through one node are found at once through a node that has not applied them yet (it catches up, then answers)', async function () {
    const [a, b] = cluster().nodes;
    const child = b.process!.child;
    const answers: Array<[string, number, string]> = [];
    for (let round = 0; round < 5; round++) {
      const table = `lagging${round}`;
      // b is stopped, so it cannot have applied what a writes; the requests to it wait in its
      // sockets beside the stream's records, and it handles them in whatever order it reads them.
      child.kill('SIGSTOP');
      try {
        const created = await call('POST', `${a.http}/engine/api/v1/table/main/${table}`, { body: { fields: [{ name: 'k', type: 'varchar', length: 20 }] } });
        assert.equal(created.status, 200, created.text);
        const inserted = await call('POST', `${a.http}/engine/api/v1/record/main/${table}`, { body: { k: `r${round}` } });
        assert.equal(inserted.status, 200, inserted.text);
        const id = (inserted.json as { _ids: number[] })._ids[0];
        const index = call('POST', `${b.http}/engine/api/v1/index/main/${table}/by_k`, { body: { fields: [{ name: 'k' }] } });
        const record = call('GET', `${b.http}/engine/api/v1/record/main/${table}/${id}`);
        child.kill('SIGCONT');
        for (const [what, answer] of [['index', await index], ['record', await record]] as const) answers.push([`${table} ${what}`, answer.status, answer.text]);
      } finally {
        child.kill('SIGCONT');
      }
    }
    assert.deepEqual(answers.filter(([, status]) => status !== 200), []);
    assert.deepEqual(answers.filter(([what]) => what.endsWith('record')).map(([, , text]) => JSON.parse(text).k), ['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('REST inserts racing for unique keys on three nodes: one winner per key, the same on every node, and every node holds the same tables, indexes, topics and state', async function () {
    const nodes = cluster().nodes;
    const B = (i: number): string => `${nodes[i].http}/engine/api/v1`;
    assert.equal((await call('POST', `${B(0)}/table/main/claims`, { body: { fields: [{ name: 'k', type: 'varchar', length: 20 }, { name: 'node', type: 'varchar', length: 20 }] } })).status, 200);
    const index = await call('POST', `${B(1)}/index/main/claims/by_k`, { body: { fields: [{ name: 'k' }], unique: true } });
    assert.equal(index.status, 200, index.text);
    const KEYS = 40;
    const answers: Array<{ key: string; node: string; status: number; errorCode?: number }> = [];
    await Promise.all(nodes.map(async (node, i) => {
      // Every node inserts every key, each in its own order, all at once.
      await Promise.all(Array.from({ length: KEYS }, async (_, j) => {
        const key = `k${(j * (i + 1)) % KEYS}`;
        const r = await call('POST', `${B(i)}/record/main/claims`, { body: { k: key, node: node.name } });
        answers.push({ key, node: node.name, status: r.status, errorCode: r.json?.errorCode });
      }));
    }));
    const winners = new Map<string, string>();
    // Keys told 200 more than once: asserted after the stores are compared, so that a failure
    // also says whether the nodes' stores disagree (with every answer for the key, in order).
    const doubleWinners: string[] = [];
    for (const answer of answers) {
      if (answer.status === 200) {
        if (winners.has(answer.key)) doubleWinners.push(`${answer.key}: ${JSON.stringify(answers.filter((a) => a.key === answer.key))}`);
        winners.set(answer.key, answer.node);
      } else {
        assert.deepEqual([answer.status, answer.errorCode], [400, 2], `a loser of ${answer.key} is told DUPLICATE_KEY`);
      }
    }

    // A marker published last: a node that delivers it has applied everything before it.
    const subscribers = await Promise.all(nodes.map((node, i) => connect(node.mqtt, { clientId: `marker-${i}` })));
    const markers = subscribers.map((s) => new Promise<void>((resolve) => s.on('message', (topic) => { if (topic === 'marker') resolve(); })));
    await Promise.all(subscribers.map((s) => s.subscribeAsync('marker', { qos: 1 })));
    const publisher = await connect(nodes[2].mqtt, { clientId: 'marker-pub' });
    await publisher.publishAsync('marker', 'end', { qos: 1 });
    await Promise.all(markers);
    await Promise.all([publisher, ...subscribers].map(end));
    // Their claims are released as their sessions end: applied on every node before they stop.
    await converged(nodes, 'replication');

    await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
    const digests = [];
    for (const node of nodes) digests.push(await digestFolder(node.dataDir));
    for (let i = 1; i < digests.length; i++) {
      // (Not the position: records written while the nodes stop may reach some nodes only.)
      for (const part of ['tables', 'topics', 'state', 'internal'] as const) {
        assert.deepEqual(digests[i][part], digests[0][part], `${nodes[i].name}'s ${part} equal ${nodes[0].name}'s${doubleWinners.length > 0 ? `; keys with two winners: ${doubleWinners.join('; ')}` : ''}`);
      }
    }
    assert.deepEqual(doubleWinners, [], 'one winner per key (the stores agree)');
    assert.equal(winners.size, KEYS);
    // The winner stored is the node that was told 200, on every node.
    const stored = new Map((digests[0].rows['main.claims'] as Array<{ id: number; values: [string, string] }>).map((r) => [r.values[0], r.values[1]]));
    assert.deepEqual(new Map([...stored].sort()), new Map([...winners].sort()));
  });
});
