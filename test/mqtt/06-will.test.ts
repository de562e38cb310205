/**
 * Will messages: published when the connection ends without a normal DISCONNECT (socket dropped,
 * keep alive expired on the engine clock the test moves, MQTT 5 DISCONNECT 0x04), never after a normal one; will retain and QoS;
 * the MQTT 5 will delay (sent after the delay or when the session ends, whichever is first; not
 * sent when the client comes back in time [MQTT-3.1.3-9]); will properties forwarded; a will to a
 * topic the account may not publish to is never published.
 */
import assert from 'node:assert/strict';
import type { Packet } from 'mqtt-packet';
import type { IClientOptions } from 'mqtt';
import { ManualClock } from '../helpers/manual-clock';
import type { TestServer } from '../helpers/server';
import type { Connection } from '../../plugins/mqtt/connection';
import { brokerUrl, tryConnect } from './mqtt-helpers';
import {
  brokerRoundTrip, closeClient, dropClient, openClient, publishOk, rawSession, restartBroker, startMessagingBroker, subscribeOk, uniqueName, type Client,
} from './session-helpers';

/** A v5 admin client subscribed (QoS 2) to the topic, to see wills arrive. */
async function watch(server: TestServer, topic: string, options: IClientOptions = {}): Promise<Client> {
  const watcher = await openClient(server, { clientId: uniqueName('watch'), protocolVersion: 5, ...options });
  await subscribeOk(watcher.client, topic, { qos: 2 });
  return watcher;
}

/** Publishes a marker on the topic and waits until the watcher has it: everything before it has arrived. */
async function markerThrough(server: TestServer, watcher: Client, topic: string, options: IClientOptions = {}): Promise<void> {
  const publisher = await openClient(server, { clientId: uniqueName('marker'), ...options });
  await publishOk(publisher.client, topic, 'marker', { qos: 1 });
  await watcher.inbox.waitForPayload('marker');
  await closeClient(publisher);
}

