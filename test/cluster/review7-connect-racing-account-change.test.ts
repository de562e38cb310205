/**
 * review7: an MQTT CONNECT logging in on node1 while its account is deleted, or its password
 * changed, through node2. A live connection whose account changes is closed with 0x98
 * (docs/roles.md, kernel/engine.ts closeConnectionsOf), but a CONNECT whose credentials were
 * checked and whose client id claim is on its way through the stream is no live connection yet:
 * node1 applies the change (closing nothing), then its claim, then answers CONNACK 0 for the
 * account as it was. The client then publishes as a deleted account, or with the old password.
 *
 * node1 reaches NATS through TCP proxies that hold its writes (as test/cluster/14): the claim
 * waits there while node2 writes the change, so the change is ahead of the claim in the stream on
 * every run.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { adminActionsForSuite, barrier, type ActionAnswer } from '../helpers/cluster-clients';
import { clusterWithProxiedNode } from '../helpers/nats-cluster';
import { TcpProxy } from '../helpers/tcp-proxy';

/** How a CONNECT ended: refused (CONNACK code), or accepted and then its QoS 1 PUBLISH acknowledged or the connection closed first. */
type Outcome = { refused: number } | { published: true } | { closed: true };

describe('review7 cluster: a CONNECT whose claim is on its way while its account changes on another node', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const events: string[] = [];
  // A long lease: node1's writes are held for moments only, never long enough to fence it.
  const { cluster, proxies } = clusterWithProxiedNode(0, (port) => TcpProxy.start(port), { settings: { cluster_node_lease_ms: 120_000 } }, () => `events: ${JSON.stringify(events)}`);

  const adminAction = adminActionsForSuite(cluster, 'admin');

  const hold = (): void => { for (const proxy of proxies) proxy.hold(); };
  const release = (): void => { for (const proxy of proxies) proxy.release(); };
  const node1Sent = (text: string): Promise<void> => Promise.any(proxies.map((proxy) => proxy.sent(text)));

  /**
   * Creates `name` (role admin) through node2 and waits until node1 has applied it; then CONNECTs as
   * it to node1, holds node1's claim, runs `change` through node2, releases the claim, and tells
   * how the CONNECT ended.
   */
  async function connectAcross(name: string, change: () => Promise<ActionAnswer>): Promise<Outcome> {
    const [node1] = cluster().nodes;
    const password = `${name}-password-1`;
    assert.equal((await adminAction(1, 'createAccount', { username: name, password, roles: ['admin'] })).errorCode, 0);
    await barrier(cluster().nodes[1], node1, `${name}-made`);

    hold();
    const clientId = `${name}-client`;
    const claimHeld = node1Sent(`owner/${clientId}`);
    const client = mqtt.connect(node1.mqtt, { clientId, protocolVersion: 5, clean: true, reconnectPeriod: 0, connectTimeout: 120_000, username: name, password });
    client.on('error', () => undefined);
    const closed = new Promise<{ closed: true }>((resolve) => client.once('close', () => resolve({ closed: true })));
    const answered = new Promise<Outcome>((resolve) => {
      client.once('connect', () => {
        events.push(`${name}: CONNACK 0`);
        // Accepted: does it serve the account as it was? A QoS 1 PUBLISH acknowledged says yes.
        void Promise.race([client.publishAsync(`review7/${name}`, 'as the old account', { qos: 1 }).then(() => ({ published: true as const })), closed]).then(resolve, () => resolve({ closed: true }));
      });
      client.once('error', (error: Error & { code?: number }) => resolve({ refused: error.code ?? -1 }));
      void closed.then(resolve);
    });
    await claimHeld;
    events.push(`${name}: node1's claim held`);
    const changed = await change();
    assert.equal(changed.errorCode, 0, JSON.stringify(changed));
    events.push(`${name}: changed through node2`);
    release();
    const outcome = await answered;
    events.push(`${name}: ${JSON.stringify(outcome)}`);
    client.end(true);
    return outcome;
  }

  it('an account deleted through node2 while its CONNECT on node1 claims the client id: node1 refuses it as a wrong password (0x86), and acknowledges no PUBLISH of the deleted account', async function () {
    const outcome = await connectAcross('r7gone', () => adminAction(1, 'deleteAccount', { username: 'r7gone' }));
    assert.deepEqual(outcome, { refused: 0x86 }, 'node1 served the CONNECT of a deleted account (published: its PUBLISH acknowledged)');
  });

  it('a password changed through node2 while a CONNECT with the old one claims the client id on node1: node1 refuses it (0x86)', async function () {
    const outcome = await connectAcross('r7moved', () => adminAction(1, 'alterAccount', { username: 'r7moved', password: 'r7moved-password-2' }));
    assert.deepEqual(outcome, { refused: 0x86 }, 'node1 served a CONNECT with the password changed before its claim (published: its PUBLISH acknowledged)');
  });

  it('an account whose roles are revoked through node2 while its CONNECT on node1 claims the client id: node1 decides it with the roles it has now (refused 0x87: no mq.connect left)', async function () {
    const outcome = await connectAcross('r7demoted', () => adminAction(1, 'revokeRolesFromAccounts', { usernames: ['r7demoted'], roleNames: ['admin'] }));
    assert.deepEqual(outcome, { refused: 0x87 }, 'node1 served the CONNECT with the roles revoked before its claim');
  });
});
