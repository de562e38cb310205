/**
 * Cluster: a login through one node right after its account was created (or re-passworded)
 * through another (docs/cluster.md, "Logging in right after an account is written elsewhere").
 * node2 reaches its nats-servers through proxies that can hold the stream's deliveries to it, so
 * node2 has surely NOT applied the account write when the login reaches it: each round would be
 * refused without the catch-up. The deliveries are let through once node2 asks the stream for its
 * tail (the catch-up), or once the login is answered, whichever comes first.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { call } from '../helpers/server';
import { clusterWithProxiedNode, type EngineNode } from '../helpers/nats-cluster';
import { DeliveryHoldProxy } from '../helpers/delivery-hold-proxy';

const ROUNDS = 4;
/** What node2 sends when it asks the stream for its tail (a catch-up). */
const STREAM_INFO = '$JS.API.STREAM.INFO.ENGINE';

type Answer = { errorCode: number; errorMessage?: string; result?: any };

async function action(node: EngineNode, authToken: string | null, api: string, name: string, params: object): Promise<Answer> {
  const answer = await call('POST', `${node.http}/api`, { auth: null, body: { api, action: name, ...(authToken ? { authToken } : {}), params } });
  return answer.json;
}

/** The CONNACK a CONNECT with this name and password gets: 0 accepted, else the refusal's code. */
function connackCode(node: EngineNode, username: string, password: string): Promise<number> {
  return new Promise((resolve) => {
    const client = mqtt.connect(node.mqtt, { clientId: `login-${username}`, username, password, reconnectPeriod: 0, connectTimeout: 60_000, protocolVersion: 5 });
    client.once('connect', () => { client.end(true); resolve(0); });
    client.once('error', (error) => { client.end(true); resolve(Number((error as { code?: number }).code ?? -1)); });
  });
}

describe('cluster: logging in on a node right after the account was written through another', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const { cluster, proxies } = clusterWithProxiedNode(1, (port) => DeliveryHoldProxy.start(port));

  let admin1: string;
  const table = 'login_after_write';
  before(async () => {
    const [node1, node2] = cluster().nodes;
    const session = await action(node1, null, 'admin', 'createSession', { username: 'admin', password: 'ADMIN' });
    admin1 = session.result.authToken;
    const created = await call('POST', `${node1.http}/engine/api/v1/table/main/${table}`, { auth: ['admin', 'ADMIN'], body: { fields: [{ name: 'v', type: 'integer' }] } });
    assert.equal(created.status, 200, created.text);
    // node2 has the table (a read that finds nothing catches up first).
    const read = await call('GET', `${node2.http}/engine/api/v1/index/main/${table}`, { auth: ['admin', 'ADMIN'] });
    assert.equal(read.status, 200, read.text);
  });

  /**
   * Runs `write` through node1 while node2 is held behind the stream, then `login` through node2;
   * node2's deliveries are let through once it asks for the stream's tail or has answered.
   */
  async function writeThenLogIn<T>(write: () => Promise<Answer>, login: () => Promise<T>): Promise<T> {
    const releaseAll = (): void => { for (const proxy of proxies) proxy.releaseDeliveries(); };
    for (const proxy of proxies) proxy.holdDeliveries();
    try {
      const written = await write();
      assert.equal(written.errorCode, 0, JSON.stringify(written));
      for (const proxy of proxies) proxy.mark();
      const answer = login();
      await Promise.race([answer.then(() => undefined, () => undefined), Promise.any(proxies.map((proxy) => proxy.sent(STREAM_INFO)))]);
      releaseAll();
      return await answer;
    } finally {
      releaseAll();
    }
  }

  it(`an account created through node1 logs in through node2 at once: MQTT CONNECT, the createSession action and REST Basic auth, ${ROUNDS} rounds`, async () => {
    const [node1, node2] = cluster().nodes;
    for (let round = 0; round < ROUNDS; round++) {
      const create = (username: string) => () => action(node1, admin1, 'admin', 'createAccount', { username, password: `pw-${username}-1`, roles: ['reader'] });

      const mqttName = `mqtt_new_${round}`;
      const code = await writeThenLogIn(create(mqttName), () => connackCode(node2, mqttName, `pw-${mqttName}-1`));
      assert.equal(code, 0, `round ${round}: CONNACK on node2 for ${mqttName}`);

      const actionName = `action_new_${round}`;
      const session = await writeThenLogIn(create(actionName), () => action(node2, null, 'admin', 'createSession', { username: actionName, password: `pw-${actionName}-1` }));
      assert.equal(session.errorCode, 0, `round ${round}: createSession on node2 for ${actionName}: ${JSON.stringify(session)}`);

      const restName = `rest_new_${round}`;
      const read = await writeThenLogIn(create(restName), () => call('GET', `${node2.http}/engine/api/v1/index/main/${table}`, { auth: [restName, `pw-${restName}-1`] }));
      assert.equal(read.status, 200, `round ${round}: REST read on node2 as ${restName}: ${read.text}`);
    }
  });

  it(`a password changed through node1 logs in through node2 at once (MQTT CONNECT, createSession, REST), and the old one is refused, ${ROUNDS} rounds`, async () => {
    const [node1, node2] = cluster().nodes;
    const names = ['mqtt_moved', 'action_moved', 'rest_moved'];
    for (const username of names) assert.equal((await action(node1, admin1, 'admin', 'createAccount', { username, password: `pw-${username}-0`, roles: ['reader'] })).errorCode, 0);
    // Each logs in on node2 once with its first password (cached there from then on).
    for (const username of names) assert.equal(await connackCode(node2, username, `pw-${username}-0`), 0, `${username} before the change`);
    for (let round = 1; round <= ROUNDS; round++) {
      const alter = (username: string) => () => action(node1, admin1, 'admin', 'alterAccount', { username, password: `pw-${username}-${round}` });
      const code = await writeThenLogIn(alter('mqtt_moved'), () => connackCode(node2, 'mqtt_moved', `pw-mqtt_moved-${round}`));
      assert.equal(code, 0, `round ${round}: CONNACK on node2 with the new password`);
      const session = await writeThenLogIn(alter('action_moved'), () => action(node2, null, 'admin', 'createSession', { username: 'action_moved', password: `pw-action_moved-${round}` }));
      assert.equal(session.errorCode, 0, `round ${round}: createSession on node2 with the new password: ${JSON.stringify(session)}`);
      const read = await writeThenLogIn(alter('rest_moved'), () => call('GET', `${node2.http}/engine/api/v1/index/main/${table}`, { auth: ['rest_moved', `pw-rest_moved-${round}`] }));
      assert.equal(read.status, 200, `round ${round}: REST read on node2 with the new password: ${read.text}`);
      assert.notEqual(await connackCode(node2, 'mqtt_moved', `pw-mqtt_moved-${round - 1}`), 0, `round ${round}: the old password is refused on node2`);
    }
  });

  it('a burst of 30 bad logins on node2 at once asks the stream for its tail a few times, not once per login, and each is refused', async () => {
    const node2 = cluster().nodes[1];
    for (const proxy of proxies) proxy.mark();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => action(node2, null, 'admin', 'createSession', { username: `nobody_${i}`, password: 'wrong-password' })));
    for (const answer of answers) assert.notEqual(answer.errorCode, 0, JSON.stringify(answer));
    const asked = proxies.reduce((sum, proxy) => sum + proxy.count(STREAM_INFO), 0);
    assert.ok(asked >= 1, 'node2 caught up for the refused logins');
    assert.ok(asked <= 10, `node2 asked the stream for its tail ${asked} times for 30 logins`);
  });
});
