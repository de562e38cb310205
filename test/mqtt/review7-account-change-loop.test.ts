/**
 * review7: account changes in a loop against live MQTT connections (kernel/engine.ts
 * closeConnectionsOf): each password or role change closes the account's connections with 0x98
 * and the client logs in again, round after round, while description changes (which close
 * nothing) flood in between. The server keeps serving: every round's connection is closed once,
 * the next login succeeds with the new password, and the account ends as the last change left it.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import type { TestServer } from '../helpers/server';
import { startServer } from '../helpers/server';
import { admin, login, ok, post } from '../actions/action-client';
import { MQTT_PORTS, brokerUrl, connectOk } from './mqtt-helpers';

function disconnectedWith(client: MqttClient): Promise<number> {
  return new Promise((resolve) => {
    client.once('disconnect', (packet: { reasonCode?: number }) => resolve(packet.reasonCode ?? 0));
  });
}

describe('review7: account changes in a loop against its live connections', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'mqtt', 'http', 'actions'], ...MQTT_PORTS });
    token = await login(server);
  });
  after(() => server.close());

  it('40 rounds of a password or role change, each closing the connection with 0x98, amid 400 description changes: every round logs in again, and the account ends as the last change left it', async () => {
    const name = 'r7looped';
    let password = 'r7looped-password-0';
    await ok(server, admin('createAccount', token, { username: name, password, roles: ['admin'] }));
    const descriptions: Array<Promise<unknown>> = [];
    for (let round = 1; round <= 40; round++) {
      const { client } = await connectOk(brokerUrl(server), { username: name, password, clientId: `${name}-client`, protocolVersion: 5, clean: true });
      // It serves the account as it is now (its roles are admin at each round's start).
      await client.publishAsync('r7loop/t', `round ${round}`, { qos: 1 });
      let closes = 0;
      client.on('disconnect', () => { closes++; });
      const closed = disconnectedWith(client);
      for (let i = 0; i < 10; i++) descriptions.push(post(server, admin('alterAccount', token, { username: name, description: `round ${round} note ${i}` })));
      if (round % 2 === 0) {
        password = `r7looped-password-${round}`;
        await ok(server, admin('alterAccount', token, { username: name, password }));
      } else {
        // Revoked and given back: two changes, the connection closed once (its client has gone by the second).
        await ok(server, admin('revokeRolesFromAccounts', token, { usernames: [name], roleNames: ['admin'] }));
        await ok(server, admin('assignRolesToAccounts', token, { usernames: [name], roleNames: ['admin'] }));
      }
      assert.equal(await closed, 0x98, `round ${round}`);
      client.end(true);
      assert.equal(closes, 1, `round ${round}: closed once`);
    }
    for (const answer of await Promise.all(descriptions)) assert.equal((answer as { json: { errorCode: number } }).json.errorCode, 0);
    const accounts = (await ok(server, admin('listAccounts', token))).accounts as Array<{ username: string; roles: string[] }>;
    assert.deepEqual(accounts.find((a) => a.username === name)?.roles, ['admin']);
    const { client } = await connectOk(brokerUrl(server), { username: name, password, clientId: `${name}-last`, protocolVersion: 5 });
    await client.subscribeAsync('r7loop/#', { qos: 1 });
    client.end(true);
  });
});
