/**
 * Topic authorization (docs/mqtt.md, issue 8 §5) and `$SYS` statistics: a publish to a denied
 * topic is refused (MQTT 5 PUBACK/PUBREC 0x87) and neither stored nor delivered; a denied filter
 * gets SUBACK 0x87 (5) / 0x80 (3.1.1); a wildcard covering denied topics is granted and their
 * messages are withheld; `$SYS/#` only through a grant naming `$SYS`; `$SYS` topics create no
 * integration table. Roles are declared in the settings file (`roles`).
 */
import assert from 'node:assert/strict';
import type { Packet } from 'mqtt-packet';
import type { TestServer } from '../helpers/server';
import type { RoleSetting } from '../../kernel/settings';
import {
  closeClient, openClient, publishCode, publishOk, rawSession, startMessagingBroker, storedPayloads, subscribeCodes,
  subscribeOk, uniqueName, type Client,
} from './session-helpers';

const CONNECT_ANY = { commands: ['mq.connect'], resources: ['client:*'] };

const ROLES: RoleSetting[] = [
  {
    name: 'sensors',
    grants: [CONNECT_ANY, { commands: ['mq.publish', 'mq.subscribe'], resources: ['topic:sensors/#'] }],
    denies: [
      { commands: ['mq.subscribe'], resources: ['topic:sensors/secret'] },
      { commands: ['mq.publish'], resources: ['topic:sensors/locked'] },
    ],
  },
  { name: 'everything', grants: [CONNECT_ANY, { commands: ['mq.publish', 'mq.subscribe'], resources: ['topic:#'] }] },
  { name: 'sys-reader', grants: [CONNECT_ANY, { commands: ['mq.subscribe'], resources: ['topic:$SYS/#'] }] },
  // Resuming another account's session needs mq.takeover (docs/mqtt.md "Session ownership").
  { name: 'takers', grants: [{ commands: ['mq.takeover'], resources: ['client:*'] }] },
];

