/**
 * review7: an account or role deletion that node1 could not store. Accounts.delete and
 * RoleCatalog.delete (kernel/auth/) take the record out of memory before the store's write, and
 * do not put it back when that write fails: node1 answers 12060 (not stored) yet forgets the
 * account, while the stream and every other node keep it. node1 then refuses its logins, and a
 * second deleteAccount through node1 answers "not found" for an account that still exists.
 *
 * node1 reaches NATS through TCP proxies: its deletion is held there, then the proxies cut the
 * connections, so the write never reaches the stream (on every run) and its request times out.
 */
import assert from 'node:assert/strict';
import { barrier } from '../helpers/cluster-clients';
import { clusterWithProxiedNode } from '../helpers/nats-cluster';
import { call } from '../helpers/server';
import { TcpProxy } from '../helpers/tcp-proxy';

type Answer = { errorCode: number; errorMessage: string; result: Record<string, unknown> };

describe('review7 cluster: a catalog deletion the stream never got', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const events: string[] = [];
  // A long lease: node1 is cut off for one request timeout only, never long enough to fence it.
  const { cluster, proxies } = clusterWithProxiedNode(0, (port) => TcpProxy.start(port), { settings: { cluster_node_lease_ms: 120_000 } }, () => `events: ${JSON.stringify(events)}`);

  const adminAction = async (i: number, name: string, params: object): Promise<Answer> => {
    const node = cluster().nodes[i];
    const r = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: name, authToken: await tokenOf(i), params } });
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
  const tokens = new Map<number, string>();
  async function tokenOf(i: number): Promise<string> {
    let token = tokens.get(i);
    if (token === undefined) {
      const r = await call('POST', `${cluster().nodes[i].http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      token = r.json.result.authToken as string;
      tokens.set(i, token);
    }
    return token;
  }

  /** Runs `write` through node1 with what node1 sends held, then drops it (cut) once `text` is in it: the stream never gets it. */
  async function lostOnTheWay(text: string, write: () => Promise<Answer>): Promise<Answer> {
    for (const proxy of proxies) proxy.hold();
    const sent = Promise.any(proxies.map((proxy) => proxy.sent(text)));
    const answered = write();
    await sent;
    for (const proxy of proxies) proxy.cut();
    for (const proxy of proxies) proxy.release();
    events.push(`${text}: dropped`);
    const answer = await answered;
    events.push(`${text}: answered ${answer.errorCode}`);
    for (const proxy of proxies) proxy.restore();
    // node1 writes again (each attempt answered within the request timeout), then has applied node2's writes.
    const node1 = cluster().nodes[0];
    for (let attempt = 0; ; attempt++) {
      const r = await call('POST', `${node1.http}/engine/api/v1/table/main/${text.replace(/[^a-z0-9]/g, '_')}_${attempt}`, { auth: ['admin', 'ADMIN'], body: { fields: [{ name: 'v', type: 'integer' }] } });
      if (r.status === 200) break;
      assert.equal(r.status, 503, r.text);
    }
    await barrier(cluster().nodes[1], node1, `${text}-after`);
    return answer;
  }

  const accountNames = async (i: number): Promise<string[]> => ((await adminAction(i, 'listAccounts', {})).result.accounts as Array<{ username: string }>).map((a) => a.username);
  const roleNames = async (i: number): Promise<string[]> => ((await adminAction(i, 'listRoles', {})).result.roles as Array<{ roleName: string }>).map((r) => r.roleName);

  it('an account deletion answered 12060 on node1 leaves the account on node1 as on node2: it logs in there and a second deletion through node1 deletes it', async function () {
    const [node1, node2] = cluster().nodes;
    assert.equal((await adminAction(0, 'createAccount', { username: 'r7kept', password: 'r7kept-password-1', roles: ['reader'] })).errorCode, 0);
    await barrier(node1, node2, 'r7kept-made');

    const answer = await lostOnTheWay('r7kept', () => adminAction(0, 'deleteAccount', { username: 'r7kept' }));
    assert.equal(answer.errorCode, 12060, JSON.stringify(answer));
    assert.ok((await accountNames(1)).includes('r7kept'), 'node2 still has it (the deletion was never stored)');
    assert.ok((await accountNames(0)).includes('r7kept'), 'node1 forgot an account whose deletion it answered as not stored');
    const login = await call('POST', `${node1.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'r7kept', password: 'r7kept-password-1' } } });
    assert.equal(login.json.errorCode, 0, `a login on node1: ${login.text}`);
    const again = await adminAction(0, 'deleteAccount', { username: 'r7kept' });
    assert.equal(again.errorCode, 0, `the deletion tried again through node1: ${JSON.stringify(again)}`);
  });

  it('a role deletion answered 12060 on node1 leaves the role on node1 as on node2', async function () {
    const [node1, node2] = cluster().nodes;
    assert.equal((await adminAction(0, 'createRole', { roleName: 'r7role', grants: [{ commands: ['mq.connect'], resources: ['client:*'] }] })).errorCode, 0);
    await barrier(node1, node2, 'r7role-made');

    const answer = await lostOnTheWay('r7role', () => adminAction(0, 'deleteRole', { roleName: 'r7role' }));
    assert.equal(answer.errorCode, 12060, JSON.stringify(answer));
    assert.ok((await roleNames(1)).includes('r7role'), 'node2 still has it (the deletion was never stored)');
    assert.ok((await roleNames(0)).includes('r7role'), 'node1 forgot a role whose deletion it answered as not stored');
  });
});
