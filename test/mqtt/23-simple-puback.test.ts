/**
 * MQTT 23: a subscriber's success PUBACK (4 bytes) is read without mqtt-packet
 * (wire/simple-puback.ts): it must read as mqtt-packet reads it, leave everything else to
 * mqtt-packet, and acknowledge deliveries through the real protocol (Receive Maximum frees its
 * places; a persistent session has nothing left to resend).
 */
import assert from 'node:assert/strict';
import mqttPacket, { type Packet } from 'mqtt-packet';
import type { TestServer } from '../helpers/server';
import { readSimplePuback } from '../../plugins/mqtt/wire/simple-puback';
import { RawClient, brokerUrl, connectPacket, parsedByMqttPacket, startBroker } from './mqtt-helpers';

const mqttPort = (server: TestServer): number => Number(new URL(brokerUrl(server)).port);
const puback = (id: number): Buffer => Buffer.from([0x40, 2, id >> 8, id & 0xff]);

/** The next PUBLISH the client gets (already received or arriving); fails if it closes first. */
async function nextPublish(client: RawClient): Promise<Packet & { messageId?: number; payload: Buffer }> {
  const packet = await client.next('publish');
  if (packet === undefined) throw new Error('closed before a PUBLISH');
  return packet;
}

describe('mqtt 23: success PUBACKs read without a parser', function () {
  this.timeout(60_000);

  it('reads a 4-byte PUBACK as mqtt-packet does, at levels 4 and 5, and leaves every other form to mqtt-packet', () => {
    for (const version of [4, 5]) {
      for (const id of [0, 1, 258, 65535]) {
        // After a PINGREQ: read at an offset of the chunk.
        const bytes = Buffer.concat([Buffer.from([0xc0, 0]), puback(id)]);
        const reference = parsedByMqttPacket(bytes, version);
        assert.ok(Array.isArray(reference), String(reference));
        assert.deepEqual({ ...readSimplePuback(bytes, 2, version) }, { ...reference[1] }, `level ${version}, id ${id}`);
      }
      // Other flags, a reason code, a cut packet, another packet type: not read here.
      for (const bytes of [[0x42, 2, 0, 1], [0x40, 3, 0, 1, 0x10], [0x40, 2, 0], [0x50, 2, 0, 1]]) {
        assert.equal(readSimplePuback(Buffer.from(bytes), 0, version), undefined, `${bytes.join(' ')} at level ${version}`);
      }
    }
  });

  describe('through the protocol', () => {
    let server: TestServer;
    before(async () => {
      server = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin' });
    });
    after(() => server.close());

    /** A publisher that sends `count` QoS 1 messages to `topic` in one write. */
    async function publish(topic: string, count: number, first = 0): Promise<void> {
      const publisher = await RawClient.open(mqttPort(server));
      try {
        publisher.send(connectPacket({ clientId: `p23-${topic.replace(/\//g, '-')}-${first}` }));
        await publisher.next('connack');
        publisher.write(Buffer.concat(Array.from({ length: count }, (_, i) => mqttPacket.generate({
          cmd: 'publish', topic, payload: Buffer.from(String(first + i)), qos: 1, messageId: i + 1, dup: false, retain: false,
        } as Packet))));
        for (let i = 0; i < count; i++) assert.ok(await publisher.next('puback'));
      } finally {
        publisher.destroy();
      }
    }

    it('level 5, Receive Maximum 4: 40 QoS 1 deliveries all come as the subscriber acknowledges them (in batches, and one PUBACK cut in two writes)', async () => {
      const subscriber = await RawClient.open(mqttPort(server), 5);
      try {
        subscriber.send(connectPacket({ clientId: 's23-window', protocolVersion: 5, properties: { receiveMaximum: 4 } }), 5);
        await subscriber.next('connack');
        subscriber.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 't23/window', qos: 1 }] } as Packet, 5);
        await subscriber.next('suback');
        const published = publish('t23/window', 40);
        const got: string[] = [];
        for (let round = 0; got.length < 40; round++) {
          // The broker sends at most 4 before their PUBACKs free places.
          const batch = [];
          for (let i = 0; i < 4 && got.length < 40; i++) {
            const packet = await nextPublish(subscriber);
            got.push(packet.payload.toString());
            batch.push(puback(packet.messageId!));
          }
          const bytes = Buffer.concat(batch);
          if (round === 3) {
            // A PUBACK cut by the end of a write: its start goes to mqtt-packet, which reads the rest.
            subscriber.write(bytes.subarray(0, 6));
            await new Promise<void>((resolve) => subscriber.socket.write(Buffer.alloc(0), () => resolve()));
            subscriber.write(bytes.subarray(6));
          } else {
            subscriber.write(bytes);
          }
        }
        assert.deepEqual(got, Array.from({ length: 40 }, (_, i) => String(i)));
        await published;
      } finally {
        subscriber.destroy();
      }
    });

    it('level 4, persistent session: acknowledged deliveries are not sent again on reconnect', async () => {
      const connect = { clientId: 's23-persist', clean: false };
      const first = await RawClient.open(mqttPort(server));
      first.send(connectPacket(connect));
      await first.next('connack');
      first.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 't23/persist', qos: 1 }] } as Packet);
      await first.next('suback');
      await publish('t23/persist', 10);
      const ids: number[] = [];
      for (let i = 0; i < 10; i++) ids.push((await nextPublish(first)).messageId!);
      first.write(Buffer.concat(ids.map(puback)));
      // A PINGRESP after the PUBACKs: the broker has read them.
      first.send({ cmd: 'pingreq' } as Packet);
      assert.ok(await first.next('pingresp'));
      first.destroy();
      await first.closed;

      const again = await RawClient.open(mqttPort(server));
      try {
        again.send(connectPacket(connect));
        assert.equal((await again.next('connack')).sessionPresent, true);
        // Anything unacknowledged would be resent before this new message.
        await publish('t23/persist', 1, 100);
        assert.equal((await nextPublish(again)).payload.toString(), '100');
      } finally {
        again.destroy();
      }
    });
  });
});