describe('mqtt 08b: topic authorization and $SYS', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => {
    server = await startMessagingBroker({ roles: ROLES });
    await server.engine.accounts.create('sensor', 'sensor-pw', ['sensors']);
    await server.engine.accounts.create('wide', 'wide-pw', ['everything']);
    await server.engine.accounts.create('sysread', 'sysread-pw', ['sys-reader']);
    await server.engine.accounts.create('sensor-taker', 'sensor-taker-pw', ['sensors', 'takers']);
  });
  after(() => server?.close());

  const as = (username: string, protocolVersion: 4 | 5 = 5): Promise<Client> =>
    openClient(server, { clientId: uniqueName(username), protocolVersion, username, password: `${username}-pw` });

  /** An admin watcher on the topic; publishes a marker there after the test's publishes and waits for it. */
  async function watcher(topic: string): Promise<{ client: Client; flush(): Promise<void> }> {
    const client = await openClient(server, { clientId: uniqueName('watch'), protocolVersion: 5 });
    await subscribeOk(client.client, topic, { qos: 1 });
    return {
      client,
      async flush() {
        await publishOk(client.client, topic, 'marker', { qos: 1 });
        await client.inbox.waitForPayload('marker');
      },
    };
  }

  for (const [what, topic] of [['not granted', 'elsewhere/x'], ['explicitly denied', 'sensors/locked']] as const) {
    it(`MQTT 5: a QoS 1 or 2 publish to a ${what} topic gets 0x87 (PUBACK / PUBREC) and is neither stored nor delivered`, async () => {
      const watch = await watcher(topic);
      const before = storedPayloads(server, topic).length;
      const sensor = await as('sensor', 5);
      assert.equal(await publishCode(sensor.client, topic, 'refused-1', { qos: 1 }), 0x87);
      assert.equal(await publishCode(sensor.client, topic, 'refused-2', { qos: 2 }), 0x87);
      await watch.flush();
      assert.deepEqual(watch.client.inbox.payloads(), ['marker'], 'nothing delivered');
      assert.deepEqual(storedPayloads(server, topic).slice(before), ['marker'], 'nothing stored');
      await closeClient(sensor);
      await closeClient(watch.client);
    });
  }

  it('3.1.1: a denied publish (QoS 0 and 1) is neither stored nor delivered; the connection is acknowledged or closed [MQTT-3.3.5-2]', async () => {
    const topic = 'elsewhere/v311';
    const watch = await watcher(topic);
    const before = storedPayloads(server, topic).length;
    const { raw } = await rawSession(server, { clientId: uniqueName('sensor311'), username: 'sensor', password: Buffer.from('sensor-pw') });
    raw.send({ cmd: 'publish', topic, payload: Buffer.from('refused-0'), qos: 0, dup: false, retain: false } as Packet);
    raw.send({ cmd: 'publish', topic, payload: Buffer.from('refused-1'), qos: 1, dup: false, retain: false, messageId: 7 } as Packet);
    const puback = await raw.next('puback'); // undefined when the server chose to close
    if (puback) assert.equal(puback.messageId, 7);
    raw.destroy();
    await watch.flush();
    assert.deepEqual(watch.client.inbox.payloads(), ['marker']);
    assert.deepEqual(storedPayloads(server, topic).slice(before), ['marker']);
    await closeClient(watch.client);
  });

  it('a granted publish from the same account is stored and delivered (the refusals above are not blanket ones)', async () => {
    const topic = 'sensors/temperature';
    const watch = await watcher(topic);
    const sensor = await as('sensor', 5);
    assert.equal(await publishCode(sensor.client, topic, '21.5', { qos: 1 }), 0);
    await watch.client.inbox.waitForPayload('21.5');
    assert.ok(storedPayloads(server, topic).includes('21.5'));
    await closeClient(sensor);
    await closeClient(watch.client);
  });

  for (const protocolVersion of [4, 5] as const) {
    const refused = protocolVersion === 5 ? 0x87 : 0x80;
    it(`${protocolVersion === 5 ? 'MQTT 5' : '3.1.1'}: a SUBSCRIBE to a denied filter gets 0x${refused.toString(16)}, the others in the same packet are granted`, async () => {
      const sensor = await as('sensor', protocolVersion);
      assert.deepEqual(await subscribeCodes(sensor.client, ['sensors/ok', 'elsewhere/#', 'sensors/secret', '#'], { qos: 1 }), [1, refused, refused, refused]);
      // the refused filters deliver nothing: a message on elsewhere/… is not received, a later one on sensors/ok is
      const admin = await openClient(server, { clientId: uniqueName('admin') });
      await publishOk(admin.client, 'elsewhere/x', 'not-for-sensor', { qos: 1 });
      await publishOk(admin.client, 'sensors/secret', 'secret', { qos: 1 });
      await publishOk(admin.client, 'sensors/ok', 'marker', { qos: 1 });
      await sensor.inbox.waitForPayload('marker');
      assert.deepEqual(sensor.inbox.payloads(), ['marker']);
      await closeClient(admin);
      await closeClient(sensor);
    });

    it(`${protocolVersion === 5 ? 'MQTT 5' : '3.1.1'}: a wildcard covering a denied topic is granted, and that topic's messages are withheld`, async () => {
      const sensor = await as('sensor', protocolVersion);
      assert.deepEqual(await subscribeCodes(sensor.client, 'sensors/#', { qos: 1 }), [1]);
      const admin = await openClient(server, { clientId: uniqueName('admin') });
      await publishOk(admin.client, 'sensors/secret', 'withheld', { qos: 1 });
      await publishOk(admin.client, 'sensors/open', 'shown', { qos: 1 });
      await publishOk(admin.client, 'sensors/secret', 'withheld-again', { qos: 0 });
      await publishOk(admin.client, 'sensors/open', 'marker', { qos: 1 });
      await sensor.inbox.waitForPayload('marker');
      assert.deepEqual(sensor.inbox.payloads(), ['shown', 'marker']);
      assert.ok(storedPayloads(server, 'sensors/secret').includes('withheld'), 'stored all the same: only delivery is withheld');
      await closeClient(admin);
      await closeClient(sensor);
    });
  }

  it('a session resumed under another account (with mq.takeover) gets only what that account may receive (decisions made for the first are not reused)', async () => {
    const clientId = uniqueName('shared-id');
    const persistent = { clientId, protocolVersion: 5 as const, clean: false, properties: { sessionExpiryInterval: 300 } };
    const first = await openClient(server, { ...persistent, username: 'wide', password: 'wide-pw' });
    await subscribeOk(first.client, 'sensors/#', { qos: 1 });
    const admin = await openClient(server, { clientId: uniqueName('admin') });
    await publishOk(admin.client, 'sensors/secret', 'seen-by-wide', { qos: 1 });
    await first.inbox.waitForPayload('seen-by-wide');
    await closeClient(first);

    const second = await openClient(server, { ...persistent, username: 'sensor-taker', password: 'sensor-taker-pw' });
    await publishOk(admin.client, 'sensors/secret', 'hidden', { qos: 1 });
    await publishOk(admin.client, 'sensors/open', 'marker', { qos: 1 });
    await second.inbox.waitForPayload('marker');
    assert.deepEqual(second.inbox.payloads(), ['marker'], 'sensors/secret is withheld from the account that resumed the session');
    await closeClient(second);
    await closeClient(admin);
  });

  describe('$SYS', () => {
    const CONNECTED = '$SYS/broker/clients/connected';

    it('an admin subscriber to $SYS/# gets broker statistics; clients connected counts it (next periodic publication)', async () => {
      const admin = await openClient(server, { clientId: uniqueName('sys-admin'), protocolVersion: 5 });
      await subscribeOk(admin.client, '$SYS/#', { qos: 0 });
      const first = await admin.inbox.waitFor((m) => m.topic === CONNECTED, CONNECTED);
      assert.match(first.payload, /^\d+$/);
      // the first may be the retained snapshot from before this client came; a later one counts it
      await admin.inbox.waitFor((m) => m.topic === CONNECTED && Number(m.payload) >= 1, `${CONNECTED} >= 1`);
      for (const topic of admin.inbox.messages.map((m) => m.topic)) assert.match(topic, /^\$SYS\/broker\//);
      await closeClient(admin);
    });

    it('$SYS topics are never stored: no catalog entry, no integration table', async () => {
      const admin = await openClient(server, { clientId: uniqueName('sys-admin'), protocolVersion: 5 });
      await subscribeOk(admin.client, '$SYS/#', { qos: 0 });
      await admin.inbox.waitFor((m) => m.topic === CONNECTED, CONNECTED);
      const log = server.engine.need('storage').messageLog;
      assert.equal(log.getTopic(CONNECTED), undefined);
      assert.deepEqual(log.listTopics().filter((topic) => topic.topic.startsWith('$')).map((topic) => topic.topic), []);
      assert.deepEqual(log.listTopics().filter((topic) => topic.table.startsWith('mqtt_msg__sys')).map((topic) => topic.table), []);
      await closeClient(admin);
    });

    it('$SYS/# is granted only by a grant naming $SYS: refused to an account holding topic:#, whose # subscription never carries $SYS messages', async () => {
      for (const protocolVersion of [4, 5] as const) {
        const wide = await as('wide', protocolVersion);
        assert.deepEqual(await subscribeCodes(wide.client, '$SYS/#', { qos: 0 }), [protocolVersion === 5 ? 0x87 : 0x80]);
        await closeClient(wide);
      }
      const wide = await as('wide', 5);
      assert.deepEqual(await subscribeCodes(wide.client, '#', { qos: 0 }), [0]);
      // a $SYS message (retained in memory or the next publication) reaches an explicit subscriber
      // after the # subscription exists…
      const reader = await as('sysread', 5);
      assert.deepEqual(await subscribeCodes(reader.client, '$SYS/broker/clients/connected', { qos: 0 }), [0]);
      await reader.inbox.waitFor((m) => m.topic === '$SYS/broker/clients/connected', 'a $SYS message');
      const extra = await openClient(server, { clientId: uniqueName('extra') });
      // …and a later marker through # arrives without any $SYS message before it [MQTT-4.7.2-1]
      const marker = uniqueName('plain/marker');
      await publishOk(extra.client, marker, 'marker', { qos: 1 });
      await wide.inbox.waitForPayload('marker');
      assert.deepEqual(wide.inbox.messages.filter((m) => m.topic.startsWith('$')).map((m) => m.topic), []);
      await closeClient(extra);
      await closeClient(reader);
      await closeClient(wide);
    });
  });
});
