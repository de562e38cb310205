/**
 * review7: the will of a connection taken over by a CONNECT on another node waits for the former
 * owner's word (`let-go/<clientId>`, docs/cluster.md "Sessions"), or for that node's lease to
 * lapse. A former owner that was SIGKILLed and restarted before its lease lapsed applies the
 * takeover's claim while it catches up, before the message core listens to claims: the word is
 * written only by the listener's callback (plugins/cluster-nats/session-claims.ts `reviewed()`
 * returned when `listener === null`), so it never came, and the restarted node renews its lease:
 * the new owner held the will for ever. The connection ended with a crash, so its will is due.
 * Now a node gives the words it owes once it serves again (SessionOwnershipPort.giveOwedWords).
 *
 * A long lease: node1 restarts well before its lease could lapse, on every run.
 */
import assert from 'node:assert/strict';
import { barrier, connect } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';

describe('review7 cluster: a former owner restarted before its lease lapsed, and the will it owed its word on', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const events: string[] = [];
  const cluster = clusterForSuite({ settings: { cluster_node_lease_ms: 120_000 } }, () => `events: ${JSON.stringify(events)}`);

  it('a client of node1 (SIGKILLed) that connects again with a clean start through node2 before node1 restarts: its will is published once node1 is back', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const clientId = 'r7-restarted-owner';
    const topic = `r7-will/${clientId}`;
    const watcher = await connect(node3.mqtt, { clientId: 'r7-will-watcher' });
    await watcher.subscribeAsync('r7-will/#', { qos: 1 });
    const wills: string[] = [];
    watcher.on('message', (t, payload) => { if (t === topic) wills.push(payload.toString()); });

    const first = await connect(node1.mqtt, { clientId, clean: true, will: { topic, payload: Buffer.from('crashed'), qos: 1, retain: false } });
    first.on('error', () => undefined);
    await barrier(node1, node2, 'r7-owner-1');
    await node1.stop('SIGKILL');
    events.push('node1 killed');

    // The client comes back through node2 (clean start): node2 takes the client id from node1 and
    // holds the will for node1's word.
    const second = await connect(node2.mqtt, { clientId, clean: true });
    await barrier(node2, node3, 'r7-owner-2');
    events.push(`taken over on node2; wills so far ${JSON.stringify(wills)}`);

    await node1.start();
    events.push('node1 restarted');
    // What node1 wrote while it caught up (its word) is applied on node2, and what node2 wrote
    // upon it (the will) reaches node3 before a message node2 sends after it.
    await barrier(node1, node2, 'r7-owner-3');
    await barrier(node2, node3, 'r7-owner-4');
    assert.deepEqual(wills, ['crashed'], 'the will of the crashed connection (node1 came back before its lease lapsed)');
    second.end(true);
    watcher.end(true);
    first.end(true);
  });
});
