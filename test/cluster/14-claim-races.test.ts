/**
 * Claims of client ids racing what a node does meanwhile (docs/cluster.md, "Sessions"). node1
 * reaches its nats-servers through TCP proxies this test holds: what node1 sends (its stream
 * writes) waits in the proxy while the test lines up what the real code does in between, so each
 * interleaving happens on every run, not only when the timing falls that way.
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { adminActionsForSuite, barrier, connect, end } from '../helpers/cluster-clients';
import { clusterWithProxiedNode } from '../helpers/nats-cluster';
import { TcpProxy } from '../helpers/tcp-proxy';

describe('cluster: claims racing a release, a CONNECT or a deletion', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const events: string[] = [];
  // A long lease: node1's writes are held for moments only, never long enough to fence it.
  const { cluster, proxies } = clusterWithProxiedNode(0, (port) => TcpProxy.start(port), { settings: { cluster_node_lease_ms: 120_000 } }, () => `events: ${JSON.stringify(events)}`);

  const action = adminActionsForSuite(cluster, 'mq');

  const hold = (): void => { for (const proxy of proxies) proxy.hold(); };
  const release = (): void => { for (const proxy of proxies) proxy.release(); };
  /** Resolves once node1 has sent `text` `times` times since the hold (node1 uses one of its proxies). */
  const node1Sent = (text: string, times = 1): Promise<void> => Promise.any(proxies.map((proxy) => proxy.sent(text, times)));

  it('a clean session ending releases its claim at once; a CONNECT on the owner while that release is on its way keeps the client id owned: another node refuses an MQ API session of that name (14221) and the client stays connected', async function () {
    const [node1, node2] = cluster().nodes;
    const clientId = 'release-race';
    const first = await connect(node1.mqtt, { clientId, clean: true });
    events.push('first connected');

    // The clean session ends with its connection: node1 releases its claim; the release waits in
    // the proxy. (The 10 s sweep's releases go the same way, through SessionClaims.release.)
    hold();
    const releaseSent = node1Sent(`owner/${clientId}`);
    await end(first);
    await releaseSent;
    events.push('release held');
    const sweptIt = node1.process!.logs().some((line) => Array.isArray(line.clientIds) && (line.clientIds as unknown[]).includes(clientId));
    assert.equal(sweptIt, false, 'the claim was released when the session ended, not by the 10 s sweep');

    // The same client id connects to node1 again while the release is on its way.
    const second: MqttClient = mqtt.connect(node1.mqtt, { clientId, clean: true, reconnectPeriod: 0, connectTimeout: 60_000, username: 'admin', password: 'ADMIN' });
    let closed = false;
    second.on('close', () => { closed = true; events.push('second closed'); });
    const connected = new Promise<void>((resolve, reject) => { second.once('connect', () => resolve()); second.once('error', reject); });
    // node1 either answers relying on the claim being released, or claims again (a second entry
    // for the client id goes out behind the release): whichever comes first, the proxy lets go then.
    await Promise.race([
      connected.then(() => events.push('second connected while held')),
      node1Sent(`owner/${clientId}`, 2).then(() => events.push('claimed again while held')),
    ]);
    release();
    await connected;

    // Everything node1 sent is applied on node2: the client id must still be node1's.
    await barrier(node1, node2, 'release-race');
    const answer = await action(1, 'createMqApiSession', { clientName: clientId });
    assert.equal(answer.errorCode, 14221, `node2 created a session of a client id connected on node1: ${JSON.stringify(answer)}`);
    assert.equal(closed, false, 'the client connected on node1 was not closed');
    await end(second);
  });

  it('an MQ API session deleted on its owner while another node brings it over: that node answers 14237, not NODE_BOUND, and the name is free', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const clientName = 'bring-deleted';
    assert.equal((await action(1, 'createMqApiSession', { clientName })).errorCode, 0);
    await barrier(node2, node1, 'bring-created');

    // node1 finds the session stored and claims it from node2; the claim waits in the proxy.
    hold();
    const claimSent = node1Sent(`owner/${clientName}`);
    const read = action(0, 'getMessagesFromMqApiSession', { clientName });
    await claimSent;
    events.push('claim held');

    // Meanwhile node2 deletes it (and lets go of the name), ahead of node1's claim in the stream.
    const deleted = await action(1, 'deleteMqSession', { clientName });
    assert.equal(deleted.errorCode, 0, JSON.stringify(deleted));
    await barrier(node2, node3, 'bring-deleted');
    release();

    const answer = await read;
    assert.equal(answer.errorCode, 14237, `the deleted session: ${JSON.stringify(answer)}`);
    await barrier(node1, node3, 'bring-after');
    const created = await action(2, 'createMqApiSession', { clientName });
    assert.equal(created.errorCode, 0, `the name is free again: ${JSON.stringify(created)}`);
  });

  /**
   * A client with a will connected to node1 ends its connection (`normally`: DISCONNECT 0x00, else
   * dropped) while node1's writes are held, and the same client id connects with a clean start to
   * node2, whose claim is applied before node1's writes: the wills that reach a subscriber on node3.
   * `kept`: the first connection's session is kept (3.1.1 clean session 0), its will stored with it.
   */
  async function willAfterCrossing(clientId: string, normally: boolean, kept: boolean): Promise<string[]> {
    const [node1, node2, node3] = cluster().nodes;
    const topic = `will-race/${clientId}`;
    const watcher = await connect(node3.mqtt, { clientId: `${clientId}-watch` });
    await watcher.subscribeAsync(topic, { qos: 1 });
    const wills: string[] = [];
    watcher.on('message', (t, payload) => { if (t === topic) wills.push(payload.toString()); });
    const first = await connect(node1.mqtt, { clientId, clean: !kept, will: { topic, payload: Buffer.from('gone'), qos: 1, retain: false } });
    await barrier(node1, node2, `${clientId}-1`);

    // node1 reads the end of the connection and decides its will; what it writes waits in the proxy.
    hold();
    const decided = node1Sent(normally ? `${kept ? 'session' : 'will'}/${clientId}` : topic);
    if (normally) await end(first);
    else first.end(true);
    await decided;
    events.push(`${clientId}: node1's decision held`);

    // The clean start on node2 takes the client id over, ahead of node1's writes in the stream.
    const second = await connect(node2.mqtt, { clientId, clean: true });
    await barrier(node2, node3, `${clientId}-2`);
    events.push(`${clientId}: taken over on node2, wills so far ${JSON.stringify(wills)}`);
    release();

    // node1 has applied the takeover once it refuses the name (the claim is before its held writes),
    // and it let go then; node2 applied that, and what node2 sent reached node3.
    assert.equal((await action(0, 'createMqApiSession', { clientName: clientId })).errorCode, 14221);
    await barrier(node1, node2, `${clientId}-3`);
    await barrier(node2, node3, `${clientId}-4`);
    await barrier(node1, node3, `${clientId}-5`);
    await end(second);
    watcher.end(true);
    return wills;
  }

  it('a DISCONNECT 0x00 read by node1 just before it applies a clean-start takeover from node2: the will is never published (a session ending with its connection, and a kept one)', async function () {
    assert.deepEqual(await willAfterCrossing('will-normal', true, false), [], 'session ending with its connection');
    assert.deepEqual(await willAfterCrossing('will-normal-kept', true, true), [], 'kept session');
  });

  it('a connection dropped on node1 just before it applies a clean-start takeover from node2: the will is published once (a session ending with its connection, and a kept one)', async function () {
    assert.deepEqual(await willAfterCrossing('will-dropped', false, false), ['gone'], 'session ending with its connection');
    assert.deepEqual(await willAfterCrossing('will-dropped-kept', false, true), ['gone'], 'kept session');
  });

  it('a node restarted while its first lease renewal is held serves nobody until the renewal is stored, and does not fence itself at start', async function () {
    const node1 = cluster().nodes[0];
    await node1.stop();
    for (const proxy of proxies) proxy.holdSubject('$KV.ENGINE_NODES.');
    const renewalHeld = node1Sent('$KV.ENGINE_NODES.node1');
    const started = node1.start();
    const engine = node1.process!;
    await renewalHeld;
    events.push('first renewal held');
    // node1 has caught up and asked for its lease. It must not open its listeners before the
    // lease is stored: it says it waits for it (written before the renewal is sent), or it opens them.
    const first = await Promise.race([
      engine.logged((line) => line.msg === 'listening' && typeof line.mqtt === 'string').then(() => 'listening while its lease is not stored'),
      engine.logged((line) => /renewing this node's lease before it serves/.test(String(line.msg))).then(() => 'waits for its lease'),
    ]);
    events.push(first);
    assert.equal(first, 'waits for its lease');
    release();
    await started;
    const client = await connect(node1.mqtt, { clientId: 'after-restart' });
    await end(client);
    assert.ok(!engine.logs().some((line) => /this node is fenced/.test(String(line.msg))), 'node1 did not fence itself at start');
  });
});
