/**
 * Sessions: clean session 0 / clean start 0 keeps subscriptions and queues QoS 1/2 messages
 * published while the client is away; clean 1 discards; MQTT 5 session expiry; redelivery of
 * in-flight messages with DUP and the original packet id [MQTT-4.4.0-1]; QoS 2 exactly once
 * across reconnects; takeover keeps the session; all of it survives a broker restart.
 */
import assert from 'node:assert/strict';
import type { Packet } from 'mqtt-packet';
import { ManualClock } from '../helpers/manual-clock';
import type { TestServer } from '../helpers/server';
import type { RawClient } from './mqtt-helpers';
import {
  brokerRoundTrip, closeClient, openClient, publishOk, rawSession, rawSubscribe, restartBroker, startMessagingBroker,
  rawSync, storedPayloads, subscribeOk, uniqueName,
} from './session-helpers';

const V5_KEEP = { sessionExpiryInterval: 3600 };

/** CONNECT fields of a persistent raw session at this level. */
function persistent(clientId: string, protocolVersion: 4 | 5): Record<string, unknown> {
  return protocolVersion === 5 ? { clientId, protocolVersion, clean: false, properties: V5_KEEP } : { clientId, protocolVersion, clean: false };
}

/** mqtt-package options of a persistent session at this level. */
function persistentOptions(clientId: string, protocolVersion: 4 | 5): Record<string, unknown> {
  return protocolVersion === 5 ? { clientId, protocolVersion, clean: false, properties: V5_KEEP } : { clientId, protocolVersion, clean: false };
}

function ack(raw: RawClient, publish: any, protocolVersion: number): void {
  raw.send({ cmd: publish.qos === 2 ? 'pubrec' : 'puback', messageId: publish.messageId } as Packet, protocolVersion);
}

