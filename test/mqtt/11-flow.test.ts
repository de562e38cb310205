/**
 * MQTT 11: flow control: the broker keeps no more unacknowledged QoS 1/2 messages in flight to a
 * client than its Receive Maximum, a client exceeding the server's Receive Maximum
 * (`mqtt_receive_maximum`) is disconnected (0x93), a message larger than the client's Maximum Packet Size is not sent to it
 * (others still get it), and a subscriber that does not read does not hold up the others.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import {
  WireClient, closeClients, connectClient, connectWithInbox, publish, startPubSubBroker, unique, subscribe,
} from './pubsub-helpers';

describe('mqtt 11: flow control', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startPubSubBroker();
  });
  after(() => server?.close());

  describe('Receive Maximum towards the client', () => {
    for (const qos of [1, 2] as const) {
      it(`QoS ${qos}: never more unacknowledged PUBLISHes in flight than the client's Receive Maximum; the rest follow as acknowledgements free the window [MQTT-3.3.4-9]`, async () => {
        const receiveMaximum = 3;
        const total = 12;
        const topic = `${unique(`rm${qos}`)}/t`;
        const { wire } = await WireClient.connect(server, 5, { properties: { receiveMaximum } });
        const pub = await connectClient(server);
        try {
          await wire.subscribe(1, [{ topic, qos }]);
          // every message is stored (acknowledged to the publisher) while the subscriber acknowledges nothing
          await Promise.all(Array.from({ length: total }, (_, i) => publish(pub, topic, String(i), { qos })));
          const received: any[] = [];
          const unacknowledged = new Set<number>();
          const take = async (): Promise<void> => {
            const packet = await wire.next('publish');
            assert.ok(packet, 'the broker closed the connection');
            assert.equal(packet.qos, qos);
            assert.ok(!unacknowledged.has(packet.messageId), 'a packet id in use is not reused');
            received.push(packet);
            unacknowledged.add(packet.messageId);
          };
          // the window fills; a round trip later nothing more has come
          for (let i = 0; i < receiveMaximum; i++) await take();
          await wire.roundTrip();
          assert.equal(wire.packets.filter((entry) => entry.packet?.cmd === 'publish').length, 0,
            `no PUBLISH beyond the Receive Maximum of ${receiveMaximum} while none is acknowledged`);
          // acknowledge one at a time: exactly one more arrives each time, never more
          while (received.length < total) {
            const oldest = received.find((packet) => unacknowledged.has(packet.messageId));
            if (qos === 1) {
              wire.send({ cmd: 'puback', messageId: oldest.messageId });
            } else {
              wire.send({ cmd: 'pubrec', messageId: oldest.messageId });
              assert.equal((await wire.next('pubrel'))?.messageId, oldest.messageId);
              wire.send({ cmd: 'pubcomp', messageId: oldest.messageId }); // in flight until PUBCOMP [MQTT-4.9.0-2]
            }
            unacknowledged.delete(oldest.messageId);
            await take();
            await wire.roundTrip();
            const extra = wire.packets.filter((entry) => entry.packet?.cmd === 'publish').length;
            assert.ok(unacknowledged.size + extra <= receiveMaximum, `${unacknowledged.size + extra} in flight > ${receiveMaximum}`);
          }
          assert.deepEqual(received.map((packet) => packet.payload.toString()), Array.from({ length: total }, (_, i) => String(i)), 'all, once, in order');
        } finally {
          wire.destroy();
          await closeClients(pub);
        }
      });
    }

    it('a QoS 0 message published behind a full QoS 1 window still arrives once the window frees', async () => {
      const root = unique('rm-mixed');
      const { wire } = await WireClient.connect(server, 5, { properties: { receiveMaximum: 1 } });
      const pub = await connectClient(server);
      try {
        await wire.subscribe(1, [{ topic: `${root}/q1`, qos: 1 }, { topic: `${root}/q0`, qos: 0 }]);
        await publish(pub, `${root}/q1`, 'first', { qos: 1 });
        await publish(pub, `${root}/q1`, 'second', { qos: 1 });
        await publish(pub, `${root}/q0`, 'zero', { qos: 1 });
        const first = await wire.next('publish', (packet) => packet.topic === `${root}/q1`);
        wire.send({ cmd: 'puback', messageId: first.messageId });
        const second = await wire.next('publish', (packet) => packet.topic === `${root}/q1`);
        assert.equal(second.payload.toString(), 'second');
        wire.send({ cmd: 'puback', messageId: second.messageId });
        const zero = await wire.next('publish', (packet) => packet.topic === `${root}/q0`);
        assert.equal(zero.payload.toString(), 'zero');
        assert.equal(zero.qos, 0);
      } finally {
        wire.destroy();
        await closeClients(pub);
      }
    });
  });

  describe('Receive Maximum towards the server (mqtt_receive_maximum)', () => {
    const receiveMaximum = 3;
    let limited: TestServer;
    before(async () => { limited = await startPubSubBroker({ mqtt_receive_maximum: receiveMaximum }); });
    after(() => limited?.close());

    /** Sends QoS 2 PUBLISHes with these packet ids and waits for each PUBREC: each stays unacknowledged until its PUBREL. */
    async function holdQos2(wire: WireClient, topic: string, ids: number[]): Promise<void> {
      for (const id of ids) {
        wire.send({ cmd: 'publish', topic, qos: 2, messageId: id, payload: Buffer.from(`m${id}`), retain: false, dup: false });
        assert.equal((await wire.next('pubrec'))?.messageId, id, `PUBREC ${id}`);
      }
    }

    it('the CONNACK tells the setting; by default it is 65535', async () => {
      const { wire, connack } = await WireClient.connect(limited, 5);
      assert.equal(connack.properties?.receiveMaximum, receiveMaximum);
      wire.destroy();
      const { wire: other, connack: defaults } = await WireClient.connect(server, 5);
      assert.equal(defaults.properties?.receiveMaximum, 65535);
      other.destroy();
    });

    it('a client sending one QoS 2 PUBLISH more than the Receive Maximum while the others await PUBREL gets DISCONNECT 0x93 [MQTT-3.3.4-8]', async () => {
      const { wire } = await WireClient.connect(limited, 5);
      const topic = `${unique('rm-server')}/t`;
      await holdQos2(wire, topic, [1, 2, 3]);
      wire.send({ cmd: 'publish', topic, qos: 2, messageId: 4, payload: Buffer.from('one too many'), retain: false, dup: false });
      await wire.closed;
      assert.equal(wire.disconnect?.reasonCode, 0x93);
      assert.equal(wire.count('pubrec'), receiveMaximum, 'the one too many was not acknowledged');
    });

    it('a QoS 1 PUBLISH beyond the Receive Maximum is refused the same way (DISCONNECT 0x93)', async () => {
      const { wire } = await WireClient.connect(limited, 5);
      const topic = `${unique('rm-server-q1')}/t`;
      await holdQos2(wire, topic, [1, 2, 3]);
      wire.send({ cmd: 'publish', topic, qos: 1, messageId: 4, payload: Buffer.from('one too many'), retain: false, dup: false });
      await wire.closed;
      assert.equal(wire.disconnect?.reasonCode, 0x93);
      assert.equal(wire.count('puback'), 0);
    });

    it('PUBREL → PUBCOMP frees a place; a QoS 2 PUBLISH sent again (DUP) while awaiting PUBREL takes none', async () => {
      const { wire } = await WireClient.connect(limited, 5);
      const topic = `${unique('rm-server-free')}/t`;
      try {
        await holdQos2(wire, topic, [1, 2, 3]);
        // the same message again: acknowledged again, not counted again [MQTT-4.3.3-10]
        wire.send({ cmd: 'publish', topic, qos: 2, messageId: 3, payload: Buffer.from('m3'), retain: false, dup: true });
        assert.equal((await wire.next('pubrec'))?.messageId, 3);
        wire.send({ cmd: 'pubrel', messageId: 1 });
        assert.equal((await wire.next('pubcomp'))?.messageId, 1);
        await holdQos2(wire, topic, [4]);
        await wire.roundTrip();
        assert.equal(wire.disconnect, undefined, 'still connected');
      } finally {
        wire.destroy();
      }
    });
    it('a resumed session\'s QoS 2 awaiting PUBREL from the previous connection takes no place of the new connection\'s Receive Maximum (it applies to the current connection only, MQTT 5 §3.2.2.3.3, §4.9)', async () => {
      const clientId = unique('rm-resume');
      const topic = `${unique('rm-resume')}/t`;
      const fields = { clientId, clean: false, properties: { sessionExpiryInterval: 300 } };
      const { wire: first } = await WireClient.connect(limited, 5, fields);
      await holdQos2(first, topic, [1, 2]);
      first.destroy(); // gone without PUBREL: the session keeps ids 1 and 2 awaiting it
      await first.closed;
      const { wire, connack } = await WireClient.connect(limited, 5, fields);
      try {
        assert.equal(connack.sessionPresent, true);
        // A new connection starts with a send quota of Receive Maximum (3): three QoS 1 PUBLISHes,
        // then the PUBRELs the client owes from before.
        for (const id of [3, 4, 5]) wire.send({ cmd: 'publish', topic, qos: 1, messageId: id, payload: Buffer.from(`m${id}`), retain: false, dup: false });
        for (const id of [1, 2]) wire.send({ cmd: 'pubrel', messageId: id });
        for (const id of [3, 4, 5]) assert.equal((await wire.next('puback'))?.messageId, id, `PUBACK ${id} (DISCONNECT ${wire.disconnect?.reasonCode})`);
        for (const id of [1, 2]) assert.equal((await wire.next('pubcomp'))?.messageId, id, `PUBCOMP ${id}`);
      } finally {
        wire.destroy();
      }
    });
  });

  describe('Maximum Packet Size towards the client', () => {
    it('a message larger than a client\'s Maximum Packet Size is not sent to it (the next one is); others get it [MQTT-3.1.2-24][MQTT-3.1.2-25]', async () => {
      const topic = `${unique('mps')}/t`;
      const maximumPacketSize = 256;
      const { wire: small } = await WireClient.connect(server, 5, { properties: { maximumPacketSize } });
      const { client: big, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        await small.subscribe(1, [{ topic, qos: 1 }]);
        await subscribe(big, topic, { qos: 1 });
        const large = Buffer.alloc(1000, 0x61);
        await publish(pub, topic, large, { qos: 1 });
        await publish(pub, topic, Buffer.alloc(maximumPacketSize - 60, 0x62), { qos: 1 }); // fits with its header
        await publish(pub, topic, 'marker', { qos: 0 });
        // the small client: the fitting message and the marker only; the large one treated as sent (no window held)
        const fits = await small.next('publish');
        assert.equal(fits.payload.length, maximumPacketSize - 60, 'the large message was skipped');
        small.send({ cmd: 'puback', messageId: fits.messageId });
        const marker = await small.next('publish');
        assert.equal(marker.payload.toString(), 'marker');
        assert.ok(small.history.every((entry) => entry.bytes.length <= maximumPacketSize), 'no packet above the client\'s maximum');
        // the other subscriber got everything
        assert.deepEqual((await inbox.next(topic)).payload, large);
        assert.equal((await inbox.next(topic)).payload.length, maximumPacketSize - 60);
        assert.equal((await inbox.next(topic)).payload.toString(), 'marker');
      } finally {
        small.destroy();
        await closeClients(big, pub);
      }
    });

    it('a message too large for a client with a Receive Maximum of 1 does not block its window', async () => {
      const topic = `${unique('mps-window')}/t`;
      const { wire } = await WireClient.connect(server, 5, { properties: { maximumPacketSize: 200, receiveMaximum: 1 } });
      const pub = await connectClient(server);
      try {
        await wire.subscribe(1, [{ topic, qos: 1 }]);
        for (let i = 0; i < 3; i++) await publish(pub, topic, Buffer.alloc(500, 0x30 + i), { qos: 1 });
        await publish(pub, topic, 'after', { qos: 1 });
        const after = await wire.next('publish');
        assert.equal(after.payload.toString(), 'after', 'skipped messages count as sent [MQTT-3.1.2-25]');
      } finally {
        wire.destroy();
        await closeClients(pub);
      }
    });
  });

  describe('slow subscribers', () => {
    it('a subscriber that does not read does not stop other subscribers or the publisher', async () => {
      const topic = `${unique('slow')}/t`;
      const { wire: slow } = await WireClient.connect(server, 5);
      const { client: fast, inbox } = await connectWithInbox(server);
      const pub = await connectClient(server);
      try {
        await slow.subscribe(1, [{ topic, qos: 0 }, { topic: `${topic}/q1`, qos: 1 }]);
        slow.socket.pause(); // reads nothing more: its receive buffer and the broker's send buffer fill up
        await subscribe(fast, [topic, `${topic}/q1`], { qos: 1 });
        const count = 600;
        const payload = Buffer.alloc(8 * 1024, 0x7a); // 600 × 8 KiB ≈ 4.7 MiB: far beyond the socket buffers
        const acks = [];
        for (let i = 0; i < count; i++) {
          payload.writeUInt32BE(i, 0);
          acks.push(publish(pub, i % 2 ? `${topic}/q1` : topic, Buffer.from(payload), { qos: 1 }));
        }
        await Promise.all(acks);
        for (let i = 0; i < count; i++) {
          const message = await inbox.take();
          assert.equal(message.payload.readUInt32BE(0), i, 'the fast subscriber gets every message, in order');
        }
      } finally {
        slow.destroy();
        await closeClients(fast, pub);
      }
    });
  });
});
