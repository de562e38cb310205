/**
 * Failover of the stream reader (plugins/cluster-nats/stream-applier.ts, docs/cluster.md
 * "Failures"): the nats-server a node reads the stream through is SIGKILLed during a QoS 1
 * stream. The client library does not recover the consumer by itself; the node re-creates it
 * through another server, and every message the publisher had acknowledged reaches the
 * subscriber on that node, in order.
 */
import assert from 'node:assert/strict';
import { connect } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';

describe('cluster: the nats-server a node reads through dies', function () {
  this.timeout(240_000);
  // The lease is long: this test is about the read path. On a loaded machine node1's renewals,
  // which go through the killed server too, could lapse during the failover, and its subscriber's
  // session would move to another node (test/cluster/06 tests that).
  const cluster = clusterForSuite({ settings: { cluster_request_timeout_ms: 10_000, cluster_node_lease_ms: 120_000 } }, () => JSON.stringify(progress));
  /** Where the test is, printed if it fails. */
  const progress = { stage: 'starting', received: 0, acknowledged: 0, disconnect: null as string | null };

  it('SIGKILL of node1\'s nats-server during a QoS 1 stream: every acknowledged message reaches node1\'s subscriber, in order', async function () {
    const [node1, node2] = cluster().nodes;
    const subscriber = await connect(node1.mqtt, { clientId: 'failover-sub' });
    await subscriber.subscribeAsync('failover/#', { qos: 1 });
    const received: number[] = [];
    const waiting: Array<{ count: number; resolve: () => void }> = [];
    subscriber.on('message', (_topic, payload) => {
      received.push(Number(payload.toString()));
      progress.received = received.length;
      for (let i = waiting.length - 1; i >= 0; i--) if (received.length >= waiting[i].count) waiting.splice(i, 1)[0].resolve();
    });
    const receivedAtLeast = (count: number): Promise<void> => (received.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve })));
    const lastOne: { n: number; resolve: () => void }[] = [];
    subscriber.on('message', (_topic, payload) => {
      const n = Number(payload.toString());
      for (let i = lastOne.length - 1; i >= 0; i--) if (n >= lastOne[i].n) lastOne.splice(i, 1)[0].resolve();
    });
    // A subscriber that loses its connection would wait for the timeout: it fails at once instead.
    const subscriberGone = new Promise<never>((_, reject) => subscriber.once('close', () => reject(new Error(`the subscriber's connection closed after ${received.length} messages`))));
    subscriberGone.catch(() => undefined);
    const receivedUntil = (n: number): Promise<void> => Promise.race([subscriberGone, received.includes(n) ? Promise.resolve() : new Promise<void>((resolve) => lastOne.push({ n, resolve }))]);

    // MQTT 5: a write the cluster surely did not store is answered PUBACK 0x80; one whose outcome
    // is unknown disconnects the publisher (DISCONNECT 0x80 saying it may have been stored), and
    // the publisher stops there.
    const publisher = await connect(node2.mqtt, { clientId: 'failover-pub', protocolVersion: 5 });
    let disconnect: string | null = null;
    publisher.on('disconnect', (packet) => { disconnect = progress.disconnect = `${packet.reasonCode} ${packet.properties?.reasonString ?? ''}`; });
    // mqtt.js keeps a QoS 1 publish that is in flight when the connection closes waiting for a
    // reconnect that never comes (reconnectPeriod 0): a forced end settles them as failed, so the
    // publishing stops after the server's DISCONNECT. A close without a DISCONNECT fails the test.
    const publisherGone = new Promise<never>((_, reject) => publisher.once('close', () => {
      if (disconnect === null) reject(new Error(`the publisher's connection closed without a DISCONNECT after ${acknowledged.length} acknowledgements`));
      publisher.end(true);
    }));
    publisherGone.catch(() => undefined);
    const TOTAL = 3000;
    const acknowledged: number[] = [];
    const publishing = (async () => {
      for (let n = 0; n < TOTAL && disconnect === null; n += 100) {
        // 100 in flight at a time, so the stream goes on while the server dies.
        await Promise.all(Array.from({ length: 100 }, (_, i) => publisher.publishAsync('failover/t', String(n + i), { qos: 1 }).then(
          () => { acknowledged.push(n + i); progress.acknowledged = acknowledged.length; },
          (error: { code?: number }) => { if (disconnect === null) assert.equal(error.code, 0x80); },
        )));
      }
    })();
    progress.stage = 'publishing, before the kill';
    await Promise.race([subscriberGone, publisherGone, receivedAtLeast(500)]);
    progress.stage = 'killing node1\'s nats-server';
    await cluster().nats.servers[0].stop('SIGKILL');
    progress.stage = 'publishing, after the kill';
    await Promise.race([publisherGone, publishing]);
    // A PUBACK 0x80 may still have been stored (outcome unknown): the subscriber gets every
    // acknowledged message, and each message at most once, in order.
    if (disconnect !== null) assert.match(disconnect, /^128 .*(may have been stored|was stored)/);
    assert.ok(acknowledged.length > 0, `acknowledged ${acknowledged.length} of ${TOTAL}, received ${received.length}`);
    const last = Math.max(...acknowledged);
    progress.stage = `publishing ended; waiting for the last acknowledged message, ${last}`;
    await receivedUntil(last);
    progress.stage = 'checking';
    const seen = new Set(received);
    assert.deepEqual(acknowledged.filter((n) => !seen.has(n)), [], 'every acknowledged message is delivered');
    assert.deepEqual(received, [...received].sort((x, y) => x - y), 'in order');
    assert.equal(seen.size, received.length, 'once each');
    const reader = node1.process!.logs().some((line) => /^cluster: (the stream stopped answering|reconnected to another server|reading the stream failed)/.test(String(line.msg)));
    assert.ok(reader, 'node1 re-created its stream reader');
    subscriber.end(true);
    publisher.end(true);
  });
});
