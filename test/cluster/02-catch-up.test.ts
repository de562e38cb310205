/**
 * Catch-up (plugins/cluster-nats/stream-applier.ts, docs/cluster.md): a node stopped while the
 * others take 10,000 messages applies them from the stream when it restarts, before it opens its
 * listeners; killed (SIGKILL) three times while catching up, it still converges, since each
 * record's position is committed with its effects.
 */
import assert from 'node:assert/strict';
import { connect, end } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';
import { converged, digestFolder } from '../helpers/cluster-digest';
import { call } from '../helpers/server';

async function publishMany(url: string, topic: string, from: number, count: number): Promise<void> {
  const client = await connect(url, { clientId: `pub-${topic.replace(/\W/g, '-')}-${from}` });
  const sends: Array<Promise<unknown>> = [];
  for (let n = from; n < from + count; n++) sends.push(client.publishAsync(topic, String(n), { qos: 1 }));
  await Promise.all(sends);
  await end(client);
}

/** The newest message of a topic, read through a node's REST (its integration table). */
async function newestPayload(http: string, table: string): Promise<unknown> {
  const r = await call('POST', `${http}/engine/api/v1/query/main/${table}/id_pk?top=1`, { body: { find: { id: { operator: '>=', value: 1 } }, reverse: true } });
  assert.equal(r.status, 200, r.text);
  return (r.json as { _records: Array<{ source_payload: unknown }> })._records[0]?.source_payload;
}

describe('cluster: a restarted node catches up from the stream', function () {
  this.timeout(300_000);
  const cluster = clusterForSuite();

  it('a node stopped for 10,000 messages has applied them all when its listeners open, and holds what the others hold', async function () {
    const [a, b, c] = cluster().nodes;
    await publishMany(a.mqtt, 'catchup/one', 0, 100);
    await c.stop('SIGTERM');
    await Promise.all([publishMany(a.mqtt, 'catchup/one', 100, 5000), publishMany(b.mqtt, 'catchup/two', 0, 5000)]);
    await c.start();
    // The node applied the tail it saw at start before any listener opened.
    const logs = c.process!.logs();
    const at = (msg: string): number => logs.findIndex((line) => line.msg === msg);
    const { tail, applied } = logs[at('cluster: catching up with the stream')] as { tail: number; applied: number };
    assert.ok(tail > applied, `records were written while the node was stopped (applied ${applied}, tail ${tail})`);
    assert.ok((logs[at('cluster: caught up')].applied as number) >= tail);
    assert.ok(at('cluster: caught up') < at('listening'));
    // Read at once: what it serves includes every message published while it was stopped.
    assert.equal(await newestPayload(c.http, 'mqtt_msg_catchup_one'), 5099);
    assert.equal(await newestPayload(c.http, 'mqtt_msg_catchup_two'), 4999);
  });

  it('killed three times while catching up, a node still converges with the others', async function () {
    const [a, b, c] = cluster().nodes;
    await c.stop('SIGTERM');
    await Promise.all([publishMany(a.mqtt, 'catchup/three', 0, 5000), publishMany(b.mqtt, 'catchup/three', 5000, 5000)]);
    for (let kill = 0; kill < 3; kill++) {
      const starting = c.start();
      starting.catch(() => undefined);
      await c.process!.logged((line) => line.msg === 'cluster: catching up with the stream');
      await c.stop('SIGKILL');
    }
    await c.start();
    assert.equal(typeof await newestPayload(c.http, 'mqtt_msg_catchup_three'), 'number');

    // A marker published last: a node that delivers it has applied everything before it.
    const subscribers = await Promise.all(cluster().nodes.map((node, i) => connect(node.mqtt, { clientId: `marker-${i}` })));
    const markers = subscribers.map((s) => new Promise<void>((resolve) => s.on('message', () => resolve())));
    await Promise.all(subscribers.map((s) => s.subscribeAsync('marker', { qos: 1 })));
    await publishMany(a.mqtt, 'marker', 0, 1);
    await Promise.all(markers);
    await Promise.all(subscribers.map(end));
    // Their claims are released as their sessions end: applied on every node before they stop.
    await converged(cluster().nodes, 'catchup');
    await Promise.all(cluster().nodes.map((node) => node.stop('SIGTERM')));
    const digests = [];
    for (const node of cluster().nodes) digests.push(await digestFolder(node.dataDir));
    for (let i = 1; i < digests.length; i++) {
      for (const part of ['tables', 'topics', 'state', 'internal'] as const) {
        assert.deepEqual(digests[i][part], digests[0][part], `${cluster().nodes[i].name}'s ${part} equal ${cluster().nodes[0].name}'s`);
      }
    }
  });
});
