/**
 * PUBLISH read without a parser (wire/simple-publish.ts): what it reads equals what mqtt-packet
 * reads, whatever it does not read is left to mqtt-packet, and a publisher's stream cut at any
 * byte, mixed with other packets, is stored and acknowledged exactly as sent.
 */
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import mqttPacket, { type IPublishPacket, type Packet } from 'mqtt-packet';
import { Broker } from '../../plugins/mqtt/broker';
import { packetSize } from '../../plugins/mqtt/wire/remaining-length';
import { isCutPublish, readSimplePublish } from '../../plugins/mqtt/wire/simple-publish';
import type { TestServer } from '../helpers/server';
import { connectPacket, parsedByMqttPacket, startBroker } from './mqtt-helpers';
import { closeClients, connectWithInbox, publishV5Bytes, subscribe, unique, userPropertyBytes, varInt } from './pubsub-helpers';

function publishBytes(fields: Partial<IPublishPacket>, protocolVersion: number): Buffer {
  return mqttPacket.generate({ cmd: 'publish', topic: 't', payload: Buffer.from('p'), qos: 0, retain: false, dup: false, ...fields } as Packet, { protocolVersion });
}

/** Every field a PUBLISH packet has, own keys included (a key set to undefined differs from none). */
function publishFields(packet: Packet): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(packet)) fields[key] = (packet as unknown as Record<string, unknown>)[key];
  return fields;
}

