/**
 * MQ API sessions asked for on several nodes at once (docs/cluster.md, "MQ API sessions"): one
 * client name has one session in the cluster even when two nodes are asked to create it at the
 * same moment, and a session read at the same moment on two nodes (holding it or not) hands each
 * message to one read only.
 */
import assert from 'node:assert/strict';
import { adminActionsForSuite, connect, type ActionAnswer } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';

describe('cluster: MQ API sessions asked for on several nodes at once', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const cluster = clusterForSuite({}, () => `calls not answered: ${JSON.stringify([...pending])}`);
  const send = adminActionsForSuite(cluster, 'mq');

  /** The calls sent and not answered yet: printed if a test fails (a hang shows which call). */
  const pending = new Set<string>();
  const action = async (i: number, name: string, params: object): Promise<ActionAnswer> => {
    const what = `node${i + 1} ${name} ${JSON.stringify(params)}`;
    pending.add(what);
    const answer = await send(i, name, params);
    pending.delete(what);
    return answer;
  };

  it('createMqApiSession of one name on three nodes at once: exactly one node creates it, the other two answer 14221 (10 names)', async function () {
    for (let n = 0; n < 10; n++) {
      const clientName = `race-create-${n}`;
      const answers = await Promise.all([0, 1, 2].map((i) => action(i, 'createMqApiSession', { clientName })));
      const codes = answers.map((a) => a.errorCode);
      assert.equal(codes.filter((c) => c === 0).length, 1, `${clientName}: one creation succeeds (${JSON.stringify(answers)})`);
      assert.equal(codes.filter((c) => c === 14221).length, 2, `${clientName}: the others answer 14221 (${JSON.stringify(answers)})`);
    }
  });

  it('an MQ API session of node1 read on node2 and node3 at once: no message is returned by both reads (5 rounds)', async function () {
    const publisher = await connect(cluster().nodes[0].mqtt, { clientId: 'race-pub' });
    for (let round = 0; round < 5; round++) {
      const clientName = `race-read-${round}`;
      assert.equal((await action(0, 'createMqApiSession', { clientName })).errorCode, 0);
      const topic = `race/${round}`;
      assert.equal((await action(0, 'subscribeToMq', { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: topic, qos: 1 }] })).errorCode, 0);
      for (let m = 0; m < 10; m++) await publisher.publishAsync(topic, `m${m}`, { qos: 1 });
      const answers = await Promise.all([1, 2].map((i) => action(i, 'getMessagesFromMqApiSession', { clientName, maxMessages: 100 })));
      const payloads = answers.flatMap((a) => a.errorCode === 0 ? (a.result.messages as Array<{ payload: string }>).map((m) => Buffer.from(m.payload, 'hex').toString()) : []);
      assert.ok(answers.some((a) => a.errorCode === 0), JSON.stringify(answers));
      for (const a of answers) assert.ok(a.errorCode === 0 || a.errorCode === 12061, JSON.stringify(a));
      assert.equal(new Set(payloads).size, payloads.length, `round ${round}: a message returned twice (${JSON.stringify(payloads)})`);
    }
    await publisher.endAsync();
  });

  it('an MQ API session read on node1, which holds it, and on node2 at once: no message is returned by both reads, and none read is lost (10 rounds)', async function () {
    const publisher = await connect(cluster().nodes[0].mqtt, { clientId: 'race-pub-owner' });
    for (let round = 0; round < 10; round++) {
      const clientName = `race-owner-${round}`;
      assert.equal((await action(0, 'createMqApiSession', { clientName })).errorCode, 0);
      const topic = `race-owner/${round}`;
      assert.equal((await action(0, 'subscribeToMq', { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: topic, qos: 1 }] })).errorCode, 0);
      for (let m = 0; m < 10; m++) await publisher.publishAsync(topic, `m${m}`, { qos: 1 });
      const answers = await Promise.all([0, 1].map((i) => action(i, 'getMessagesFromMqApiSession', { clientName, maxMessages: 100 })));
      const payloads = answers.flatMap((a) => a.errorCode === 0 ? (a.result.messages as Array<{ payload: string }>).map((m) => Buffer.from(m.payload, 'hex').toString()) : []);
      for (const a of answers) assert.ok(a.errorCode === 0 || a.errorCode === 12061, JSON.stringify(a));
      assert.equal(new Set(payloads).size, payloads.length, `round ${round}: a message returned twice (${JSON.stringify(payloads)})`);
      // What neither read returned is still there: a read on node2 (wherever the session is now) returns it.
      const rest = await action(1, 'getMessagesFromMqApiSession', { clientName, maxMessages: 100 });
      assert.equal(rest.errorCode, 0, JSON.stringify(rest));
      const restPayloads = (rest.result.messages as Array<{ payload: string }>).map((m) => Buffer.from(m.payload, 'hex').toString());
      assert.deepEqual([...payloads, ...restPayloads].sort(), Array.from({ length: 10 }, (_, m) => `m${m}`).sort(), `round ${round}: every message read once`);
    }
    await publisher.endAsync();
  });
});
