/**
 * MQTT 02: SUBSCRIBE / SUBACK / UNSUBSCRIBE / UNSUBACK, topic filter matching, overlapping and
 * shared subscriptions, no local, retain as published and subscription identifiers, with the
 * `mqtt` package (levels 4 and 5) and raw packets where bytes matter.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import {
  WireClient, closeClients, connectClient, connectWithInbox, publish, startPubSubBroker, subscribe, unique, unsubscribe, until,
  type Received,
} from './pubsub-helpers';

/** The Subscription Identifiers of a delivered PUBLISH, sorted ([] when none). */
function subscriptionIds(packet: any): number[] {
  const ids = packet?.properties?.subscriptionIdentifier;
  if (ids === undefined) return [];
  return (Array.isArray(ids) ? ids : [ids]).slice().sort((a: number, b: number) => a - b);
}

function topicsOf(messages: Received[]): string[] {
  return messages.map((message) => message.topic);
}

describe('mqtt 02: subscribe', function () {
  this.timeout(30_000);
  let server: TestServer;

  before(async () => {
    server = await startPubSubBroker();
  });
  after(() => server?.close());

  describe('SUBACK', () => {
    it('MQTT 5 CONNACK offers wildcards, subscription identifiers, shared subscriptions and QoS 2 (docs/mqtt.md)', async () => {
      const { wire, connack } = await WireClient.connect(server, 5);
      const properties = connack.properties ?? {};
      // absent means available [MQTT-3.2.2.3.11..13]; maximum QoS absent means 2
      assert.notEqual(properties.wildcardSubscriptionAvailable, false);
      assert.notEqual(properties.subscriptionIdentifiersAvailable, false);
      assert.notEqual(properties.sharedSubscriptionAvailable, false);
      assert.ok(properties.maximumQoS === undefined || properties.maximumQoS === 2, `maximumQoS ${String(properties.maximumQoS)}`);
      wire.destroy();
    });

    for (const version of [4, 5]) {
      it(`grants the QoS asked for, 0, 1 and 2, in order, with the SUBSCRIBE's packet id (level ${version}) [MQTT-3.8.4-1][MQTT-3.9.3-1]`, async () => {
        const { wire } = await WireClient.connect(server, version);
        const suback = await wire.subscribe(4242, [
          { topic: 'grant/zero', qos: 0 }, { topic: 'grant/one', qos: 1 }, { topic: 'grant/two', qos: 2 }, { topic: 'grant/+/x', qos: 2 },
        ]);
        assert.equal(suback.messageId, 4242);
        assert.deepEqual(suback.granted, [0, 1, 2, 2]);
        wire.destroy();
      });
    }

    it('3.1.1: a SUBSCRIBE asking QoS 3 is malformed and closes the connection without a SUBACK [MQTT-3.8.3-4]', async () => {
      const { wire } = await WireClient.connect(server, 4);
      const filter = Buffer.from('q3/t');
      // SUBSCRIBE (flags 0010), packet id 1, filter, requested QoS 3
      const body = Buffer.concat([Buffer.from([0x00, 0x01, 0x00, filter.length]), filter, Buffer.from([0x03])]);
      wire.write(Buffer.concat([Buffer.from([0x82, body.length]), body]));
      await wire.closed;
      assert.equal(wire.count('suback'), 0);
    });

    it('re-subscribing to the same filter replaces the subscription: its new QoS, one copy [MQTT-3.8.4-3]', async () => {
      const topic = `${unique('replace')}/t`;
      const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 4 });
      const pub = await connectClient(server, { protocolVersion: 4 });
      try {
        assert.deepEqual(await subscribe(sub, topic, { qos: 0 }), [0]);
        assert.deepEqual(await subscribe(sub, topic, { qos: 2 }), [2]);
        await publish(pub, topic, 'once', { qos: 2 });
        await publish(pub, topic, 'marker', { qos: 2 });
        const before = await inbox.before(topic);
        assert.deepEqual(before.map((m) => [m.payload.toString(), m.packet.qos]), [['once', 2]]);
      } finally {
        await closeClients(sub, pub);
      }
    });
  });

  describe('matching', () => {
    it('+ and # match per the standard\'s examples (4.7.1), and nothing else [MQTT-4.7.1-1][MQTT-4.7.1-2]', async () => {
      const topics = ['sport', 'sport/', 'sport/tennis', 'sport/tennis/player1', 'sport/tennis/player1/ranking',
        'sport/tennis/player1/score/wimbledon', '/finance', 'finance', 'a/b/c/d'];
      const expected: Record<string, string[]> = {
        'sport/tennis/player1/#': ['sport/tennis/player1', 'sport/tennis/player1/ranking', 'sport/tennis/player1/score/wimbledon'],
        'sport/#': ['sport', 'sport/', 'sport/tennis', 'sport/tennis/player1', 'sport/tennis/player1/ranking', 'sport/tennis/player1/score/wimbledon'],
        'sport/tennis/+': ['sport/tennis/player1'],
        'sport/+': ['sport/', 'sport/tennis'],
        '+': ['sport', 'finance'],
        '+/+': ['sport/', 'sport/tennis', '/finance'],
        '/+': ['/finance'],
        '#': topics,
        '+/tennis/#': ['sport/tennis', 'sport/tennis/player1', 'sport/tennis/player1/ranking', 'sport/tennis/player1/score/wimbledon'],
        'a/+/c/d': ['a/b/c/d'],
        'a/b/c/d': ['a/b/c/d'],
        'a/b/c': [],
        '+/+/+/+/+/+': [],
      };
      const subscribers = await Promise.all(Object.keys(expected).map(() => connectWithInbox(server, { protocolVersion: 4 })));
      const pub = await connectClient(server, { protocolVersion: 4 });
      try {
        await Promise.all(Object.keys(expected).map((filter, i) => subscribe(subscribers[i].client, [filter, 'zz/marker'])));
        for (const topic of topics) void publish(pub, topic, topic, { qos: 1 });
        await publish(pub, 'zz/marker', 'marker', { qos: 1 });
        for (const [i, filter] of Object.keys(expected).entries()) {
          const before = await subscribers[i].inbox.before('zz/marker');
          assert.deepEqual(topicsOf(before).sort(), expected[filter].slice().sort(), `filter ${filter}`);
          assert.ok(before.every((m) => m.payload.toString() === m.topic), 'payload unchanged');
        }
      } finally {
        await closeClients(pub, ...subscribers.map((s) => s.client));
      }
    });

    it('$-topics are not matched by filters starting with # or +, but by a filter naming the $ level [MQTT-4.7.2-1]', async () => {
      const filters = ['#', '+/x', '+/+', '+/#', '$test/#', '$test/+', '$test/x'];
      const subscribers = await Promise.all(filters.map(() => connectWithInbox(server, { protocolVersion: 5 })));
      const pub = await connectClient(server, { protocolVersion: 5 });
      try {
        await Promise.all(filters.map((filter, i) => subscribe(subscribers[i].client, [filter, 'zz/marker'])));
        await publish(pub, '$test/x', 'dollar', { qos: 1 });
        await publish(pub, 'zz/marker', 'marker', { qos: 1 });
        for (const [i, filter] of filters.entries()) {
          const before = await subscribers[i].inbox.before('zz/marker');
          const expected = filter.startsWith('$') ? ['$test/x'] : [];
          assert.deepEqual(topicsOf(before), expected, `filter ${filter}`);
        }
      } finally {
        await closeClients(pub, ...subscribers.map((s) => s.client));
      }
    });
  });

  describe('overlapping subscriptions', () => {
    it('MQTT 5: one copy, at the highest granted QoS, carrying every matching subscription identifier [MQTT-3.3.4-2][MQTT-3.3.4-4]', async () => {
      const root = unique('overlap');
      const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 5 });
      const pub = await connectClient(server, { protocolVersion: 5 });
      try {
        await subscribe(sub, `${root}/+`, { qos: 1, properties: { subscriptionIdentifier: 11 } });
        await subscribe(sub, `${root}/#`, { qos: 0, properties: { subscriptionIdentifier: 22 } });
        await subscribe(sub, `${root}/a`, { qos: 2 }); // no identifier
        await subscribe(sub, `${root}/b`, { qos: 0, properties: { subscriptionIdentifier: 33 } });
        await publish(pub, `${root}/a`, 'to-a', { qos: 2 });
        await publish(pub, `${root}/b`, 'to-b', { qos: 2 });
        await publish(pub, `${root}/a`, 'marker', { qos: 0 });
        const before = await inbox.before(`${root}/a`);
        assert.equal(before.length, 2, `one copy each, got ${before.map((m) => `${m.topic}:${m.payload}`).join(', ')}`);
        const [a, b] = [before.find((m) => m.topic === `${root}/a`)!, before.find((m) => m.topic === `${root}/b`)!];
        assert.equal(a.payload.toString(), 'to-a');
        assert.equal(a.packet.qos, 2, 'the highest QoS granted among the matching subscriptions');
        assert.deepEqual(subscriptionIds(a.packet), [11, 22]);
        assert.equal(b.payload.toString(), 'to-b');
        assert.equal(b.packet.qos, 1);
        assert.deepEqual(subscriptionIds(b.packet), [11, 22, 33]);
      } finally {
        await closeClients(sub, pub);
      }
    });

    it('3.1.1: one copy at the highest granted QoS [MQTT-3.3.5-1]', async () => {
      const root = unique('overlap4');
      const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 4 });
      const pub = await connectClient(server, { protocolVersion: 4 });
      try {
        await subscribe(sub, [`${root}/#`], { qos: 0 });
        await subscribe(sub, [`${root}/+`], { qos: 1 });
        await subscribe(sub, [`${root}/t`], { qos: 0 });
        await publish(pub, `${root}/t`, 'payload', { qos: 2 });
        await publish(pub, `${root}/t`, 'marker', { qos: 0 });
        const before = await inbox.before(`${root}/t`);
        assert.deepEqual(before.map((m) => [m.payload.toString(), m.packet.qos]), [['payload', 1]]);
      } finally {
        await closeClients(sub, pub);
      }
    });
  });

  describe('UNSUBSCRIBE', () => {
    it('MQTT 5: UNSUBACK 0x00 for a removed subscription, 0x11 when none existed; nothing delivered after [MQTT-3.10.4-1][MQTT-3.11.3-1]', async () => {
      const root = unique('unsub');
      const { wire } = await WireClient.connect(server, 5);
      const pub = await connectClient(server, { protocolVersion: 5 });
      try {
        await wire.subscribe(1, [{ topic: `${root}/t`, qos: 0 }, { topic: `${root}/marker`, qos: 0 }]);
        wire.send({ cmd: 'unsubscribe', messageId: 77, unsubscriptions: [`${root}/t`, `${root}/never`] });
        const unsuback = await wire.next('unsuback');
        assert.equal(unsuback.messageId, 77);
        assert.deepEqual(unsuback.granted, [0x00, 0x11]);
        await publish(pub, `${root}/t`, 'after-unsubscribe', { qos: 1 });
        await publish(pub, `${root}/marker`, 'marker', { qos: 1 });
        const marker = await wire.next('publish');
        assert.equal(marker.topic, `${root}/marker`, 'the first message after UNSUBACK is the marker');
      } finally {
        wire.destroy();
        await closeClients(pub);
      }
    });

    it('3.1.1: UNSUBACK with the packet id, also for a filter never subscribed; nothing delivered after [MQTT-3.10.4-4][MQTT-3.10.4-5]', async () => {
      const root = unique('unsub4');
      const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 4 });
      const pub = await connectClient(server, { protocolVersion: 4 });
      const { wire } = await WireClient.connect(server, 4);
      try {
        await subscribe(sub, [`${root}/t`, `${root}/marker`], { qos: 1 });
        await unsubscribe(sub, `${root}/t`);
        wire.send({ cmd: 'unsubscribe', messageId: 9, unsubscriptions: ['never/subscribed'] });
        assert.equal((await wire.next('unsuback'))?.messageId, 9);
        await publish(pub, `${root}/t`, 'after-unsubscribe', { qos: 1 });
        await publish(pub, `${root}/marker`, 'marker', { qos: 1 });
        assert.deepEqual(await inbox.before(`${root}/marker`), []);
      } finally {
        wire.destroy();
        await closeClients(sub, pub);
      }
    });
  });

  describe('invalid filters', () => {
    // A filter breaking the wildcard rules is not "correctly formed" (so not SUBACK 0x8F, which is for
    // a correctly formed filter the server does not allow): it is a protocol violation, and the server
    // MUST close the connection [MQTT-4.13.1-1] (3.1.1: [MQTT-4.8.0-1]), MQTT 5 after a DISCONNECT
    // 0x81/0x82 (4.13.1: "use 0x81 or 0x82 unless a more specific Reason Code") or 0x8F.
    const invalid = ['a/#/b', 'a/b#', 'a+/b', 'a/+b', '#/a', ''];
    for (const filter of invalid) {
      it(`MQTT 5: "${filter}" closes the connection (DISCONNECT 0x81/0x82/0x8F), no SUBACK [MQTT-4.7.1-1][MQTT-4.7.1-2][MQTT-4.7.3-1]`, async () => {
        const { wire } = await WireClient.connect(server, 5);
        wire.send({ cmd: 'subscribe', messageId: 3, subscriptions: [{ topic: filter, qos: 0 }] });
        const suback = await wire.closedOrAnswered(['suback']);
        wire.destroy();
        assert.equal(suback, undefined, `closed, no SUBACK (got ${JSON.stringify(suback)})`);
        const disconnect = wire.disconnect;
        assert.ok(disconnect, 'a DISCONNECT says why');
        assert.ok([0x81, 0x82, 0x8f].includes(disconnect.reasonCode), `reason 0x${disconnect.reasonCode?.toString(16)}`);
      });
    }

    it('3.1.1: "a/#/b" closes the connection without a SUBACK [MQTT-4.7.1-2][MQTT-4.8.0-1]', async () => {
      const { wire } = await WireClient.connect(server, 4);
      wire.send({ cmd: 'subscribe', messageId: 3, subscriptions: [{ topic: 'ok/t', qos: 0 }, { topic: 'a/#/b', qos: 0 }] });
      const suback = await wire.closedOrAnswered(['suback']);
      wire.destroy();
      assert.equal(suback, undefined, `closed, no SUBACK (got ${JSON.stringify(suback)})`);
    });

    it('MQTT 5: a Subscription Identifier of 0 is a protocol error (3.8.2.1.2)', async () => {
      const { wire } = await WireClient.connect(server, 5);
      wire.send({ cmd: 'subscribe', messageId: 3, subscriptions: [{ topic: 'sid/zero', qos: 0 }], properties: { subscriptionIdentifier: 0 } });
      await wire.closed;
      assert.equal(wire.count('suback'), 0);
      const disconnect = wire.history.find((entry) => entry.packet?.cmd === 'disconnect')?.packet;
      assert.ok(disconnect && [0x81, 0x82].includes(disconnect.reasonCode), `DISCONNECT ${JSON.stringify(disconnect)}`);
    });

    it('other clients keep being served after one sent an invalid filter', async () => {
      const { wire } = await WireClient.connect(server, 5);
      const { client: sub, inbox } = await connectWithInbox(server);
      try {
        await subscribe(sub, 'still/served');
        wire.send({ cmd: 'subscribe', messageId: 3, subscriptions: [{ topic: 'a/#/b', qos: 0 }] });
        await wire.closedOrAnswered(['suback']);
        wire.destroy();
        await publish(sub, 'still/served', 'yes');
        assert.equal((await inbox.next('still/served')).payload.toString(), 'yes');
      } finally {
        await closeClients(sub);
      }
    });
  });

  describe('shared subscriptions', () => {
    it('$share/<group>/<filter>: each message goes to exactly one member of a group; every group and plain subscriber gets every message [MQTT-4.8.2-4]', async () => {
      const root = unique('shared');
      const members = await Promise.all([0, 1, 2].map(() => connectWithInbox(server)));
      const otherGroup = await connectWithInbox(server);
      const plain = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        for (const member of members) assert.deepEqual(await subscribe(member.client, `$share/g1/${root}/+`, { qos: 1 }), [1]);
        await subscribe(otherGroup.client, `$share/g2/${root}/#`, { qos: 1 });
        await subscribe(plain.client, `${root}/+`, { qos: 1 });
        const count = 30;
        for (let i = 0; i < count; i++) void publish(pub, `${root}/t`, String(i), { qos: 1 });
        await publish(pub, `${root}/done`, 'last', { qos: 1 });
        // the plain subscriber sees every message; once it has them all, so has the broker routed them
        const all = await plain.inbox.before(`${root}/done`, 'last');
        assert.deepEqual(all.map((m) => m.payload.toString()), Array.from({ length: count }, (_, i) => String(i)));
        const groupTwo: string[] = [];
        while (groupTwo.length < count + 1) groupTwo.push((await otherGroup.inbox.take()).payload.toString());
        assert.deepEqual(groupTwo.sort(), [...Array.from({ length: count }, (_, i) => String(i)), 'last'].sort());
        // group 1: the messages spread over its members, each exactly once (count + 'last')
        const inboxes = members.map((member) => member.inbox);
        const groupMessages = (): string[] => inboxes.flatMap((inbox) => inbox.messages.map((m) => m.payload.toString()));
        await until(inboxes, () => groupMessages().length >= count + 1);
        // a marker through the group: once a member has it, the messages before it were routed
        await publish(pub, `${root}/t`, 'marker', { qos: 1 });
        await until(inboxes, () => groupMessages().includes('marker'));
        const seen = groupMessages().filter((payload) => payload !== 'marker');
        assert.deepEqual(seen.sort(), [...Array.from({ length: count }, (_, i) => String(i)), 'last'].sort(), 'each message once across the group');
      } finally {
        await closeClients(pub, plain.client, otherGroup.client, ...members.map((m) => m.client));
      }
    });

    it('a member that leaves stops getting messages; the remaining member gets them all', async () => {
      const root = unique('shared-leave');
      const stay = await connectWithInbox(server);
      const leave = await connectClient(server);
      const pub = await connectClient(server);
      try {
        await subscribe(stay.client, `$share/g/${root}/t`, { qos: 1 });
        await subscribe(leave, `$share/g/${root}/t`, { qos: 1 });
        await closeClients(leave);
        for (let i = 0; i < 10; i++) await publish(pub, `${root}/t`, String(i), { qos: 1 });
        const got: string[] = [];
        for (let i = 0; i < 10; i++) got.push((await stay.inbox.next(`${root}/t`)).payload.toString());
        assert.deepEqual(got, ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
      } finally {
        await closeClients(stay.client, pub);
      }
    });

    it('MQTT 5: No Local on a shared subscription is a protocol error [MQTT-3.8.3-4]', async () => {
      const { wire } = await WireClient.connect(server, 5);
      wire.send({ cmd: 'subscribe', messageId: 5, subscriptions: [{ topic: '$share/g/nl/t', qos: 0, nl: true }] });
      await wire.closed;
      assert.equal(wire.count('suback'), 0);
      const disconnect = wire.history.find((entry) => entry.packet?.cmd === 'disconnect')?.packet;
      assert.equal(disconnect?.reasonCode, 0x82);
    });

    it('MQTT 5: a share name with a wildcard, or with no filter after it, is a protocol error [MQTT-4.8.2-1][MQTT-4.8.2-2]', async () => {
      for (const filter of ['$share/g+/t', '$share/g#/t', '$share/g', '$share/g/']) {
        const { wire } = await WireClient.connect(server, 5);
        wire.send({ cmd: 'subscribe', messageId: 5, subscriptions: [{ topic: filter, qos: 0 }] });
        const suback = await wire.closedOrAnswered(['suback']);
        wire.destroy();
        assert.equal(suback, undefined, `${filter}: closed, no SUBACK (got ${JSON.stringify(suback)})`);
        assert.equal(wire.disconnect?.reasonCode, 0x82, filter);
      }
    });
  });

  describe('subscription options (MQTT 5)', () => {
    it('No Local: a client\'s own messages are not delivered to it; without No Local they are [MQTT-3.8.3-3]', async () => {
      const root = unique('nolocal');
      const { client: self, inbox } = await connectWithInbox(server);
      const other = await connectClient(server);
      try {
        await subscribe(self, `${root}/nl`, { qos: 1, nl: true });
        await subscribe(self, `${root}/plain`, { qos: 1, nl: false });
        await publish(self, `${root}/nl`, 'own', { qos: 1 });
        await publish(self, `${root}/plain`, 'own-plain', { qos: 1 });
        await publish(other, `${root}/nl`, 'marker', { qos: 1 });
        const before = await inbox.before(`${root}/nl`);
        assert.deepEqual(before.map((m) => `${m.topic}:${m.payload}`), [`${root}/plain:own-plain`]);
      } finally {
        await closeClients(self, other);
      }
    });

    it('Retain As Published: RETAIN kept as published with rap 1, cleared with rap 0 on live delivery [MQTT-3.3.1-12][MQTT-3.3.1-13]', async () => {
      const root = unique('rap');
      const kept = await connectWithInbox(server);
      const cleared = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        await subscribe(kept.client, `${root}/t`, { qos: 1, rap: true });
        await subscribe(cleared.client, `${root}/t`, { qos: 1, rap: false });
        await publish(pub, `${root}/t`, 'retained', { qos: 1, retain: true });
        await publish(pub, `${root}/t`, 'plain', { qos: 1, retain: false });
        const keptMessages = [await kept.inbox.next(`${root}/t`), await kept.inbox.next(`${root}/t`)];
        const clearedMessages = [await cleared.inbox.next(`${root}/t`), await cleared.inbox.next(`${root}/t`)];
        assert.deepEqual(keptMessages.map((m) => [m.payload.toString(), m.packet.retain]), [['retained', true], ['plain', false]]);
        assert.deepEqual(clearedMessages.map((m) => [m.payload.toString(), m.packet.retain]), [['retained', false], ['plain', false]]);
      } finally {
        await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
        await closeClients(kept.client, cleared.client, pub);
      }
    });

    it('Subscription Identifier: delivered with the message; none when the subscription has none; replaced by a new SUBSCRIBE (3.8.2.1.2, [MQTT-3.3.4-3])', async () => {
      const root = unique('subid');
      const { client: sub, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        await subscribe(sub, `${root}/with`, { qos: 1, properties: { subscriptionIdentifier: 268_435_455 } }); // the largest
        await subscribe(sub, `${root}/without`, { qos: 1 });
        await publish(pub, `${root}/with`, 'w', { qos: 1 });
        await publish(pub, `${root}/without`, 'n', { qos: 1 });
        assert.deepEqual(subscriptionIds((await inbox.next(`${root}/with`)).packet), [268_435_455]);
        assert.deepEqual(subscriptionIds((await inbox.next(`${root}/without`)).packet), []);
        await subscribe(sub, `${root}/with`, { qos: 1, properties: { subscriptionIdentifier: 7 } });
        await publish(pub, `${root}/with`, 'w2', { qos: 1 });
        assert.deepEqual(subscriptionIds((await inbox.next(`${root}/with`)).packet), [7]);
      } finally {
        await closeClients(sub, pub);
      }
    });

    it('Subscription Identifier on a shared subscription is delivered too', async () => {
      const root = unique('subid-shared');
      const { client: sub, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        await subscribe(sub, `$share/grp/${root}/t`, { qos: 1, properties: { subscriptionIdentifier: 99 } });
        await publish(pub, `${root}/t`, 'x', { qos: 1 });
        const got = await inbox.next(`${root}/t`);
        assert.deepEqual(subscriptionIds(got.packet), [99]);
      } finally {
        await closeClients(sub, pub);
      }
    });
  });

  it('a client holds at most 10,000 subscriptions: beyond, SUBACK 0x97 (MQTT 5) / 0x80 (3.1.1); replacing one still works', async () => {
    for (const protocolVersion of [5, 4] as const) {
      const client = await connectClient(server, { protocolVersion });
      try {
        const root = unique('many');
        for (let start = 0; start < 10_000; start += 1000) {
          const filters = Array.from({ length: 1000 }, (_, i) => `${root}/${start + i}`);
          const granted = await client.subscribeAsync(filters, { qos: 0 });
          assert.ok(granted.every((g) => g.qos === 0), 'the first 10,000 are granted');
        }
        // mqtt.js rejects an MQTT 5 SUBACK with an error code, carrying the packet.
        const refusedCode = await client.subscribeAsync(`${root}/one-more`, { qos: 0 }).then(
          (granted) => granted[0].qos,
          (error: { packet?: { granted?: number[] } }) => error.packet?.granted?.[0],
        );
        assert.equal(refusedCode, protocolVersion === 5 ? 0x97 : 0x80);
        const replaced = await client.subscribeAsync(`${root}/7`, { qos: 1 });
        assert.equal(replaced[0].qos, 1, 'an existing filter may still be replaced');
      } finally {
        await closeClients(client);
      }
    }
  });
});
