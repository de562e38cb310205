/**
 * MQTT 24: a live connection holds the principal of its login, so one whose account or role
 * changes what it may do is closed (MQTT 5: DISCONNECT 0x98 administrative action) and logs in
 * again as the account now is (kernel/engine.ts `closeConnectionsOf`). A description change keeps
 * it, and so does an altered role: what a role grants is read at each decision.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import type { TestServer } from '../helpers/server';
import { startServer } from '../helpers/server';
import { admin, login, ok } from '../actions/action-client';
import { MQTT_PORTS } from './mqtt-helpers';
import { brokerUrl, connectOk, refusedCode } from './mqtt-helpers';

/** The reason code of the DISCONNECT the broker sends before it closes the connection. */
function disconnectedWith(client: MqttClient): Promise<number> {
  return new Promise((resolve) => {
    client.once('disconnect', (packet: { reasonCode?: number }) => resolve(packet.reasonCode ?? 0));
  });
}

describe('mqtt 24: account changes reach live connections', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  let names = 0;

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'mqtt', 'http', 'actions'], ...MQTT_PORTS });
    token = await login(server);
  });
  after(() => server.close());

  async function accountConnected(roles: string[]): Promise<{ name: string; password: string; client: MqttClient }> {
    const name = `live${++names}`;
    const password = `${name}-password-1`;
    await ok(server, admin('createAccount', token, { username: name, password, roles }));
    const { client } = await connectOk(brokerUrl(server), { username: name, password, clientId: `${name}-client`, protocolVersion: 5 });
    return { name, password, client };
  }

  it('a connected account that is deleted is disconnected with 0x98 and cannot connect again', async () => {
    const { name, password, client } = await accountConnected(['admin']);
    const disconnected = disconnectedWith(client);
    await ok(server, admin('deleteAccount', token, { username: name }));
    assert.equal(await disconnected, 0x98);
    assert.equal(await refusedCode(brokerUrl(server), { username: name, password, clientId: `${name}-again`, protocolVersion: 5 }), 0x86);
  });

  it('a connected account whose roles are revoked, or whose password changes, is disconnected with 0x98', async () => {
    const revoked = await accountConnected(['admin']);
    const revokedGone = disconnectedWith(revoked.client);
    await ok(server, admin('revokeRolesFromAccounts', token, { usernames: [revoked.name], roleNames: ['admin'] }));
    assert.equal(await revokedGone, 0x98);

    const repassworded = await accountConnected(['admin']);
    const repasswordedGone = disconnectedWith(repassworded.client);
    await ok(server, admin('alterAccount', token, { username: repassworded.name, password: 'another-password-2' }));
    assert.equal(await repasswordedGone, 0x98);
  });

  it('a connection whose account only gets a new description, or holds a role that is altered, stays (what a role grants is read at each decision)', async () => {
    await ok(server, admin('createRole', token, { roleName: 'live_publisher', grants: [{ commands: ['mq.connect'], resources: ['client:*'] }, { commands: ['mq.publish'], resources: ['topic:live/#'] }] }));
    const holder = await accountConnected(['live_publisher']);
    let holderGone = false;
    holder.client.once('disconnect', () => { holderGone = true; });
    await ok(server, admin('alterAccount', token, { username: holder.name, description: 'only a description' }));
    await ok(server, admin('alterRole', token, { roleName: 'live_publisher', grants: [{ commands: ['mq.connect'], resources: ['client:*'] }, { commands: ['mq.publish'], resources: ['topic:live/#', 'topic:more/#'] }] }));
    const puback = await holder.client.publishAsync('more/granted', 'yes', { qos: 1 });
    assert.equal((puback as { reasonCode?: number } | undefined)?.reasonCode ?? 0, 0, 'the altered role grants the new topic to the live connection');
    assert.equal(holderGone, false);
    holder.client.end(true);
  });
});
