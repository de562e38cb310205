/**
 * Review finding (review6): an account (or role) written through one node and removed through
 * another at about the same time. kernel/auth/accounts.ts `save` sets its record in memory after
 * the store's write resolves; in a cluster that is after the entry was applied from the stream and
 * committed, and the other node's removal, later in the stream, may have been applied (and told
 * through the tap) in between: the writer's node then holds again an account every store has
 * deleted, and it logs in there. Every node must hold what the stream's order leaves.
 */
import assert from 'node:assert/strict';
import { call } from '../helpers/server';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';

let barriers = 0;

async function action(node: EngineNode, authToken: string, api: string, name: string, params: object): Promise<{ errorCode: number; result?: any }> {
  return (await call('POST', `${node.http}/api`, { auth: null, body: { api, action: name, authToken, params } })).json;
}

async function adminToken(node: EngineNode): Promise<string> {
  const answer = (await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } })).json;
  assert.equal(answer.errorCode, 0);
  return answer.result.authToken;
}

/** Everything written through `writer` so far is applied on each of `readers` once this resolves. */
async function barrier(writer: EngineNode, readers: EngineNode[]): Promise<void> {
  const table = `r6barrier_${++barriers}`;
  const created = await call('POST', `${writer.http}/engine/api/v1/table/main/${table}`, { auth: ['admin', 'ADMIN'], body: { fields: [{ name: 'v', type: 'integer' }] } });
  assert.equal(created.status, 200, created.text);
  for (const reader of readers) {
    const read = await call('GET', `${reader.http}/engine/api/v1/index/main/${table}`, { auth: ['admin', 'ADMIN'] });
    assert.equal(read.status, 200, `${reader.name}: ${read.text}`);
  }
}

async function accountNames(node: EngineNode, token: string, prefix: string): Promise<string[]> {
  const listed = await action(node, token, 'admin', 'listAccounts', {});
  assert.equal(listed.errorCode, 0);
  return (listed.result.accounts as Array<{ username: string }>).map((a) => a.username).filter((name) => name.startsWith(prefix)).sort();
}

describe('cluster: an account altered through one node while deleted through another', function () {
  this.timeout(300_000);
  const suite = clusterForSuite();

  it('leaves every node holding the accounts the stream leaves (none deleted comes back on the altering node)', async () => {
    const cluster = suite();
    const [node1, node2, node3] = cluster.nodes;
    const [admin1, admin2, admin3] = await Promise.all(cluster.nodes.map(adminToken));
    for (let round = 0; round < 6; round++) {
      const prefix = `race${round}_`;
      const names = Array.from({ length: 40 }, (_, i) => `${prefix}${i}`);
      for (const username of names) assert.equal((await action(node1, admin1, 'admin', 'createAccount', { username, password: 'a-password-1' })).errorCode, 0);
      await barrier(node1, [node2, node3]);
      // The alter through node1 and the delete through node2, all at once.
      await Promise.all(names.flatMap((username) => [
        action(node1, admin1, 'admin', 'alterAccount', { username, description: `altered ${round}` }),
        action(node2, admin2, 'admin', 'deleteAccount', { username }),
      ]));
      await barrier(node1, [node2, node3]);
      await barrier(node2, [node1, node3]);
      const [on1, on2, on3] = await Promise.all([accountNames(node1, admin1, prefix), accountNames(node2, admin2, prefix), accountNames(node3, admin3, prefix)]);
      assert.deepEqual(on1, on3, `round ${round}: node1 holds what node3 (a follower of the stream) holds`);
      assert.deepEqual(on2, on3, `round ${round}: node2 holds what node3 holds`);
    }
  });
});