describe('mqtt 06: will messages', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => {
    server = await startMessagingBroker();
    await server.engine.roles.create({
      name: 'will-limited',
      grants: [{ commands: ['mq.connect'], resources: ['client:*'] }, { commands: ['mq.publish', 'mq.subscribe'], resources: ['topic:allowed/#'] }],
    });
    await server.engine.accounts.create('limited', 'limited-pw', ['will-limited']);
  });
  after(() => server?.close());

  for (const protocolVersion of [4, 5] as const) {
    const level = protocolVersion === 5 ? 'MQTT 5' : '3.1.1';

    it(`${level}: the will is published when the socket drops without DISCONNECT`, async () => {
      const topic = uniqueName('will/dropped');
      const watcher = await watch(server, topic);
      const client = await openClient(server, { clientId: uniqueName('dying'), protocolVersion, will: { topic, payload: Buffer.from('gone'), qos: 0, retain: false } });
      await dropClient(client);
      const will = await watcher.inbox.waitForPayload('gone');
      assert.equal(will.topic, topic);
      await closeClient(watcher);
    });

    it(`${level}: no will after a normal DISCONNECT [MQTT-3.1.2-10]`, async () => {
      const topic = uniqueName('will/normal');
      const watcher = await watch(server, topic);
      const client = await openClient(server, { clientId: uniqueName('polite'), protocolVersion, will: { topic, payload: Buffer.from('should-not'), qos: 1, retain: false } });
      await closeClient(client);
      await markerThrough(server, watcher, topic);
      assert.deepEqual(watcher.inbox.payloads(), ['marker']);
      await closeClient(watcher);
    });

    for (const qos of [1, 2] as const) {
      it(`${level}: a will with QoS ${qos} and retain is delivered at QoS ${qos} and kept as the topic's retained message`, async () => {
        const topic = uniqueName(`will/retained${qos}`);
        const watcher = await watch(server, topic);
        const client = await openClient(server, { clientId: uniqueName('retainer'), protocolVersion, will: { topic, payload: Buffer.from(`kept-${qos}`), qos, retain: true } });
        await dropClient(client);
        const live = await watcher.inbox.waitForPayload(`kept-${qos}`);
        assert.equal(live.packet.qos, qos, 'the will QoS');
        const late = await openClient(server, { clientId: uniqueName('late'), protocolVersion });
        await subscribeOk(late.client, topic, { qos: 2 });
        const retained = await late.inbox.waitForPayload(`kept-${qos}`);
        assert.equal(retained.packet.retain, true, 'sent as a retained message to a new subscription [MQTT-3.3.1-8]');
        assert.equal(retained.packet.qos, qos);
        // clear it: an empty retained message
        await publishOk(late.client, topic, '', { qos: 1, retain: true });
        await closeClient(late);
        await closeClient(watcher);
      });
    }

    it(`${level}: a will to a topic the account may not publish to is never published`, async () => {
      const topic = uniqueName('forbidden/will');
      const watcher = await watch(server, topic);
      const attempt = await tryConnect(brokerUrl(server), {
        clientId: uniqueName('limited'), protocolVersion, username: 'limited', password: 'limited-pw',
        will: { topic, payload: Buffer.from('denied-will'), qos: 1, retain: false },
      });
      if ('refused' in attempt) {
        // refusing the CONNECT is allowed too (as Mosquitto does): then there is no will at all
        assert.equal(attempt.code, protocolVersion === 5 ? 0x87 : 0x05);
      } else {
        (attempt.client.stream as any).destroy();
        await new Promise<void>((resolve) => attempt.client.once('close', () => resolve()));
      }
      await markerThrough(server, watcher, topic);
      assert.deepEqual(watcher.inbox.payloads(), ['marker']);
      await closeClient(watcher);
    });
  }

  it('MQTT 5: DISCONNECT with reason 0x04 (disconnect with will message) publishes the will', async () => {
    const topic = uniqueName('will/0x04');
    const watcher = await watch(server, topic);
    const { raw } = await rawSession(server, { clientId: uniqueName('asking'), protocolVersion: 5, will: { topic, payload: Buffer.from('asked-for'), qos: 0, retain: false } });
    raw.send({ cmd: 'disconnect', reasonCode: 0x04 } as Packet, 5);
    await raw.closed;
    await watcher.inbox.waitForPayload('asked-for');
    await closeClient(watcher);
  });

  it('MQTT 5: will properties are forwarded (content type, response topic, correlation data, user properties, payload format, message expiry)', async () => {
    const topic = uniqueName('will/properties');
    const watcher = await watch(server, topic);
    const client = await openClient(server, {
      clientId: uniqueName('propertied'), protocolVersion: 5,
      will: {
        topic, payload: Buffer.from('with-properties'), qos: 1, retain: false,
        properties: {
          contentType: 'text/plain', responseTopic: 'replies/here', correlationData: Buffer.from('corr-1'),
          userProperties: { origin: 'will-test' }, payloadFormatIndicator: true, messageExpiryInterval: 600,
        },
      },
    });
    await dropClient(client);
    const will = await watcher.inbox.waitForPayload('with-properties');
    const properties = will.packet.properties ?? {};
    assert.equal(properties.contentType, 'text/plain');
    assert.equal(properties.responseTopic, 'replies/here');
    assert.equal(Buffer.from(properties.correlationData ?? []).toString(), 'corr-1');
    assert.deepEqual({ ...properties.userProperties }, { origin: 'will-test' });
    assert.equal(properties.payloadFormatIndicator, true);
    assert.ok(properties.messageExpiryInterval > 0 && properties.messageExpiryInterval <= 600, `remaining expiry ${properties.messageExpiryInterval}`);
    await closeClient(watcher);
  });

  describe('keep alive (engine clock)', () => {
    let timed: TestServer;
    const clock = new ManualClock();
    before(async () => { timed = await startMessagingBroker({}, { clock }); });
    after(() => timed?.close());

    for (const protocolVersion of [4, 5] as const) {
      const level = protocolVersion === 5 ? 'MQTT 5' : '3.1.1';
      it(`${level}: a client silent for more than 1.5 × its keep alive is closed and its will published; at exactly 1.5 × it is not [MQTT-3.1.2-24]`, async () => {
        const topic = uniqueName('will/silent');
        // keep alive 0: moving the clock must not close the watcher
        const watcher = await watch(timed, topic, { keepalive: 0 });
        const clientId = uniqueName('silent');
        const { raw } = await rawSession(timed, {
          clientId, protocolVersion, keepalive: 600, // far beyond the test's run: only the engine clock can expire it
          will: { topic, payload: Buffer.from('timed-out'), qos: 1, retain: false },
        });
        const connection = timed.engine.clientConnections.holder(clientId) as unknown as Connection;
        // The broker's sweep runs on a timer; called here at once after each move of the clock.
        clock.advanceSeconds(900);
        connection.broker.sweep();
        assert.equal(connection.state, 'connected', 'not closed at exactly 1.5 × the keep alive');
        clock.advanceSeconds(0.001);
        connection.broker.sweep();
        await raw.closed;
        if (protocolVersion === 5) assert.equal(raw.packets.find((packet) => packet.cmd === 'disconnect')?.reasonCode, 0x8d, 'DISCONNECT 0x8D keep alive timeout');
        await watcher.inbox.waitForPayload('timed-out');
        await closeClient(watcher);
      });
    }
  });

  describe('MQTT 5 will delay interval (engine clock)', () => {
    let timed: TestServer;
    const clock = new ManualClock();
    // keep alive 0 everywhere: moving the clock must not close the observers
    const steady = { keepalive: 0 };
    before(async () => { timed = await startMessagingBroker({}, { clock }); });
    after(() => timed?.close());

    function delayedWill(topic: string, payload: string, willDelayInterval: number, sessionExpiryInterval: number, clientId = uniqueName('delayed')): IClientOptions {
      return {
        ...steady, clientId, protocolVersion: 5, clean: false, properties: { sessionExpiryInterval },
        will: { topic, payload: Buffer.from(payload), qos: 1, retain: false, properties: { willDelayInterval } },
      };
    }

    it('is published after the delay, not before', async () => {
      const topic = uniqueName('delay/after');
      const watcher = await watch(timed, topic, steady);
      await dropClient(await openClient(timed, delayedWill(topic, 'late-will', 30, 300)));
      await markerThrough(timed, watcher, topic, steady);
      assert.deepEqual(watcher.inbox.payloads(), ['marker'], 'not before the delay');
      clock.advanceSeconds(30);
      await watcher.inbox.waitForPayload('late-will');
      assert.deepEqual(watcher.inbox.payloads(), ['marker', 'late-will']);
      await closeClient(watcher);
    });

    it('is published when the session ends, if that comes before the delay', async () => {
      const topic = uniqueName('delay/session-ends');
      const watcher = await watch(timed, topic, steady);
      await dropClient(await openClient(timed, delayedWill(topic, 'session-ended', 300, 10)));
      await markerThrough(timed, watcher, topic, steady);
      assert.deepEqual(watcher.inbox.payloads(), ['marker']);
      clock.advanceSeconds(10);
      await watcher.inbox.waitForPayload('session-ended');
      await closeClient(watcher);
    });

    it('is published at once when the session ends with the connection (session expiry 0), whatever the delay', async () => {
      const topic = uniqueName('delay/expiry0');
      const watcher = await watch(timed, topic, steady);
      await dropClient(await openClient(timed, delayedWill(topic, 'ended-now', 300, 0)));
      await watcher.inbox.waitForPayload('ended-now');
      await closeClient(watcher);
    });

    it('is not published when the client reconnects within the delay [MQTT-3.1.3-9]', async () => {
      const topic = uniqueName('delay/back');
      const watcher = await watch(timed, topic, steady);
      const id = uniqueName('returning');
      await dropClient(await openClient(timed, delayedWill(topic, 'cancelled', 30, 300, id)));
      const back = await openClient(timed, { ...steady, clientId: id, protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 300 } });
      assert.equal(back.connack.sessionPresent, true);
      clock.advanceSeconds(31);
      // a second client's delayed will, due after the first one would have been, proves the delay passed
      await dropClient(await openClient(timed, delayedWill(topic, 'proof', 30, 300)));
      await markerThrough(timed, watcher, topic, steady); // the broker has seen the drop before the clock moves on
      clock.advanceSeconds(31);
      await watcher.inbox.waitForPayload('proof');
      assert.deepEqual(watcher.inbox.payloads(), ['marker', 'proof'], 'the returning client\'s will was not sent');
      await closeClient(back);
      await closeClient(watcher);
    });

    it('a delayed will sent before a restart of the server is not sent again after it', async () => {
      const topic = uniqueName('delay/sent-once');
      const restartClock = new ManualClock();
      let server = await startMessagingBroker({}, { clock: restartClock });
      try {
        const watcher = await watch(server, topic, steady);
        await dropClient(await openClient(server, delayedWill(topic, 'once', 30, 300)));
        await markerThrough(server, watcher, topic, steady);
        restartClock.advanceSeconds(30);
        await watcher.inbox.waitForPayload('once');
        await closeClient(watcher);
        server = await restartBroker(server, {}, { clock: restartClock });
        const again = await watch(server, topic, steady);
        // A second client's delayed will, due after the first one was, proves a sweep ran after the restart.
        await dropClient(await openClient(server, delayedWill(topic, 'proof', 30, 300)));
        await markerThrough(server, again, topic, steady);
        restartClock.advanceSeconds(31);
        await again.inbox.waitForPayload('proof');
        assert.deepEqual(again.inbox.payloads(), ['marker', 'proof'], 'the will sent before the restart was not sent again');
        await closeClient(again);
      } finally {
        await server.close();
      }
    });

    it('a delayed will survives a restart of the server and is sent when its delay ends', async () => {
      const topic = uniqueName('delay/restart');
      const restartClock = new ManualClock();
      let server = await startMessagingBroker({}, { clock: restartClock });
      try {
        await dropClient(await openClient(server, delayedWill(topic, 'after-restart', 30, 300)));
        await brokerRoundTrip(server); // the drop is handled (the will is due in 30 s) before the restart
        server = await restartBroker(server, {}, { clock: restartClock });
        const watcher = await watch(server, topic, steady);
        await markerThrough(server, watcher, topic, steady);
        assert.deepEqual(watcher.inbox.payloads(), ['marker'], 'not before the delay');
        restartClock.advanceSeconds(30);
        await watcher.inbox.waitForPayload('after-restart');
        assert.deepEqual(watcher.inbox.payloads(), ['marker', 'after-restart']);
        await closeClient(watcher);
      } finally {
        await server.close();
      }
    });
  });
});
