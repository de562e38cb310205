/**
 * MQTT 22: a connection's output of one turn is copied into one buffer and written as one chunk
 * (plugins/mqtt/turn-output.ts) instead of one stream write per packet. What a client sees must
 * not change: every packet whole and in order, small ones copied and large ones written as they
 * are, across the buffer's growth and the socket's high-water mark, with PUBACKs in publish order.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import mqttPacket, { type Packet } from 'mqtt-packet';
import type { TestServer } from '../helpers/server';
import { COPY_LIMIT, TurnOutput } from '../../plugins/mqtt/turn-output';
import { RawClient, brokerUrl, connectPacket, startBroker } from './mqtt-helpers';

const MESSAGES = 400;
/** Payload sizes in turn: small (copied), near the copy limit, above it (written as is), tiny. */
const SIZES = [10, 900, COPY_LIMIT + 1000, 50, COPY_LIMIT - 40];

const mqttPort = (server: TestServer): number => Number(new URL(brokerUrl(server)).port);

function payloadOf(i: number): Buffer {
  const payload = Buffer.alloc(SIZES[i % SIZES.length], 0x61 + (i % 26));
  payload.writeUInt32BE(i, 0);
  return payload;
}

/** Waits until `done()` holds, re-checking after each chunk the client gets; fails if it closes first. */
async function until(client: RawClient, done: () => boolean, what: string): Promise<void> {
  while (!done()) {
    if (client.socket.destroyed) throw new Error(`closed before ${what}`);
    await client.nextChunk();
  }
}

describe('mqtt 22: one output chunk per connection per turn', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin' });
  });
  after(() => server.close());

  for (const version of [4, 5] as const) {
    it(`level ${version}: ${MESSAGES} PUBLISH of mixed sizes and QoS sent in one write reach a subscriber whole and in order, and the publisher gets its PUBACKs in order`, async () => {
      const port = mqttPort(server);
      const subscriber = await RawClient.open(port, version);
      const publisher = await RawClient.open(port, version);
      try {
        subscriber.send(connectPacket({ clientId: `turn-sub-${version}`, protocolVersion: version }), version);
        await subscriber.next('connack');
        subscriber.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: `turn/${version}/#`, qos: 1 }] } as Packet, version);
        await subscriber.next('suback');
        publisher.send(connectPacket({ clientId: `turn-pub-${version}`, protocolVersion: version }), version);
        await publisher.next('connack');

        const qosOf = (i: number): 0 | 1 => (i % 3 === 0 ? 0 : 1);
        publisher.write(Buffer.concat(Array.from({ length: MESSAGES }, (_, i) => mqttPacket.generate({
          cmd: 'publish', topic: `turn/${version}/${i % 7}`, payload: payloadOf(i), qos: qosOf(i), messageId: i + 1, dup: false, retain: false,
        } as Packet, { protocolVersion: version }))));

        const publishes = (): Packet[] => subscriber.packets.filter((packet) => packet.cmd === 'publish');
        await until(subscriber, () => publishes().length >= MESSAGES, `${MESSAGES} deliveries`);
        const got = publishes() as Array<Packet & { topic: string; payload: Buffer; qos: number; messageId?: number }>;
        assert.equal(got.length, MESSAGES);
        for (let i = 0; i < MESSAGES; i++) {
          assert.equal(got[i].topic, `turn/${version}/${i % 7}`, `topic of delivery ${i}`);
          assert.ok(got[i].payload.equals(payloadOf(i)), `payload of delivery ${i}`);
          assert.equal(got[i].qos, qosOf(i), `QoS of delivery ${i}`);
        }
        // Each QoS 1 delivery has its own packet identifier (patched per delivery into its copy).
        const ids = got.filter((packet) => packet.qos === 1).map((packet) => packet.messageId);
        assert.equal(new Set(ids).size, ids.length);

        const qos1 = Array.from({ length: MESSAGES }, (_, i) => i).filter((i) => qosOf(i) === 1);
        const pubacks = (): Packet[] => publisher.packets.filter((packet) => packet.cmd === 'puback');
        await until(publisher, () => pubacks().length >= qos1.length, `${qos1.length} PUBACKs`);
        assert.deepEqual(pubacks().map((ack) => ack.messageId), qos1.map((i) => i + 1));
      } finally {
        subscriber.destroy();
        publisher.destroy();
      }
    });
  }
});

/** A stream that takes chunks one at a time, each a turn later (as a socket that is not drained at once). */
class SlowSink extends Writable {
  readonly chunks: Buffer[] = [];
  constructor() {
    super({ highWaterMark: 16 << 10 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    setImmediate(done);
  }
}

describe('mqtt 22: TurnOutput against a real stream', () => {
  it('gathers small packets into few chunks, writes a large one as it is, says "over the mark" only when a drain is sure to follow', async () => {
    const sink = new SlowSink();
    const output = new TurnOutput();
    const sent: Buffer[] = [];
    let overMark = false;
    for (let i = 0; !overMark; i++) {
      const bytes = Buffer.alloc(i % 10 === 9 ? COPY_LIMIT + 1 : 37, i & 0xff);
      sent.push(bytes);
      overMark = !output.add(sink, bytes);
    }
    // Over the mark: everything gathered was handed to the stream, so its 'drain' comes.
    assert.equal(output.length, 0);
    assert.ok(sink.writableNeedDrain);
    const drained = new Promise<void>((resolve) => sink.once('drain', resolve));
    output.endTurn(sink);
    await drained;
    assert.ok(Buffer.concat(sink.chunks).equals(Buffer.concat(sent)));
    // The large packets went through as they were (not copied); the small ones in a few chunks.
    const large = sent.filter((bytes) => bytes.length > COPY_LIMIT);
    for (const bytes of large) assert.ok(sink.chunks.includes(bytes));
    // (each large packet: what was gathered before it, then itself; plus one chunk per buffer that filled up)
    assert.ok(sink.chunks.length <= 2 * large.length + 8, `${sink.chunks.length} chunks for ${sent.length} packets`);
  });

  it('a turn of small packets that fits the first buffer is one chunk', async () => {
    const sink = new SlowSink();
    const output = new TurnOutput();
    const sent = Array.from({ length: 40 }, (_, i) => Buffer.alloc(20, i));
    for (const bytes of sent) assert.equal(output.add(sink, bytes), true);
    output.endTurn(sink);
    await new Promise<void>((resolve) => sink.end(resolve));
    assert.equal(sink.chunks.length, 1);
    assert.ok(sink.chunks[0].equals(Buffer.concat(sent)));
  });
});
