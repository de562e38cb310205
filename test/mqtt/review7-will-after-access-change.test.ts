/**
 * review7: the will of a connection closed because its account lost the right to publish it.
 * docs/mqtt.md: "A will to a topic the account may not publish to is not published". A live
 * connection whose account is deleted or whose roles are revoked is closed with 0x98
 * (docs/roles.md); that close is not a normal DISCONNECT, so the will is decided then, and it
 * must be decided for the account as it now is, not as it was at CONNECT.
 *
 * Each case orders a marker after the close: the marker is published (by admin) once the client
 * has heard the DISCONNECT, so a will published at the close reaches the watcher before it.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import type { TestServer } from '../helpers/server';
import { startServer } from '../helpers/server';
import { admin, login, ok } from '../actions/action-client';
import { MQTT_PORTS, brokerUrl, connectOk } from './mqtt-helpers';

function disconnectedWith(client: MqttClient): Promise<number> {
  return new Promise((resolve) => {
    client.once('disconnect', (packet: { reasonCode?: number }) => resolve(packet.reasonCode ?? 0));
  });
}

describe('review7: a will after the account lost the right to publish it', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  let watcher: MqttClient;
  const received: string[] = [];
  const markers = new Map<string, () => void>();

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'mqtt', 'http', 'actions'], ...MQTT_PORTS });
    token = await login(server);
    await ok(server, admin('createRole', token, {
      roleName: 'alarmist',
      grants: [{ commands: ['mq.connect'], resources: ['client:*'] }, { commands: ['mq.publish'], resources: ['topic:alarm/#'] }],
    }));
    ({ client: watcher } = await connectOk(brokerUrl(server), { username: 'admin', password: 'ADMIN', clientId: 'review7-will-watcher', protocolVersion: 5 }));
    watcher.on('message', (topic, payload) => {
      received.push(`${topic} ${payload.toString()}`);
      markers.get(topic)?.();
    });
    await watcher.subscribeAsync('alarm/#', { qos: 1 });
  });
  after(async () => {
    watcher?.end(true);
    await server?.close();
  });

  /** Connects `name` (role alarmist) with a will on alarm/<name>, runs `change`, and returns what the watcher got up to a marker published after the close. */
  async function willAfter(name: string, change: () => Promise<void>): Promise<string[]> {
    const password = `${name}-password-1`;
    await ok(server, admin('createAccount', token, { username: name, password, roles: ['alarmist'] }));
    const { client } = await connectOk(brokerUrl(server), {
      username: name, password, clientId: `${name}-client`, protocolVersion: 5,
      will: { topic: `alarm/${name}`, payload: Buffer.from('will'), qos: 1, retain: false },
    });
    // The role lets it publish there while it holds it.
    await client.publishAsync(`alarm/${name}`, 'allowed', { qos: 1 });
    const closed = disconnectedWith(client);
    await change();
    assert.equal(await closed, 0x98);
    client.end(true);
    const marker = `alarm/marker-${name}`;
    const markerSeen = new Promise<void>((resolve) => markers.set(marker, resolve));
    await watcher.publishAsync(marker, 'after the close', { qos: 1 });
    await markerSeen;
    return received.filter((line) => line.startsWith(`alarm/${name} `));
  }

  it('an account deleted while connected: its will is not published (a deleted account may publish nothing)', async () => {
    const got = await willAfter('r7deleted', () => ok(server, admin('deleteAccount', token, { username: 'r7deleted' })));
    assert.deepEqual(got, ['alarm/r7deleted allowed'], 'the will of the deleted account was published');
  });

  it('an account whose role granting the will topic is revoked while connected: its will is not published', async () => {
    const got = await willAfter('r7revoked', () => ok(server, admin('revokeRolesFromAccounts', token, { usernames: ['r7revoked'], roleNames: ['alarmist'] })));
    assert.deepEqual(got, ['alarm/r7revoked allowed'], 'the will was published with the revoked role');
  });

  it('an account whose password changes while connected keeps its rights: its will is published (the close is not a normal DISCONNECT)', async () => {
    const got = await willAfter('r7repassworded', () => ok(server, admin('alterAccount', token, { username: 'r7repassworded', password: 'r7repassworded-password-2' })));
    assert.deepEqual(got, ['alarm/r7repassworded allowed', 'alarm/r7repassworded will']);
  });
});
