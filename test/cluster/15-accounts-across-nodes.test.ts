/**
 * Cluster: accounts and roles written through one node hold on every node, without a restart
 * (kernel/engine.ts taps the store's applied entries; docs/cluster.md "Accounts and roles").
 * A barrier orders each check after the write: a table created through the writing node is read
 * through the checking node, which catches up with the stream first (a not-found read does).
 */
import assert from 'node:assert/strict';
import { call } from '../helpers/server';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';

let barriers = 0;

async function action(node: EngineNode, authToken: string | null, api: string, name: string, params: object): Promise<{ errorCode: number; result?: any; errorMessage?: string }> {
  const answer = await call('POST', `${node.http}/api`, { auth: null, body: { api, action: name, ...(authToken ? { authToken } : {}), params } });
  return answer.json;
}

async function login(node: EngineNode, username: string, password: string): Promise<{ errorCode: number; authToken?: string }> {
  const answer = await action(node, null, 'admin', 'createSession', { username, password });
  return { errorCode: answer.errorCode ?? 0, authToken: answer.result?.authToken };
}

async function adminToken(node: EngineNode): Promise<string> {
  const session = await login(node, 'admin', 'ADMIN');
  assert.equal(session.errorCode, 0);
  return session.authToken!;
}

/** Everything written through `writer` so far is applied on each of `readers` once this resolves. */
async function barrier(writer: EngineNode, readers: EngineNode[]): Promise<void> {
  const table = `barrier_${++barriers}`;
  const created = await call('POST', `${writer.http}/engine/api/v1/table/main/${table}`, { auth: ['admin', 'ADMIN'], body: { fields: [{ name: 'v', type: 'integer' }] } });
  assert.equal(created.status, 200, created.text);
  for (const reader of readers) {
    const read = await call('GET', `${reader.http}/engine/api/v1/index/main/${table}`, { auth: ['admin', 'ADMIN'] });
    assert.equal(read.status, 200, `${reader.name}: ${read.text}`);
  }
}

/** The HTTP status of a REST read with this name and password (the credentials are cached after a success). */
async function restStatus(node: EngineNode, username: string, password: string): Promise<number> {
  return (await call('GET', `${node.http}/engine/api/v1/index/main/barrier_1`, { auth: [username, password] })).status;
}

describe('cluster: accounts and roles across nodes', function () {
  this.timeout(240_000);
  const suite = clusterForSuite();

  it('an account created, given a role, re-passworded and deleted through one node each is logged in, authorized, refused and ended alike on the others', async () => {
    const cluster = suite();
    const [node1, node2, node3] = cluster.nodes;
    const [admin1, admin2, admin3] = await Promise.all(cluster.nodes.map(adminToken));

    // Created through node1: it logs in on node2 and node3.
    assert.equal((await action(node1, admin1, 'admin', 'createAccount', { username: 'roamer', password: 'first-password-1', roles: ['reader'] })).errorCode, 0);
    await barrier(node1, [node2, node3]);
    const onNode3 = await login(node3, 'roamer', 'first-password-1');
    assert.equal(onNode3.errorCode, 0, 'a login on node3 with the password set through node1');
    assert.equal((await login(node2, 'roamer', 'first-password-1')).errorCode, 0, 'a login on node2');
    assert.equal(await restStatus(node1, 'roamer', 'first-password-1'), 200, 'a REST read on node1 (now cached there)');

    // A role made through node3 and assigned through node1 authorizes on node2.
    const createTable = async (name: string): Promise<number> => (await call('POST', `${node2.http}/engine/api/v1/table/main/${name}`, { auth: ['roamer', 'first-password-1'], body: { fields: [{ name: 'v', type: 'integer' }] } })).status;
    assert.equal(await createTable('roamer_before'), 403, 'a reader may not create a table');
    assert.equal((await action(node3, admin3, 'admin', 'createRole', { roleName: 'table_maker', grants: [{ commands: ['table.create'], resources: ['*'] }] })).errorCode, 0);
    await barrier(node3, [node1]);
    assert.equal((await action(node1, admin1, 'admin', 'assignRolesToAccounts', { usernames: ['roamer'], roleNames: ['table_maker'] })).errorCode, 0);
    await barrier(node1, [node2]);
    assert.equal(await createTable('roamer_after'), 200, 'a table created on node2 with the role made through node3 and given through node1');

    // Its password changed through node2: the old one is refused on node1 (where it was cached)
    // and node3, the new one works, and node3's session with the old password has ended.
    assert.equal((await action(node2, admin2, 'admin', 'alterAccount', { username: 'roamer', password: 'second-password-2' })).errorCode, 0);
    await barrier(node2, [node1, node3]);
    assert.equal(await restStatus(node1, 'roamer', 'first-password-1'), 401, 'the old password on node1, where it was cached');
    assert.notEqual((await login(node3, 'roamer', 'first-password-1')).errorCode, 0, 'the old password on node3');
    assert.equal((await login(node3, 'roamer', 'second-password-2')).errorCode, 0, 'the new password on node3');
    assert.notEqual((await action(node3, onNode3.authToken!, 'admin', 'pingSession', {})).errorCode, 0, "node3's session opened with the old password has ended");

    // Deleted through node3: refused on node1 and node2.
    assert.equal((await action(node3, admin3, 'admin', 'deleteAccount', { username: 'roamer' })).errorCode, 0);
    await barrier(node3, [node1, node2]);
    assert.equal(await restStatus(node1, 'roamer', 'second-password-2'), 401, 'a deleted account on node1');
    assert.notEqual((await login(node2, 'roamer', 'second-password-2')).errorCode, 0, 'a deleted account on node2');
  });
});
