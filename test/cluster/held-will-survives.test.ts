/**
 * A taken-over connection's will held for its former node's word (docs/cluster.md, "Sessions"):
 * the hold is replicated state (the client id's claim), so it survives the new owner's restart,
 * and each connection's will is decided once when the client id is taken over again before the
 * first word. node1 reaches its nats-servers through TCP proxies that hold what it sends: its word
 * (`let-go/<clientId>`) waits there while the test restarts node2 or takes the client id over
 * once more, so each case happens on every run.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { barrier, connect } from '../helpers/cluster-clients';
import { clusterWithProxiedNode } from '../helpers/nats-cluster';
import { TcpProxy } from '../helpers/tcp-proxy';

describe("cluster: a will held for a former owner's word survives the new owner's restart and a second takeover", function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 300_000));
  const events: string[] = [];
  // A long lease: node1's writes are held for moments only, never long enough to fence it or to
  // take node2 for dead while it restarts.
  const { cluster, proxies } = clusterWithProxiedNode(0, (port) => TcpProxy.start(port), { settings: { cluster_node_lease_ms: 120_000 } }, () => `events: ${JSON.stringify(events)}`);

  const hold = (): void => { for (const proxy of proxies) proxy.hold(); };
  const release = (): void => { for (const proxy of proxies) proxy.release(); };
  /** Resolves once node1 has sent `text` since the hold (node1 uses one of its proxies). */
  const node1Sent = (text: string): Promise<void> => Promise.any(proxies.map((proxy) => proxy.sent(text)));

  /** A subscriber on node3 to the wills of `topic`, and what it has received. */
  async function watch(topic: string): Promise<{ watcher: MqttClient; wills: string[] }> {
    const watcher = await connect(cluster().nodes[2].mqtt, { clientId: `watch-${topic.replace(/\//g, '-')}` });
    await watcher.subscribeAsync(topic, { qos: 1 });
    const wills: string[] = [];
    watcher.on('message', (t, payload) => { if (t === topic) wills.push(payload.toString()); });
    return { watcher, wills };
  }

  /** Every node has applied what each wrote before now, and node3's subscribers have what it routed before. */
  async function settled(name: string): Promise<void> {
    const [node1, node2, node3] = cluster().nodes;
    await barrier(node1, node2, `${name}-12`);
    await barrier(node2, node3, `${name}-23`);
    await barrier(node1, node3, `${name}-13`);
  }

  /** A CONNECT with a clean start on `node` that takes the client id over; errors after it (its node killed) are expected. */
  async function takeOver(nodeIndex: number, clientId: string, will?: string): Promise<MqttClient> {
    const client = await connect(cluster().nodes[nodeIndex].mqtt, { clientId, clean: true, ...(will ? { will: { topic: `held/${clientId}`, payload: Buffer.from(will), qos: 1, retain: false } } : {}) });
    client.on('error', () => undefined);
    return client;
  }

  /**
   * node1's connection (its session `kept` or not) is taken over by a clean start on node2; node2
   * is SIGKILLed and restarted while node1's word waits in the proxy; then the word goes: the wills
   * that reach a subscriber on node3.
   */
  async function restartBeforeWord(clientId: string, kept: boolean, resume = false, willDelay?: number): Promise<string[]> {
    const [node1, node2] = cluster().nodes;
    const { watcher, wills } = await watch(`held/${clientId}`);
    // willDelay: an MQTT 5 connection whose will has that Will Delay Interval (a resume within it cancels the will).
    const v5 = willDelay !== undefined ? { protocolVersion: 5 as const, properties: { sessionExpiryInterval: 600 } } : {};
    const first = await connect(node1.mqtt, {
      clientId, clean: !kept, ...v5,
      will: { topic: `held/${clientId}`, payload: Buffer.from('gone'), qos: 1, retain: false, ...(willDelay !== undefined ? { properties: { willDelayInterval: willDelay } } : {}) },
    });
    first.on('error', () => undefined);
    await barrier(node1, node2, `${clientId}-1`);

    // node2 takes the client id over; node1 applies the claim, closes the first connection and
    // writes its word, which waits in the proxy.
    hold();
    const wordSent = node1Sent(`let-go/${clientId}`);
    const second = resume
      ? await connect(node2.mqtt, { clientId, clean: false, ...v5 }).then((client) => { client.on('error', () => undefined); return client; })
      : await takeOver(1, clientId);
    await wordSent;
    events.push(`${clientId}: node1's word held`);
    await barrier(node2, cluster().nodes[2], `${clientId}-2`);

    // node2 dies and comes back while the word is still on its way.
    await node2.stop('SIGKILL');
    second.end(true);
    events.push(`${clientId}: node2 killed`);
    await node2.start();
    events.push(`${clientId}: node2 restarted, wills so far ${JSON.stringify(wills)}`);
    assert.deepEqual(wills, [], 'nothing is sent before the word');

    release();
    await settled(`${clientId}-after`);
    watcher.end(true);
    return wills;
  }

  it("the new owner SIGKILLed and restarted before the former owner's word: the dropped connection's will is published once, after the word (a session ending with its connection, and a kept one)", async function () {
    assert.deepEqual(await restartBeforeWord('held-restart', false), ['gone'], 'session ending with its connection');
    assert.deepEqual(await restartBeforeWord('held-restart-kept', true), ['gone'], 'kept session');
  });

  it("a kept session resumed on node2 before node1's word, node2 restarted: the resume cancelled the will (it had a delay), which is never published", async function () {
    assert.deepEqual(await restartBeforeWord('held-resumed', true, true, 300), []);
  });

  it("a kept session resumed on node2 before node1's word, node2 restarted: a will without a delay is published once, as one node does at a takeover", async function () {
    assert.deepEqual(await restartBeforeWord('held-resumed-no-delay', true, true), ['gone']);
  });

  it("the client id taken over a second time before the first former owner's word: each connection's will is published once", async function () {
    const [node1, node2, node3] = cluster().nodes;
    const clientId = 'held-twice';
    const { watcher, wills } = await watch(`held/${clientId}`);
    const first = await connect(node1.mqtt, { clientId, clean: true, will: { topic: `held/${clientId}`, payload: Buffer.from('gone-from-node1'), qos: 1, retain: false } });
    first.on('error', () => undefined);
    await barrier(node1, node2, `${clientId}-1`);

    hold();
    const wordSent = node1Sent(`let-go/${clientId}`);
    const second = await takeOver(1, clientId, 'gone-from-node2');
    await wordSent;
    events.push(`${clientId}: node1's word held`);
    await barrier(node2, node3, `${clientId}-2`);

    // node3 takes it over from node2 while node1's word is still on its way.
    const third = await takeOver(2, clientId);
    await barrier(node2, node3, `${clientId}-3`);
    events.push(`${clientId}: taken over by node3, wills so far ${JSON.stringify(wills)}`);

    release();
    await settled(`${clientId}-after`);
    second.end(true);
    third.end(true);
    watcher.end(true);
    assert.deepEqual([...wills].sort(), ['gone-from-node1', 'gone-from-node2'], "each ended connection's will, once");
  });

  it("a DISCONNECT read by node1 just before it applies the takeover, with the new owner restarted before the word: the will is never published", async function () {
    const [node1, node2] = cluster().nodes;
    const clientId = 'held-normal';
    const { watcher, wills } = await watch(`held/${clientId}`);
    const first = await connect(node1.mqtt, { clientId, clean: true, will: { topic: `held/${clientId}`, payload: Buffer.from('gone'), qos: 1, retain: false } });
    await barrier(node1, node2, `${clientId}-1`);

    // node1 reads the DISCONNECT and removes the will; the removal waits in the proxy, and node2's
    // claim comes first in the stream.
    hold();
    const removalSent = node1Sent(`will/${clientId}`);
    first.end(false);
    await removalSent;
    const wordSent = node1Sent(`let-go/${clientId}`);
    const second = await takeOver(1, clientId);
    await wordSent;
    await barrier(node2, cluster().nodes[2], `${clientId}-2`);

    await node2.stop('SIGKILL');
    second.end(true);
    await node2.start();
    release();
    await settled(`${clientId}-after`);
    watcher.end(true);
    assert.deepEqual(wills, [], 'the DISCONNECT cleared the will');
  });
});