describe('mqtt 16: PUBLISH read without a parser', function () {
  this.timeout(30_000);

  describe('the reader', () => {
    const big = Buffer.alloc(20_000, 0x61); // a 3-byte remaining length
    const medium = Buffer.alloc(300, 0x62); // a 2-byte remaining length
    const cases: Array<[string, Partial<IPublishPacket>]> = [
      ['QoS 0', {}],
      ['QoS 1 with its packet id', { qos: 1, messageId: 7 }],
      ['QoS 2 with its packet id', { qos: 2, messageId: 65535 }],
      ['retain', { retain: true }],
      ['DUP on QoS 1', { qos: 1, messageId: 1, dup: true }],
      ['an empty payload', { payload: Buffer.alloc(0) }],
      ['an empty topic', { topic: '' }],
      ['a topic in UTF-8', { topic: 'çà/✓/😀' }],
      ['a 2-byte remaining length', { payload: medium }],
      ['a 3-byte remaining length', { payload: big, qos: 1, messageId: 9 }],
    ];
    for (const version of [4, 5]) {
      for (const [name, fields] of cases) {
        it(`level ${version}: reads ${name} as mqtt-packet does`, () => {
          const bytes = publishBytes(fields, version);
          const packets = parsedByMqttPacket(bytes, version);
          assert.ok(Array.isArray(packets) && packets.length === 1);
          const read = readSimplePublish(bytes, 0, version);
          assert.ok(read, 'read without a parser');
          assert.deepEqual(publishFields(read), publishFields(packets[0]));
          assert.equal(packetSize(read.length!), bytes.length, 'its size');
        });
      }
    }

    it('reads a topic of invalid UTF-8 as mqtt-packet does (U+FFFD)', () => {
      const bytes = publishBytes({ topic: 'ab' }, 4);
      bytes[5] = 0xff; // the topic's second byte
      const packets = parsedByMqttPacket(bytes, 4) as Packet[];
      assert.equal(readSimplePublish(bytes, 0, 4)?.topic, (packets[0] as IPublishPacket).topic);
      assert.equal(readSimplePublish(bytes, 0, 4)?.topic, 'a\uFFFD');
    });

    it('reads a packet at an offset, and the one after it', () => {
      const first = publishBytes({ topic: 'a', payload: Buffer.from('1') }, 4);
      const second = publishBytes({ topic: 'b', qos: 1, messageId: 3, payload: Buffer.from('22') }, 4);
      const chunk = Buffer.concat([first, second]);
      const a = readSimplePublish(chunk, 0, 4)!;
      const b = readSimplePublish(chunk, packetSize(a.length!), 4)!;
      assert.deepEqual([a.topic, a.payload.toString(), b.topic, b.payload.toString(), b.messageId], ['a', '1', 'b', '22', 3]);
    });

    const v5 = (fields: Parameters<typeof publishV5Bytes>[0]): Buffer => publishV5Bytes(fields);
    const others: Array<[string, Buffer, number]> = [
      ['MQTT 5 properties', v5({ topic: 't', properties: userPropertyBytes('k', 'v'), payload: Buffer.from('x') }), 5],
      ['MQTT 5 without its property length', Buffer.from([0x30, 0x03, 0x00, 0x01, 0x74]), 5],
      ['QoS 3', (() => { const b = publishBytes({}, 4); b[0] |= 0x06; return b; })(), 4],
      ['a remaining length not in its shortest form', Buffer.from([0x30, 0x84, 0x00, 0x00, 0x01, 0x74, 0x70, 0x70]), 4],
      ['a remaining length of 5 bytes', Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]), 4],
      ['a topic longer than the packet', Buffer.from([0x30, 0x03, 0x00, 0x09, 0x74]), 4],
      ['QoS 1 without room for its packet id', Buffer.from([0x32, 0x04, 0x00, 0x01, 0x74, 0x00]), 4],
      ['a packet cut short', publishBytes({}, 4).subarray(0, 5), 4],
      ['a lone fixed header byte', Buffer.from([0x30]), 4],
      ['a PINGREQ', Buffer.from([0xc0, 0x00]), 4],
      ['a PUBACK', Buffer.from([0x40, 0x02, 0x00, 0x01]), 4],
    ];
    for (const [name, bytes, version] of others) {
      it(`leaves ${name} to mqtt-packet`, () => {
        assert.equal(readSimplePublish(bytes, 0, version), undefined);
      });
    }

    it('keeps the start of a PUBLISH cut by a chunk for the next chunk, up to 16 KB and the packet size limit', () => {
      const small = publishBytes({ payload: Buffer.alloc(100) }, 4);
      for (let cut = 1; cut < small.length; cut++) assert.equal(isCutPublish(small.subarray(0, cut), Infinity), true, `cut after ${cut} bytes`);
      assert.equal(isCutPublish(small, Infinity), false, 'whole: not cut');
      assert.equal(isCutPublish(small.subarray(0, 10), 50), false, 'over the packet size limit: mqtt-packet refuses it');
      const large = publishBytes({ payload: Buffer.alloc(17_000) }, 4);
      assert.equal(isCutPublish(large.subarray(0, 100), Infinity), false, 'over 16 KB: mqtt-packet buffers it');
      assert.equal(isCutPublish(Buffer.from([0xc0]), Infinity), false, 'not a PUBLISH');
      assert.equal(isCutPublish(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff]), Infinity), false, 'a remaining length of 5 bytes');
    });
  });

  describe('a publisher stream cut at any byte', () => {
    let server: TestServer;
    before(async () => {
      server = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin' });
    });
    after(() => server.close());

    for (const version of [4, 5]) {
      it(`level ${version}: PUBLISHes of every QoS and size mixed with other packets, in chunks of 1 to 40 bytes, are stored and acknowledged in order`, async () => {
        const root = unique(`cut${version}`);
        const { client: subscriber, inbox } = await connectWithInbox(server);
        await subscribe(subscriber, `${root}/#`, { qos: 2 });

        // The stream: PUBLISHes of QoS 0, 1, 2 (ids 1, 2, ...), a few over 16 KB, one topic in
        // UTF-8, and PINGREQ between them; MQTT 5 also PUBLISHes with properties.
        const parts: Buffer[] = [];
        const expected: Array<{ topic: string; payload: string }> = [];
        const acks: Array<[string, number]> = [];
        let pings = 0;
        for (let i = 0; i < 120; i++) {
          const topic = i === 17 ? `${root}/é/${i % 5}` : `${root}/${i % 5}`;
          const qos = (i % 3) as 0 | 1 | 2;
          const text = `m${i}`;
          const payload = i % 40 === 39 ? Buffer.concat([Buffer.from(text), Buffer.alloc(17_000, 0x2e)]) : Buffer.from(text);
          if (version === 5 && i % 11 === 10) {
            parts.push(publishV5Bytes({ topic, qos, messageId: i + 1, properties: userPropertyBytes('n', String(i)), payload }));
          } else {
            parts.push(publishBytes({ topic, qos, messageId: qos > 0 ? i + 1 : undefined, payload }, version));
          }
          expected.push({ topic, payload: payload.toString() });
          if (qos > 0) acks.push([qos === 1 ? 'puback' : 'pubrec', i + 1]);
          if (i % 7 === 6) {
            parts.push(Buffer.from([0xc0, 0x00]));
            pings++;
          }
        }
        const stream = Buffer.concat(parts);

        const broker = new Broker(server.engine);
        const answers: Buffer[] = [];
        const answered: Packet[] = [];
        let allAnswered!: () => void;
        const done = new Promise<void>((resolve) => { allAnswered = resolve; });
        const reader = mqttPacket.parser({ protocolVersion: version });
        reader.on('packet', (packet: Packet) => {
          answered.push(packet);
          if (answered.length === 1 + acks.length + pings) allAnswered();
        });
        const peer = new Duplex({
          read() { /* pushed by the test */ },
          write(chunk: Buffer, _encoding, callback) { answers.push(chunk); reader.parse(chunk); callback(); },
        });
        broker.accept(peer, '127.0.0.1');
        peer.push(mqttPacket.generate(connectPacket({ clientId: unique('cutter'), protocolVersion: version }), { protocolVersion: version }));
        // Chunk lengths 1, 2, ..., 40, 1, 2, ...: every cut point of the small packets is met.
        for (let at = 0, length = 1; at < stream.length; at += length, length = length % 40 + 1) peer.push(stream.subarray(at, at + length));
        await done;

        assert.equal(answered[0].cmd, 'connack');
        const ackOrder = answered.filter((p) => p.cmd === 'puback' || p.cmd === 'pubrec').map((p) => [p.cmd, (p as { messageId: number }).messageId]);
        assert.deepEqual(ackOrder, acks, 'PUBACK / PUBREC for each packet id, in order');
        assert.equal(answered.filter((p) => p.cmd === 'pingresp').length, pings);
        const received: Array<{ topic: string; payload: string }> = [];
        for (let i = 0; i < expected.length; i++) {
          const got = await inbox.take();
          received.push({ topic: got.topic, payload: got.payload.toString() });
        }
        const index = (message: { payload: string }): number => Number(/^m(\d+)/.exec(message.payload)![1]);
        assert.deepEqual([...received].sort((a, b) => index(a) - index(b)), expected, 'each message once, as sent');
        // mqtt.js hands a QoS 2 message over at PUBREL, after later QoS 0 and 1 ones: those keep their order.
        const notQos2 = (message: { payload: string }): boolean => index(message) % 3 !== 2;
        assert.deepEqual(received.filter(notQos2), expected.filter(notQos2), 'in order');
        await broker.stop();
        await closeClients(subscriber);
      });
    }

    for (const [name, start] of [
      ['a PUBLISH of QoS 3 cut by a chunk', Buffer.from([0x36, 0x05, 0x00, 0x01, 0x74])],
      ['the lone first byte of a PUBLISH of QoS 3', Buffer.from([0x36])],
    ] as const) {
      it(`${name} is malformed at once, as mqtt-packet finds it (the rest never comes)`, async () => {
        const broker = new Broker(server.engine);
        let connacked!: () => void;
        const connack = new Promise<void>((resolve) => { connacked = resolve; });
        let closed = false;
        const peer = new Duplex({ read() { /* pushed by the test */ }, write(_chunk: Buffer, _encoding, callback) { connacked(); callback(); } });
        peer.on('close', () => { closed = true; });
        broker.accept(peer, '127.0.0.1');
        peer.push(mqttPacket.generate(connectPacket({ clientId: unique('qos3') }), { protocolVersion: 4 }));
        await connack;
        // A whole PUBLISH first (read as usual), then the start of one with both QoS bits set.
        peer.push(Buffer.concat([publishBytes({ topic: 't' }, 4), start]));
        const deadline = Date.now() + 2000;
        while (!closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        const closedAtOnce = closed;
        await broker.stop();
        assert.equal(closedAtOnce, true, 'QoS 3 is malformed [MQTT-3.3.1-4]: the connection is closed without waiting for the rest of the packet');
      });
    }

    it('a PUBLISH cut by a chunk whose announced size is over the limit is refused before the rest arrives', async () => {
      const limited = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin', mqtt_max_packet_size: 1000 });
      try {
        const broker = new Broker(limited.engine);
        let closed!: () => void;
        const ended = new Promise<void>((resolve) => { closed = resolve; });
        const peer = new Duplex({ read() { /* pushed by the test */ }, write(_chunk: Buffer, _encoding, callback) { callback(); } });
        peer.on('close', () => closed());
        broker.accept(peer, '127.0.0.1');
        peer.push(mqttPacket.generate(connectPacket({ clientId: unique('limited') }), { protocolVersion: 4 }));
        // 2,000 announced, 10 sent.
        peer.push(Buffer.concat([Buffer.from([0x30]), varInt(2000), Buffer.from([0x00, 0x01, 0x74]), Buffer.alloc(5)]));
        await ended;
        await broker.stop();
      } finally {
        await limited.close();
      }
    });
  });
});
