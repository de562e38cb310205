/**
 * MQTT 21: a commit's PUBACKs are written together (connection.ts `writePuback`): one buffer per
 * connection per turn, with no buffer or stream write per PUBACK. What a client sees must not
 * change: every PUBACK exactly once, 4 bytes, in the order the PUBLISH packets came
 * [MQTT-4.6.0-2], and interleaved with PUBREC in that same order when QoS 1 and 2 are mixed.
 */
import assert from 'node:assert/strict';
import mqttPacket, { type Packet } from 'mqtt-packet';
import type { TestServer } from '../helpers/server';
import { MAX_TOPIC_NAME_BYTES } from '../../kernel/topic-name';
import { RawClient, brokerUrl, connectPacket, startBroker } from './mqtt-helpers';

const MESSAGES = 300;

const mqttPort = (server: TestServer): number => Number(new URL(brokerUrl(server)).port);

/** The PUBACK and PUBREC packets a client gets, in order, until `count` have come. */
async function acknowledgements(client: RawClient, count: number): Promise<Packet[]> {
  const isAck = (packet: Packet): boolean => packet.cmd === 'puback' || packet.cmd === 'pubrec';
  for (;;) {
    const acks = client.packets.filter(isAck);
    if (acks.length >= count) return acks;
    if (client.socket.destroyed) throw new Error(`closed after ${acks.length} acknowledgements`);
    await client.nextChunk();
  }
}

describe('mqtt 21: PUBACKs of a commit written together', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin' });
  });
  after(() => server.close());

  for (const version of [4, 5] as const) {
    it(`level ${version}: ${MESSAGES} QoS 1 PUBLISH sent in one write get ${MESSAGES} 4-byte PUBACKs, in publish order [MQTT-4.6.0-2]`, async () => {
      const client = await RawClient.open(mqttPort(server), version);
      try {
        client.send(connectPacket({ clientId: `batch-${version}`, protocolVersion: version }), version);
        assert.equal((await client.next('connack'))[version === 5 ? 'reasonCode' : 'returnCode'], 0);
        const bytes: Buffer[] = [];
        client.socket.on('data', (chunk: Buffer) => bytes.push(chunk));
        client.write(Buffer.concat(Array.from({ length: MESSAGES }, (_, i) => mqttPacket.generate({
          cmd: 'publish', topic: `batch/${version}`, payload: Buffer.from(String(i)), qos: 1, messageId: i + 1, dup: false, retain: false,
        } as Packet, { protocolVersion: version }))));
        const acks = await acknowledgements(client, MESSAGES);
        assert.deepEqual(acks.map((ack) => `${ack.cmd} ${ack.messageId}`), Array.from({ length: MESSAGES }, (_, i) => `puback ${i + 1}`));
        // Nothing but the PUBACKs, each 0x40 0x02 and its id (success needs no reason code at level 5 either).
        const expected = Buffer.concat(Array.from({ length: MESSAGES }, (_, i) => Buffer.from([0x40, 2, (i + 1) >> 8, (i + 1) & 0xff])));
        assert.deepEqual(Buffer.concat(bytes), expected);
      } finally {
        client.destroy();
      }
    });
  }

  it('level 5: a PUBLISH refused at once (0x99 payload format, 0x90 topic too long) is answered after the stored ones sent before it, in publish order [MQTT-4.6.0-2, MQTT-4.6.0-3]', async () => {
    const client = await RawClient.open(mqttPort(server), 5);
    try {
      client.send(connectPacket({ clientId: 'batch-refused', protocolVersion: 5 }), 5);
      assert.equal((await client.next('connack')).reasonCode, 0);
      const publish = (messageId: number, qos: 1 | 2, extra: Record<string, unknown> = {}): Buffer => mqttPacket.generate({
        cmd: 'publish', topic: 'batch/refused', payload: Buffer.from(String(messageId)), qos, messageId, dup: false, retain: false, ...extra,
      } as Packet, { protocolVersion: 5 });
      const notUtf8 = { payload: Buffer.from([0xff, 0xfe]), properties: { payloadFormatIndicator: true } };
      const tooLong = { topic: `batch/${'x'.repeat(MAX_TOPIC_NAME_BYTES)}` };
      client.write(Buffer.concat([
        publish(1, 1), publish(2, 1, notUtf8), publish(3, 2), publish(4, 1, tooLong), publish(5, 1), publish(6, 2, notUtf8), publish(7, 1),
      ]));
      const acks = await acknowledgements(client, 7);
      assert.deepEqual(acks.map((ack) => `${ack.cmd} ${ack.messageId} ${(ack as { reasonCode?: number }).reasonCode ?? 0}`), [
        'puback 1 0', 'puback 2 153', 'pubrec 3 0', 'puback 4 144', 'puback 5 0', 'pubrec 6 153', 'puback 7 0',
      ]);
    } finally {
      client.destroy();
    }
  });

  it('QoS 1 and QoS 2 PUBLISH mixed in one write get PUBACK and PUBREC in publish order [MQTT-4.6.0-2, MQTT-4.6.0-3]', async () => {
    const client = await RawClient.open(mqttPort(server));
    try {
      client.send(connectPacket({ clientId: 'batch-mixed' }));
      assert.equal((await client.next('connack')).returnCode, 0);
      const qosOf = (i: number): 1 | 2 => (i % 3 === 2 ? 2 : 1);
      client.write(Buffer.concat(Array.from({ length: 60 }, (_, i) => mqttPacket.generate({
        cmd: 'publish', topic: 'batch/mixed', payload: Buffer.from(String(i)), qos: qosOf(i), messageId: i + 1, dup: false, retain: false,
      } as Packet))));
      const acks = await acknowledgements(client, 60);
      assert.deepEqual(acks.map((ack) => `${ack.cmd} ${ack.messageId}`),
        Array.from({ length: 60 }, (_, i) => `${qosOf(i) === 1 ? 'puback' : 'pubrec'} ${i + 1}`));
    } finally {
      client.destroy();
    }
  });
});