describe('mqtt 05: sessions', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => { server = await startMessagingBroker(); });
  after(() => server?.close());

  for (const protocolVersion of [4, 5] as const) {
    const level = protocolVersion === 5 ? 'MQTT 5 clean start 0 (session expiry 3600)' : '3.1.1 clean session 0';

    it(`${level} keeps subscriptions and queues QoS 1 and 2 messages published while offline; reconnect has sessionPresent`, async () => {
      const id = uniqueName('keep');
      const q1 = `${id}/q1`;
      const q2 = `${id}/q2`;
      const first = await openClient(server, persistentOptions(id, protocolVersion));
      assert.equal(first.connack.sessionPresent, false, 'a new session');
      await subscribeOk(first.client, q1, { qos: 1 });
      await subscribeOk(first.client, q2, { qos: 2 });
      await closeClient(first);

      const publisher = await openClient(server, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, q1, 'a', { qos: 1 });
      await publishOk(publisher.client, q2, 'b', { qos: 2 });
      await publishOk(publisher.client, q1, 'c', { qos: 1 });

      const again = await openClient(server, persistentOptions(id, protocolVersion));
      assert.equal(again.connack.sessionPresent, true, 'the session was kept [MQTT-3.2.2-2]');
      const queued = await again.inbox.waitForCount(3);
      // order is promised per topic (and QoS), not across topics [MQTT-4.6.0-6]
      assert.deepEqual(queued.filter((m) => m.topic === q1).map((m) => [m.payload, m.packet.qos]), [['a', 1], ['c', 1]]);
      assert.deepEqual(queued.filter((m) => m.topic === q2).map((m) => [m.payload, m.packet.qos]), [['b', 2]]);
      // the subscriptions are still there: a live message arrives without subscribing again
      await publishOk(publisher.client, q1, 'live', { qos: 1 });
      await again.inbox.waitForPayload('live');
      assert.deepEqual(again.inbox.payloads(q1), ['a', 'c', 'live'], 'each queued message once, in order');
      assert.deepEqual(again.inbox.payloads(q2), ['b']);
      await closeClient(again);
      await closeClient(publisher);
    });

    it(`${protocolVersion === 5 ? 'MQTT 5 clean start 1' : '3.1.1 clean session 1'} discards the stored session: no sessionPresent, no subscription, nothing queued`, async () => {
      const id = uniqueName('discard');
      const topic = `${id}/t`;
      const first = await openClient(server, persistentOptions(id, protocolVersion));
      await subscribeOk(first.client, topic, { qos: 1 });
      await closeClient(first);
      const publisher = await openClient(server, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, topic, 'while-away', { qos: 1 });

      const clean = await openClient(server, { clientId: id, protocolVersion, clean: true });
      assert.equal(clean.connack.sessionPresent, false, '[MQTT-3.2.2-1]');
      const marker = `${id}/marker`;
      await subscribeOk(clean.client, marker, { qos: 1 });
      await publishOk(publisher.client, topic, 'after-clean', { qos: 1 });
      await publishOk(publisher.client, marker, 'marker', { qos: 1 });
      await clean.inbox.waitForPayload('marker');
      assert.deepEqual(clean.inbox.payloads(), ['marker'], 'neither the queued message nor the old subscription survived');
      await closeClient(clean);

      // a clean session ends with its connection [MQTT-3.1.2-6]: nothing is present afterwards
      const later = await openClient(server, persistentOptions(id, protocolVersion));
      assert.equal(later.connack.sessionPresent, false);
      await closeClient(later);
      await closeClient(publisher);
    });

    for (const qos of [1, 2] as const) {
      it(`${level}: a QoS ${qos} message not acknowledged before the connection dropped is resent with DUP=1 and its packet id [MQTT-4.4.0-1], then not again once acknowledged`, async () => {
        const id = uniqueName(`inflight${qos}`);
        const topic = `${id}/t`;
        const first = await rawSession(server, persistent(id, protocolVersion));
        assert.deepEqual(await rawSubscribe(first.raw, topic, qos, protocolVersion), [qos]);
        const publisher = await openClient(server, { clientId: uniqueName('pub') });
        await publishOk(publisher.client, topic, 'unacked', { qos });
        const sent = await first.raw.next('publish');
        assert.equal(sent.qos, qos);
        assert.equal(sent.dup, false, 'first delivery');
        first.raw.destroy();
        await first.raw.closed;

        const second = await rawSession(server, persistent(id, protocolVersion));
        assert.equal(second.connack.sessionPresent, true);
        const resent = await second.raw.next('publish');
        assert.ok(resent, 'redelivered on reconnect');
        assert.equal(resent.dup, true, 'DUP=1 on redelivery [MQTT-3.3.1-1]');
        assert.equal(resent.messageId, sent.messageId, 'the original packet identifier [MQTT-4.4.0-1]');
        assert.equal(resent.payload.toString(), 'unacked');
        assert.equal(resent.topic, topic);
        ack(second.raw, resent, protocolVersion);
        if (qos === 2) {
          const pubrel = await second.raw.next('pubrel');
          assert.equal(pubrel.messageId, sent.messageId);
          second.raw.send({ cmd: 'pubcomp', messageId: pubrel.messageId } as Packet, protocolVersion);
        }
        // the acknowledgement is taken: a later marker is the next thing delivered after a reconnect
        await rawSync(second.raw, protocolVersion);
        second.raw.destroy();
        await second.raw.closed;
        await publishOk(publisher.client, topic, 'marker', { qos });
        const third = await rawSession(server, persistent(id, protocolVersion));
        const next = await third.raw.next('publish');
        assert.equal(next.payload.toString(), 'marker', 'the acknowledged message is not sent again');
        assert.equal(next.dup, false);
        third.raw.destroy();
        await closeClient(publisher);
      });
    }

    it(`${level}: QoS 2 outgoing, PUBREC sent and PUBCOMP not: on reconnect the server resends PUBREL (not the PUBLISH) with the same id [MQTT-4.4.0-1]`, async () => {
      const id = uniqueName('pubrel');
      const topic = `${id}/t`;
      const first = await rawSession(server, persistent(id, protocolVersion));
      await rawSubscribe(first.raw, topic, 2, protocolVersion);
      const publisher = await openClient(server, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, topic, 'exactly-once', { qos: 2 });
      const sent = await first.raw.next('publish');
      first.raw.send({ cmd: 'pubrec', messageId: sent.messageId } as Packet, protocolVersion);
      const pubrel = await first.raw.next('pubrel');
      assert.equal(pubrel.messageId, sent.messageId);
      first.raw.destroy();
      await first.raw.closed;

      await publishOk(publisher.client, topic, 'marker', { qos: 2 });
      const second = await rawSession(server, persistent(id, protocolVersion));
      const resentRelease = await second.raw.next('pubrel');
      assert.ok(resentRelease, 'PUBREL resent');
      assert.equal(resentRelease.messageId, sent.messageId);
      second.raw.send({ cmd: 'pubcomp', messageId: sent.messageId } as Packet, protocolVersion);
      const next = await second.raw.next('publish');
      assert.equal(next.payload.toString(), 'marker', 'the released message is not published again');
      assert.notEqual(next.messageId, sent.messageId, 'the id of the completed flow is not reused while still in flight');
      second.raw.destroy();
      await closeClient(publisher);
    });

    it(`${level}: QoS 2 incoming across reconnect: a resent PUBLISH (DUP) is answered with PUBREC but delivered and stored once; the resent PUBREL gets PUBCOMP`, async () => {
      const id = uniqueName('in2');
      const topic = `${id}/t`;
      const subscriber = await openClient(server, { clientId: uniqueName('sub') });
      await subscribeOk(subscriber.client, topic, { qos: 2 });
      const publish = (dup: boolean): Packet => ({ cmd: 'publish', topic, payload: Buffer.from('once'), qos: 2, dup, retain: false, messageId: 42 } as Packet);

      const first = await rawSession(server, persistent(id, protocolVersion));
      first.raw.send(publish(false), protocolVersion);
      assert.equal((await first.raw.next('pubrec')).messageId, 42);
      first.raw.destroy(); // as if the PUBREC was lost: the client will send the PUBLISH again
      await first.raw.closed;

      const second = await rawSession(server, persistent(id, protocolVersion));
      second.raw.send(publish(true), protocolVersion);
      const pubrec = await second.raw.next('pubrec');
      assert.equal(pubrec.messageId, 42, 'the duplicate is acknowledged with PUBREC [MQTT-4.3.3-2]');
      second.raw.send({ cmd: 'pubrel', messageId: 42 } as Packet, protocolVersion);
      assert.equal((await second.raw.next('pubcomp')).messageId, 42);
      second.raw.destroy(); // as if the PUBCOMP was lost: the client sends the PUBREL again
      await second.raw.closed;

      const third = await rawSession(server, persistent(id, protocolVersion));
      third.raw.send({ cmd: 'pubrel', messageId: 42 } as Packet, protocolVersion);
      assert.equal((await third.raw.next('pubcomp')).messageId, 42);
      third.raw.send({ cmd: 'publish', topic, payload: Buffer.from('marker'), qos: 1, dup: false, retain: false, messageId: 43 } as Packet, protocolVersion);
      await third.raw.next('puback');
      await subscriber.inbox.waitForPayload('marker');
      assert.deepEqual(subscriber.inbox.payloads(topic), ['once', 'marker'], 'delivered once');
      assert.deepEqual(storedPayloads(server, topic), ['once', 'marker'], 'stored once');
      third.raw.destroy();
      await closeClient(subscriber);
    });

    it(`${level}: a takeover by the same client id keeps the session`, async () => {
      const id = uniqueName('takeover');
      const topic = `${id}/t`;
      const first = await openClient(server, persistentOptions(id, protocolVersion));
      await subscribeOk(first.client, topic, { qos: 1 });
      const second = await openClient(server, persistentOptions(id, protocolVersion));
      await first.closed;
      assert.equal(second.connack.sessionPresent, true, 'the session carried over');
      const publisher = await openClient(server, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, topic, 'after-takeover', { qos: 1 });
      await second.inbox.waitForPayload('after-takeover');
      assert.deepEqual(first.inbox.payloads(), [], 'the closed connection got nothing');
      await closeClient(second);
      await closeClient(publisher);
    });
  }

  it('MQTT 5 session expiry interval 0 (the default) ends the session at disconnect', async () => {
    const id = uniqueName('expiry0');
    const topic = `${id}/t`;
    const first = await openClient(server, { clientId: id, protocolVersion: 5, clean: false });
    await subscribeOk(first.client, topic, { qos: 1 });
    await closeClient(first);
    const publisher = await openClient(server, { clientId: uniqueName('pub') });
    await publishOk(publisher.client, topic, 'lost', { qos: 1 });
    const again = await openClient(server, { clientId: id, protocolVersion: 5, clean: false, properties: V5_KEEP });
    assert.equal(again.connack.sessionPresent, false, 'the session ended when the connection closed');
    await subscribeOk(again.client, `${id}/marker`, { qos: 1 });
    await publishOk(publisher.client, `${id}/marker`, 'marker', { qos: 1 });
    await again.inbox.waitForPayload('marker');
    assert.deepEqual(again.inbox.payloads(), ['marker']);
    await closeClient(again);
    await closeClient(publisher);
  });

  it('MQTT 5 DISCONNECT may shorten the session expiry to 0: the session ends', async () => {
    const id = uniqueName('disconnect0');
    const first = await openClient(server, { clientId: id, protocolVersion: 5, clean: false, properties: V5_KEEP });
    await subscribeOk(first.client, `${id}/t`, { qos: 1 });
    await first.client.endAsync(false, { reasonCode: 0, properties: { sessionExpiryInterval: 0 } });
    await first.closed;
    const again = await openClient(server, { clientId: id, protocolVersion: 5, clean: false, properties: V5_KEEP });
    assert.equal(again.connack.sessionPresent, false);
    await closeClient(again);
  });

  describe('session expiry on the engine clock', () => {
    let timed: TestServer;
    const clock = new ManualClock();
    before(async () => { timed = await startMessagingBroker({}, { clock }); });
    after(() => timed?.close());

    it('MQTT 5 session expiry N: the session is kept (with its queued messages) within N seconds of the disconnect, and gone after', async () => {
      const id = uniqueName('expiryN');
      const topic = `${id}/t`;
      const options = { clientId: id, protocolVersion: 5 as const, clean: false, properties: { sessionExpiryInterval: 60 } };
      const first = await openClient(timed, options);
      await subscribeOk(first.client, topic, { qos: 1 });
      await closeClient(first);
      const publisher = await openClient(timed, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, topic, 'kept', { qos: 1 });
      await brokerRoundTrip(timed);
      clock.advanceSeconds(59);
      const within = await openClient(timed, options);
      assert.equal(within.connack.sessionPresent, true, 'kept within the interval');
      await within.inbox.waitForPayload('kept');
      await closeClient(within); // the interval starts again at this disconnect
      await brokerRoundTrip(timed);
      clock.advanceSeconds(61);
      const after = await openClient(timed, options);
      assert.equal(after.connack.sessionPresent, false, 'expired 60 s after the disconnect [MQTT-3.1.2-23]');
      await subscribeOk(after.client, `${id}/marker`, { qos: 1 });
      await publishOk(publisher.client, topic, 'not-subscribed', { qos: 1 });
      await publishOk(publisher.client, `${id}/marker`, 'marker', { qos: 1 });
      await after.inbox.waitForPayload('marker');
      assert.deepEqual(after.inbox.payloads(), ['marker'], 'the expired session\'s subscription is gone');
      await closeClient(after);
      await closeClient(publisher);
    });
  });

  describe('across a broker restart (same data folder)', () => {
    for (const protocolVersion of [4, 5] as const) {
      it(`MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}: sessions, queued messages and in-flight QoS 1/2 state survive a restart`, async () => {
        const id = uniqueName('restart');
        const queuedTopic = `${id}/queued`;
        const inflightTopic = `${id}/inflight`;
        const releaseTopic = `${id}/release`;
        // a session with a queue: subscribed, then away while messages are published
        const away = await openClient(server, persistentOptions(`${id}-away`, protocolVersion));
        await subscribeOk(away.client, queuedTopic, { qos: 1 });
        await closeClient(away);
        // a session with a QoS 1 message in flight and one with a QoS 2 message released (PUBREL sent)
        const holder = await rawSession(server, persistent(`${id}-q1`, protocolVersion));
        await rawSubscribe(holder.raw, inflightTopic, 1, protocolVersion);
        const releaser = await rawSession(server, persistent(`${id}-q2`, protocolVersion));
        await rawSubscribe(releaser.raw, releaseTopic, 2, protocolVersion);

        const publisher = await openClient(server, { clientId: uniqueName('pub') });
        await publishOk(publisher.client, queuedTopic, 'q-a', { qos: 1 });
        await publishOk(publisher.client, queuedTopic, 'q-b', { qos: 2 });
        await publishOk(publisher.client, inflightTopic, 'in-flight', { qos: 1 });
        await publishOk(publisher.client, releaseTopic, 'released', { qos: 2 });
        const held = await holder.raw.next('publish');
        const released = await releaser.raw.next('publish');
        releaser.raw.send({ cmd: 'pubrec', messageId: released.messageId } as Packet, protocolVersion);
        await releaser.raw.next('pubrel');
        await closeClient(publisher);

        server = await restartBroker(server);
        await holder.raw.closed;
        await releaser.raw.closed;

        const back = await openClient(server, persistentOptions(`${id}-away`, protocolVersion));
        assert.equal(back.connack.sessionPresent, true, 'the session survived the restart');
        assert.deepEqual((await back.inbox.waitForCount(2)).map((m) => m.payload), ['q-a', 'q-b']);

        const holderBack = await rawSession(server, persistent(`${id}-q1`, protocolVersion));
        assert.equal(holderBack.connack.sessionPresent, true);
        const resent = await holderBack.raw.next('publish');
        assert.equal(resent.payload.toString(), 'in-flight');
        assert.equal(resent.dup, true);
        assert.equal(resent.messageId, held.messageId, 'the packet id survived the restart');

        const releaserBack = await rawSession(server, persistent(`${id}-q2`, protocolVersion));
        const pubrel = await releaserBack.raw.next('pubrel');
        assert.equal(pubrel.messageId, released.messageId, 'PUBREL resent after the restart');

        // the sessions still route live messages
        const publisherAgain = await openClient(server, { clientId: uniqueName('pub') });
        await publishOk(publisherAgain.client, queuedTopic, 'q-live', { qos: 1 });
        await back.inbox.waitForPayload('q-live');
        assert.deepEqual(back.inbox.payloads(), ['q-a', 'q-b', 'q-live']);
        holderBack.raw.destroy();
        releaserBack.raw.destroy();
        await closeClient(back);
        await closeClient(publisherAgain);
      });
    }
  });
});
