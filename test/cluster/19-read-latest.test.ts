/**
 * Cluster: `cluster_read_consistency: "latest"` (docs/cluster.md, "What is guaranteed"). node2
 * reaches its nats-servers through proxies that hold the stream's deliveries to it, so when a read
 * reaches node2 it surely has NOT applied the change node1 just acknowledged: each case answers the
 * old state unless the read waits for the stream's tail first. The deliveries are let through once
 * node2 asks the stream for its tail, or once the read is answered, whichever comes first.
 */
import assert from 'node:assert/strict';
import { call, type HttpResult } from '../helpers/server';
import { clusterWithProxiedNode } from '../helpers/nats-cluster';
import { DeliveryHoldProxy } from '../helpers/delivery-hold-proxy';

const ROUNDS = 3;
/** What node2 sends when it asks the stream for its tail. */
const STREAM_INFO = '$JS.API.STREAM.INFO.ENGINE';
const ADMIN: [string, string] = ['admin', 'ADMIN'];

describe('cluster: reads on a node set to cluster_read_consistency "latest" see what another node acknowledged before', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const { cluster, proxies } = clusterWithProxiedNode(1, (port) => DeliveryHoldProxy.start(port), { settings: { cluster_read_consistency: 'latest' } });

  const table = 'read_latest';
  const record = (node: { http: string }, id: number): Promise<HttpResult> => call('GET', `${node.http}/engine/api/v1/record/main/${table}/${id}`, { auth: ADMIN });

  before(async () => {
    const [node1, node2] = cluster().nodes;
    const created = await call('POST', `${node1.http}/engine/api/v1/table/main/${table}`, { auth: ADMIN, body: { fields: [{ name: 'v', type: 'integer' }] } });
    assert.equal(created.status, 200, created.text);
    for (let id = 1; id <= ROUNDS + 1; id++) {
      const inserted = await call('POST', `${node1.http}/engine/api/v1/record/main/${table}`, { auth: ADMIN, body: { v: 0 } });
      assert.equal(inserted.status, 200, inserted.text);
    }
    // node2 has them all before the cases hold its deliveries.
    const last = await record(node2, ROUNDS + 1);
    assert.equal(last.status, 200, last.text);
  });

  /** Runs `write` through node1 while node2 is held behind the stream, then `read` through node2. */
  async function writeThenRead<T>(write: () => Promise<HttpResult>, read: () => Promise<T>): Promise<T> {
    const releaseAll = (): void => { for (const proxy of proxies) proxy.releaseDeliveries(); };
    for (const proxy of proxies) proxy.holdDeliveries();
    try {
      const written = await write();
      assert.equal(written.status, 200, written.text);
      for (const proxy of proxies) proxy.mark();
      const answer = read();
      await Promise.race([answer.then(() => undefined, () => undefined), Promise.any(proxies.map((proxy) => proxy.sent(STREAM_INFO)))]);
      releaseAll();
      return await answer;
    } finally {
      releaseAll();
    }
  }

  it(`a record changed through node1 reads with its new value through node2 at once (REST GET and getRecordsUsingSql), ${ROUNDS} rounds`, async () => {
    const [node1, node2] = cluster().nodes;
    for (let round = 1; round <= ROUNDS; round++) {
      const change = (v: number) => () => call('PATCH', `${node1.http}/engine/api/v1/record/main/${table}/${round}`, { auth: ADMIN, body: { v } });
      const read = await writeThenRead(change(round * 10), () => record(node2, round));
      assert.equal(read.status, 200, read.text);
      assert.equal(read.json.v, round * 10, `round ${round}: REST GET through node2`);
      const session = await call('POST', `${node2.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      const token = session.json.result.authToken as string;
      const sql = await writeThenRead(change(round * 10 + 1), () => call('POST', `${node2.http}/api`, {
        auth: null, body: { api: 'db', action: 'getRecordsUsingSql', authToken: token, params: { sql: `SELECT v FROM ${table} WHERE id = ${round}` } },
      }));
      assert.equal(sql.json.errorCode, 0, sql.text);
      assert.deepEqual(sql.json.result.data, [{ v: round * 10 + 1 }], `round ${round}: SQL through node2`);
    }
  });

  it('a record deleted through node1 is not found through node2 at once', async () => {
    const [node1, node2] = cluster().nodes;
    const id = ROUNDS + 1;
    const read = await writeThenRead(() => call('DELETE', `${node1.http}/engine/api/v1/record/main/${table}/${id}`, { auth: ADMIN }), () => record(node2, id));
    assert.equal(read.status, 404, read.text);
  });

  it('20 reads arriving at once on node2 are each answered, asking the stream for its tail at most once each (tests/cluster/stream-tail: how they share)', async () => {
    const node2 = cluster().nodes[1];
    for (const proxy of proxies) proxy.mark();
    const reads = await Promise.all(Array.from({ length: 20 }, () => record(node2, 1)));
    for (const read of reads) assert.equal(read.status, 200, read.text);
    const asked = proxies.reduce((sum, proxy) => sum + proxy.count(STREAM_INFO), 0);
    assert.ok(asked >= 1, 'node2 asked the stream for its tail');
    assert.ok(asked <= 20, `node2 asked the stream for its tail ${asked} times for 20 reads`);
  });

  it('without a quorum a read is refused with 503 CLUSTER_NOT_CURRENT (12063) within the timeout, never answered from a copy that may be old; it is answered again once the quorum is back', async () => {
    const node2 = cluster().nodes[1];
    const [, n2, n3] = cluster().nats.servers;
    await Promise.all([n2.stop('SIGKILL'), n3.stop('SIGKILL')]);
    try {
      const refused = await record(node2, 1);
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.json.errorCode, 12063, refused.text);
    } finally {
      // One after the other, as NatsCluster.start does (test/helpers/nats-cluster.ts).
      await n2.start();
      await n3.start();
    }
    // Served again by itself once the stream has its quorum (each attempt waits up to the timeout).
    let answered: HttpResult | undefined;
    for (let attempt = 0; attempt < 30 && answered?.status !== 200; attempt++) answered = await record(node2, 1);
    assert.equal(answered?.status, 200, answered?.text);
  });
});
