/**
 * review7: a kept session adopted from a dead node, as listMqSessions shows it on each node
 * (plugins/messaging/session-listing.ts). The adopter loads it as one whose connection ended
 * (core-state.ts loadedSession sets disconnectedAt in memory) but writes nothing, so the stored
 * state still says "connected when last written": the adopter lists it disconnected, every other
 * node lists it connected, on the adopter, until something else rewrites it.
 */
import assert from 'node:assert/strict';
import { barrier, connect } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';
import { call } from '../helpers/server';

async function listed(node: EngineNode, clientName: string): Promise<Array<{ clientName: string; connected: boolean; node: string }>> {
  const login = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
  const answer = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'mq', action: 'listMqSessions', authToken: login.json.result.authToken, params: { filter: clientName } } });
  assert.equal(answer.json.errorCode, 0, answer.text);
  return (answer.json.result.sessions as Array<{ clientName: string; connected: boolean; node: string }>).map((s) => ({ clientName: s.clientName, connected: s.connected, node: s.node }));
}

describe('review7 cluster: a kept session adopted from a SIGKILLed node, listed on every node', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const events: string[] = [];
  const cluster = clusterForSuite({}, () => `events: ${JSON.stringify(events)}`);

  it('is listed disconnected, owned by the adopter, on both survivors', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const clientId = 'r7-adopted';
    const kept = await connect(node3.mqtt, { clientId, protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 600 } });
    kept.on('error', () => undefined);
    await kept.subscribeAsync('r7-adopted/#', { qos: 1 });
    await barrier(node3, node1, 'r7bar-adopt-1');
    await barrier(node3, node2, 'r7bar-adopt-2');

    const lapsed = (node: EngineNode): Promise<EngineNode> => node.process!.logged((line) => /lease has lapsed/.test(String(line.msg))).then(() => node);
    await node3.stop('SIGKILL');
    events.push('node3 killed');
    const adopter = await Promise.any([lapsed(node1), lapsed(node2)]);
    const other = adopter === node1 ? node2 : node1;
    events.push(`${adopter.name} adopts`);
    // The adoption's claim (and anything written upon it) is applied on the other survivor.
    await barrier(adopter, other, 'r7bar-adopt-3');

    const expected = [{ clientName: clientId, connected: false, node: adopter.name }];
    assert.deepEqual(await listed(adopter, clientId), expected, `listed on ${adopter.name} (the adopter)`);
    assert.deepEqual(await listed(other, clientId), expected, `listed on ${other.name}`);
    kept.end(true);
    await node3.start();
  });
});
