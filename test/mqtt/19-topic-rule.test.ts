/**
 * MQTT 17: the one topic name rule (kernel/topic-name.ts). A topic of 65,501 to 65,535 bytes is
 * well formed MQTT but longer than the message log stores: it is refused alone (MQTT 5: PUBACK /
 * PUBREC 0x90, the connection goes on; 3.1.1: the connection is closed), and the messages
 * published beside it in the same turn, by the same client or another, are stored and
 * acknowledged. A will topic follows the same rule. docs/mqtt.md, "Topic names".
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { MQTT_PORTS } from './mqtt-helpers';
import { startServer } from '../helpers/server';
import { WireClient, publishV5Bytes, unique, utf8String, varInt } from './pubsub-helpers';
import mqttPacket from 'mqtt-packet';

/** 65,501 UTF-8 bytes in 32,751 characters: one byte over the rule, counted in bytes, not characters. */
const TOO_LONG = `${'é'.repeat(32_750)}x`;
/** Exactly the longest topic the rule takes (65,500 bytes). */
const LONGEST = 'l'.repeat(65_500);
const TOPIC_NAME_INVALID = 0x90;

/** A 3.1.1 PUBLISH (QoS 1) from parts. */
function publishV4Bytes(topic: string, messageId: number, payload: string): Buffer {
  const id = Buffer.alloc(2);
  id.writeUInt16BE(messageId);
  const body = Buffer.concat([utf8String(topic), id, Buffer.from(payload)]);
  return Buffer.concat([Buffer.from([0x32]), varInt(body.length), body]);
}

describe('mqtt 19: the topic name rule', function () {
  this.timeout(60_000);
  let server: TestServer;
  const stored = (topic: string): number => server.engine.need('storage').messageLog.countTopic(topic);

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'data', 'messaging', 'mqtt'], ...MQTT_PORTS });
  });
  after(() => server?.close());

  it('MQTT 5: a 65,501-byte topic gets PUBACK 0x90 alone; the PUBLISH behind it in the same write and another client\'s sent at the same time are stored and acknowledged', async () => {
    const { wire: a } = await WireClient.connect(server, 5);
    const { wire: b } = await WireClient.connect(server, 5);
    const good = unique('rule/a');
    const other = unique('rule/b');
    try {
      const bad = publishV5Bytes({ topic: TOO_LONG, qos: 1, messageId: 1, payload: Buffer.from('bad') });
      a.write(Buffer.concat([bad, publishV5Bytes({ topic: good, qos: 1, messageId: 2, payload: Buffer.from('good') })]));
      b.write(publishV5Bytes({ topic: other, qos: 1, messageId: 1, payload: Buffer.from('other') }));
      const refused = await a.next('puback', (p) => p.messageId === 1);
      const accepted = await a.next('puback', (p) => p.messageId === 2);
      const otherAck = await b.next('puback', (p) => p.messageId === 1);
      assert.equal(refused?.reasonCode, TOPIC_NAME_INVALID);
      assert.equal(accepted?.reasonCode ?? 0, 0);
      assert.equal(otherAck?.reasonCode ?? 0, 0);
      assert.equal(stored(good), 1);
      assert.equal(stored(other), 1);
      assert.equal(server.engine.need('storage').messageLog.getTopic(TOO_LONG), undefined);
      assert.equal(a.disconnect, undefined, 'the connection goes on');
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it('MQTT 5: QoS 2 with a 65,501-byte topic gets PUBREC 0x90; QoS 0 is dropped and the connection goes on', async () => {
    const { wire } = await WireClient.connect(server, 5);
    try {
      wire.write(publishV5Bytes({ topic: TOO_LONG, qos: 2, messageId: 9, payload: Buffer.from('q2') }));
      const pubrec = await wire.next('pubrec', (p) => p.messageId === 9);
      assert.equal(pubrec?.reasonCode, TOPIC_NAME_INVALID);
      wire.write(publishV5Bytes({ topic: TOO_LONG, qos: 0, payload: Buffer.from('q0') }));
      await wire.roundTrip();
      assert.equal(server.engine.need('storage').messageLog.getTopic(TOO_LONG), undefined);
    } finally {
      wire.destroy();
    }
  });

  it('MQTT 3.1.1: a 65,501-byte topic closes the connection without an acknowledgement; another client\'s PUBLISH sent at the same time is stored and acknowledged', async () => {
    const { wire: a } = await WireClient.connect(server, 4);
    const { wire: b } = await WireClient.connect(server, 4);
    const other = unique('rule/v4');
    try {
      a.write(publishV4Bytes(TOO_LONG, 1, 'bad'));
      b.write(publishV4Bytes(other, 1, 'other'));
      assert.equal(await a.closedOrAnswered(['puback']), undefined, 'closed, not acknowledged');
      const ack = await b.next('puback', (p) => p.messageId === 1);
      assert.ok(ack, 'the other client is acknowledged');
      assert.equal(stored(other), 1);
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it('a topic of exactly 65,500 bytes is stored and acknowledged (MQTT 5 and 3.1.1)', async () => {
    for (const version of [5, 4]) {
      const { wire } = await WireClient.connect(server, version);
      try {
        wire.write(version === 5 ? publishV5Bytes({ topic: LONGEST, qos: 1, messageId: 3, payload: Buffer.from('x') }) : publishV4Bytes(LONGEST, 3, 'x'));
        const ack = await wire.next('puback', (p) => p.messageId === 3);
        assert.equal(ack?.reasonCode ?? 0, 0);
      } finally {
        wire.destroy();
      }
    }
    assert.equal(stored(LONGEST), 2);
  });

  it('MQTT 5: a will topic of 65,501 bytes is refused at CONNECT with 0x90', async () => {
    const wire = await WireClient.open(server.engine.need('mqtt').ports.mqtt!, 5);
    try {
      wire.write(mqttPacket.generate({
        cmd: 'connect', protocolId: 'MQTT', protocolVersion: 5, clean: true, clientId: unique('will'), keepalive: 0,
        username: 'admin', password: Buffer.from('ADMIN'), will: { topic: TOO_LONG, payload: Buffer.from('w'), qos: 0, retain: false },
      } as any, { protocolVersion: 5 }));
      const connack = await wire.next('connack');
      assert.equal(connack?.reasonCode, TOPIC_NAME_INVALID);
    } finally {
      wire.destroy();
    }
  });
});
