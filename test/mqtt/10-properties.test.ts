/**
 * MQTT 10 (MQTT 5 properties): user properties forwarded unaltered and in order, content type,
 * response topic, correlation data and payload format indicator forwarded; message expiry (the
 * remaining interval forwarded, an expired message never delivered) on the engine clock, which
 * the suite drives by hand; topic aliases from client to server and from server to client.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { ManualClock } from '../helpers/manual-clock';
import {
  WireClient, closeClients, connectClient, connectWithInbox, publish, publishV5Bytes, startPubSubBroker, subscribe, unique,
  userPropertiesInOrder, userPropertyBytes,
} from './pubsub-helpers';

describe('mqtt 10: MQTT 5 properties', function () {
  this.timeout(30_000);
  let server: TestServer;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
    server = await startPubSubBroker({}, { clock });
  });
  after(() => server?.close());

  describe('forwarded properties', () => {
    it('user properties reach the subscriber unaltered and in their order, repeated names included [MQTT-3.3.2-17][MQTT-3.3.2-18]', async () => {
      const topic = `${unique('userprops')}/t`;
      const { wire: sub } = await WireClient.connect(server, 5);
      const { wire: pub } = await WireClient.connect(server, 5);
      try {
        await sub.subscribe(1, [{ topic, qos: 1 }]);
        const pairs: Array<[string, string]> = [['b', '2'], ['a', '1'], ['b', 'again'], ['ünïcode', 'välue'], ['a', '1'], ['', '']];
        // wire bytes by hand: mqtt-packet groups repeated names, which would hide a reordering
        pub.write(publishV5Bytes({
          topic, qos: 1, messageId: 10,
          properties: Buffer.concat(pairs.map(([name, value]) => userPropertyBytes(name, value))),
          payload: Buffer.from('with user properties'),
        }));
        assert.equal((await pub.next('puback'))?.messageId, 10);
        const delivered = await sub.nextWire('publish');
        assert.ok(delivered);
        assert.equal(delivered.packet.payload.toString(), 'with user properties');
        assert.deepEqual(userPropertiesInOrder(delivered.bytes), pairs);
      } finally {
        sub.destroy();
        pub.destroy();
      }
    });

    it('content type, response topic, correlation data and payload format indicator are forwarded unaltered [MQTT-3.3.2-4][MQTT-3.3.2-15][MQTT-3.3.2-16][MQTT-3.3.2-20]', async () => {
      const topic = `${unique('props')}/request`;
      const { client: sub, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      const correlation = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7f]);
      try {
        await subscribe(sub, topic, { qos: 2 });
        await publish(pub, topic, '{"ask":1}', {
          qos: 2,
          properties: { contentType: 'application/vnd.test+json; charset=utf-8', responseTopic: `${topic}/reply/ü`, correlationData: correlation, payloadFormatIndicator: true },
        });
        await publish(pub, topic, Buffer.from([0xff]), { qos: 1, properties: { payloadFormatIndicator: false } });
        await publish(pub, topic, 'no properties', { qos: 0 });
        const full = await inbox.next(topic);
        assert.equal(full.packet.properties?.contentType, 'application/vnd.test+json; charset=utf-8');
        assert.equal(full.packet.properties?.responseTopic, `${topic}/reply/ü`);
        assert.deepEqual(full.packet.properties?.correlationData, correlation);
        assert.equal(full.packet.properties?.payloadFormatIndicator, true);
        const unspecified = await inbox.next(topic);
        assert.deepEqual(unspecified.payload, Buffer.from([0xff]));
        assert.ok(!unspecified.packet.properties?.payloadFormatIndicator, 'indicator 0 (unspecified bytes) stays 0');
        const bare = await inbox.next(topic);
        const props = bare.packet.properties ?? {};
        for (const name of ['contentType', 'responseTopic', 'correlationData', 'payloadFormatIndicator', 'messageExpiryInterval', 'userProperties']) {
          assert.ok(!props[name], `no ${name} invented`);
        }
      } finally {
        await closeClients(sub, pub);
      }
    });

    it('a 3.1.1 subscriber gets the payload of an MQTT 5 message with properties, and nothing breaks', async () => {
      const topic = `${unique('cross')}/t`;
      const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 4 });
      const pub = await connectClient(server);
      try {
        await subscribe(sub, topic, { qos: 1 });
        await publish(pub, topic, 'to-v4', { qos: 1, properties: { userProperties: { a: 'b' }, contentType: 'text/plain', messageExpiryInterval: 50 } });
        const got = await inbox.next(topic);
        assert.equal(got.payload.toString(), 'to-v4');
        assert.equal(got.packet.qos, 1);
      } finally {
        await closeClients(sub, pub);
      }
    });
  });

  describe('message expiry (engine clock)', () => {
    it('live delivery carries the Message Expiry Interval (no time passed: the whole interval) [MQTT-3.3.2-6]', async () => {
      const topic = `${unique('expiry-live')}/t`;
      const { client: sub, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        await subscribe(sub, topic, { qos: 1 });
        await publish(pub, topic, 'expires', { qos: 1, properties: { messageExpiryInterval: 120 } });
        assert.equal((await inbox.next(topic)).packet.properties?.messageExpiryInterval, 120);
      } finally {
        await closeClients(sub, pub);
      }
    });

    it('an offline session gets the remaining interval, and never a message that expired while it was away [MQTT-3.3.2-5][MQTT-3.3.2-6]', async () => {
      const topic = `${unique('expiry-offline')}/t`;
      const clientId = unique('expiry-session');
      const session = { clientId, clean: false, properties: { sessionExpiryInterval: 3600 } };
      const first = await connectWithInbox(server, session);
      await subscribe(first.client, topic, { qos: 1 });
      await closeClients(first.client);
      const pub = await connectClient(server);
      let second: Awaited<ReturnType<typeof connectWithInbox>> | undefined;
      try {
        await publish(pub, topic, 'expires-in-1s', { qos: 1, properties: { messageExpiryInterval: 1 } });
        await publish(pub, topic, 'expires-in-100s', { qos: 1, properties: { messageExpiryInterval: 100 } });
        await publish(pub, topic, 'expires-in-30s-qos0', { qos: 0, properties: { messageExpiryInterval: 30 } });
        await publish(pub, topic, 'never-expires', { qos: 1 });
        clock.advanceSeconds(40);
        second = await connectWithInbox(server, { ...session, clean: false });
        assert.equal(second.connack.sessionPresent, true, 'the session was kept');
        const first2 = await second.inbox.next(topic);
        const last = await second.inbox.next(topic);
        assert.deepEqual([first2.payload.toString(), last.payload.toString()], ['expires-in-100s', 'never-expires'],
          'the expired messages were not delivered, the others in order');
        assert.equal(first2.packet.properties?.messageExpiryInterval, 60, '100 s less the 40 s it waited');
        assert.equal(last.packet.properties?.messageExpiryInterval, undefined);
      } finally {
        await closeClients(pub, second?.client);
        // end the session
        const { client } = await connectWithInbox(server, { clientId, clean: true });
        await closeClients(client);
      }
    });

    it('a Message Expiry Interval of 0 reaches the subscribers connected when it is published (its onward delivery starts at once) and nothing later: not an offline session, not a new subscriber to its retained copy [MQTT-3.3.2-5]', async () => {
      const topic = `${unique('expiry-zero')}/t`;
      const clientId = unique('expiry-zero-session');
      const session = { clientId, clean: false, properties: { sessionExpiryInterval: 3600 } };
      const away = await connectWithInbox(server, session);
      await subscribe(away.client, topic, { qos: 1 });
      await closeClients(away.client);
      const { client: sub, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      let back: Awaited<ReturnType<typeof connectWithInbox>> | undefined;
      let late: Awaited<ReturnType<typeof connectWithInbox>> | undefined;
      try {
        await subscribe(sub, topic, { qos: 1 });
        await publish(pub, topic, 'zero', { qos: 1, retain: true, properties: { messageExpiryInterval: 0 } });
        await publish(pub, topic, 'marker', { qos: 1 });
        const live = await inbox.next(topic);
        assert.equal(live.payload.toString(), 'zero', 'the connected subscriber gets it');
        assert.equal(live.packet.properties?.messageExpiryInterval, 0);
        assert.equal((await inbox.next(topic)).payload.toString(), 'marker');
        back = await connectWithInbox(server, session);
        assert.equal(back.connack.sessionPresent, true);
        assert.deepEqual((await back.inbox.before(topic, 'marker')).map((m) => m.payload.toString()), [], 'the offline session does not get it');
        late = await connectWithInbox(server);
        await subscribe(late.client, topic, { qos: 1 });
        await publish(pub, topic, 'marker2', { qos: 1 });
        assert.deepEqual((await late.inbox.before(topic, 'marker2')).map((m) => m.payload.toString()), [], 'a new subscriber is not sent the retained copy');
      } finally {
        await publish(pub, topic, '', { qos: 1, retain: true }).catch(() => undefined);
        await closeClients(pub, sub, back?.client, late?.client);
        const { client } = await connectWithInbox(server, { clientId, clean: true });
        await closeClients(client);
      }
    });

    it('an expired retained message is not sent to a new subscriber; an unexpired one carries its remaining interval [MQTT-3.3.2-5]', async () => {
      const root = unique('expiry-retained');
      const pub = await connectClient(server);
      const { client: sub, inbox } = await connectWithInbox(server);
      try {
        await publish(pub, `${root}/short`, 'short', { qos: 1, retain: true, properties: { messageExpiryInterval: 5 } });
        await publish(pub, `${root}/long`, 'long', { qos: 1, retain: true, properties: { messageExpiryInterval: 500 } });
        clock.advanceSeconds(10);
        await subscribe(sub, `${root}/+`, { qos: 1 });
        await publish(pub, `${root}/short`, 'marker', { qos: 1 });
        const before = await inbox.before(`${root}/short`);
        assert.deepEqual(before.map((m) => m.payload.toString()), ['long']);
        assert.equal(before[0].packet.properties?.messageExpiryInterval, 490);
      } finally {
        await publish(pub, `${root}/long`, '', { qos: 1, retain: true }).catch(() => undefined);
        await closeClients(pub, sub);
      }
    });
  });

  describe('topic aliases, client to server', () => {
    it('CONNACK offers a Topic Alias Maximum of 65535 (docs/mqtt.md)', async () => {
      const { wire, connack } = await WireClient.connect(server, 5);
      assert.equal(connack.properties?.topicAliasMaximum, 65535);
      wire.destroy();
    });

    it('a topic alias set with a topic is used by a later PUBLISH with an empty topic, and can be remapped [3.3.2.3.4]', async () => {
      const root = unique('alias-in');
      const { client: sub, inbox } = await connectWithInbox(server);
      const { wire } = await WireClient.connect(server, 5);
      try {
        await subscribe(sub, `${root}/+`, { qos: 1 });
        const sends: Array<[string, string]> = [[`${root}/x`, 'one'], ['', 'two'], [`${root}/y`, 'three'], ['', 'four']];
        for (const [index, [topic, payload]] of sends.entries()) {
          wire.send({ cmd: 'publish', topic, qos: 1, messageId: index + 1, payload: Buffer.from(payload), retain: false, dup: false, properties: { topicAlias: 7 } });
          assert.equal((await wire.next('puback'))?.messageId, index + 1);
        }
        const got: string[] = [];
        for (let i = 0; i < 4; i++) {
          const message = await inbox.take();
          got.push(`${message.topic}:${message.payload}`);
          assert.equal(message.packet.properties?.topicAlias, undefined, 'the subscriber allowed no aliases');
        }
        assert.deepEqual(got, [`${root}/x:one`, `${root}/x:two`, `${root}/y:three`, `${root}/y:four`]);
      } finally {
        wire.destroy();
        await closeClients(sub);
      }
    });

    it('Topic Alias 0 is DISCONNECT 0x94 [MQTT-3.3.2-8]', async () => {
      const { wire } = await WireClient.connect(server, 5);
      // mqtt-packet will not encode alias 0: bytes by hand (topic, property 0x23 = 0)
      wire.write(publishV5Bytes({ topic: 'alias/zero', properties: Buffer.from([0x23, 0x00, 0x00]), payload: Buffer.from('x') }));
      wire.send({ cmd: 'pingreq' });
      assert.equal(await wire.closedOrAnswered(['pingresp']), undefined, 'closed');
      assert.equal(wire.disconnect?.reasonCode, 0x94);
      wire.destroy();
    });

    it('an empty topic with an alias this connection never mapped is a protocol error 0x82 (aliases are per connection) [3.3.2.3.4]', async () => {
      const { wire: mapper } = await WireClient.connect(server, 5);
      mapper.send({ cmd: 'publish', topic: 'alias/mapped', qos: 1, messageId: 1, payload: Buffer.from('x'), retain: false, dup: false, properties: { topicAlias: 3 } });
      await mapper.next('puback');
      const { wire } = await WireClient.connect(server, 5);
      wire.write(publishV5Bytes({ topic: '', properties: Buffer.from([0x23, 0x00, 0x03]), payload: Buffer.from('y') }));
      wire.send({ cmd: 'pingreq' });
      assert.equal(await wire.closedOrAnswered(['pingresp']), undefined, 'closed');
      assert.equal(wire.disconnect?.reasonCode, 0x82);
      wire.destroy();
      mapper.destroy();
    });
  });

  describe('topic aliases, server to client', () => {
    /** Resolves a PUBLISH stream as the client must: an alias with a topic maps it; an empty topic reads it. */
    function resolveAliases(packets: any[], maximum: number): Array<{ topic: string; payload: string; aliased: boolean }> {
      const aliases = new Map<number, string>();
      return packets.map((packet) => {
        const alias = packet.properties?.topicAlias as number | undefined;
        if (alias !== undefined) assert.ok(alias >= 1 && alias <= maximum, `alias ${alias} within 1..${maximum} [MQTT-3.1.2-26]`);
        let topic = packet.topic as string;
        if (topic === '') {
          assert.ok(alias !== undefined, 'an empty topic comes with an alias');
          assert.ok(aliases.has(alias), `alias ${alias} was mapped before`);
          topic = aliases.get(alias)!;
        } else if (alias !== undefined) {
          aliases.set(alias, topic);
        }
        return { topic, payload: packet.payload.toString(), aliased: packet.topic === '' };
      });
    }

    it('to a client that allows aliases, the broker sends a repeated topic as an empty topic + alias, never above the client\'s maximum', async () => {
      const root = unique('alias-out');
      const { wire } = await WireClient.connect(server, 5, { properties: { topicAliasMaximum: 2 } });
      const pub = await connectClient(server);
      try {
        await wire.subscribe(1, [{ topic: `${root}/#`, qos: 0 }]);
        const sequence = ['a', 'a', 'a', 'b', 'b', 'c', 'a', 'd', 'e', 'a', 'a'];
        for (const [i, leaf] of sequence.entries()) await publish(pub, `${root}/${leaf}`, String(i), { qos: 1 });
        const packets: any[] = [];
        for (let i = 0; i < sequence.length; i++) packets.push(await wire.next('publish'));
        const resolved = resolveAliases(packets, 2);
        assert.deepEqual(resolved.map((r) => `${r.topic}:${r.payload}`), sequence.map((leaf, i) => `${root}/${leaf}:${i}`));
        assert.equal(resolved[1].aliased, true, 'the second PUBLISH of a topic uses its alias');
        assert.equal(resolved[2].aliased, true);
        // the saving is real: the aliased packets are smaller than the first
        assert.ok(packets[1].length < packets[0].length);
      } finally {
        wire.destroy();
        await closeClients(pub);
      }
    });

    it('to a client that set no Topic Alias Maximum, no alias is ever sent [MQTT-3.1.2-27]', async () => {
      const root = unique('alias-none');
      const { wire } = await WireClient.connect(server, 5);
      const pub = await connectClient(server);
      try {
        await wire.subscribe(1, [{ topic: `${root}/t`, qos: 1 }]);
        for (let i = 0; i < 3; i++) await publish(pub, `${root}/t`, String(i), { qos: 1 });
        for (let i = 0; i < 3; i++) {
          const packet = await wire.next('publish');
          assert.equal(packet.topic, `${root}/t`);
          assert.equal(packet.properties?.topicAlias, undefined);
          wire.send({ cmd: 'puback', messageId: packet.messageId });
        }
      } finally {
        wire.destroy();
        await closeClients(pub);
      }
    });

    it('the mqtt package with topicAliasMaximum receives every message on its topic', async () => {
      const root = unique('alias-mqttjs');
      const { client: sub, inbox } = await connectWithInbox(server, { properties: { topicAliasMaximum: 10 } });
      const pub = await connectClient(server);
      try {
        await subscribe(sub, `${root}/+`, { qos: 1 });
        for (let i = 0; i < 5; i++) await publish(pub, `${root}/${i % 2}`, String(i), { qos: 1 });
        const got: string[] = [];
        for (let i = 0; i < 5; i++) {
          const message = await inbox.take();
          got.push(`${message.topic}:${message.payload}`);
        }
        assert.deepEqual(got, [0, 1, 2, 3, 4].map((i) => `${root}/${i % 2}:${i}`));
      } finally {
        await closeClients(sub, pub);
      }
    });
  });
});
