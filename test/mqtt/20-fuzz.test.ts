/**
 * MQTT 18: a bounded fuzz run. Valid packets of every type at both levels (mqtt-packet's encoder,
 * seeded random fields) and mutations of them (bit flips, truncation, a lying remaining length,
 * splices, random bytes) go to the broker over fresh raw connections on TCP, WebSocket
 * (`mqtt_ws_port`) and WebSocket at `/mqtt` on the HTTP port, each after a CONNECT (now and then a
 * mutated one), cut into random writes or frames. After each batch a normal `mqtt` client must
 * still connect, subscribe, publish and receive; the process must be alive (a crash fails the
 * run) and no connection may have ended on an internal error (every fault found is a bug).
 *
 * Seed and size: FUZZ_SEED (a number, or `random`; printed) and FUZZ_PACKETS (default 12000).
 * A longer run by hand: `npm run fuzz` (1,000,000 packets, a random seed; FUZZ_PACKETS and FUZZ_SEED choose)
 * (docs/mqtt.md).
 */
import assert from 'node:assert/strict';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { startServer, type TestServer } from '../helpers/server';
import { MQTT_PORTS, connectOk } from './mqtt-helpers';
import { Inbox, closeClients, publish, subscribe, unique } from './pubsub-helpers';
import { ALL_TRANSPORT_PLUGINS, RawSession, TRANSPORTS, transportUrl, type Transport } from './raw-transport';
import { Random, chunks, connectPacket, encode, mutate, randomPacket } from './fuzz-packets';

const SEED = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 32) : Number(process.env.FUZZ_SEED ?? 0x5eed);
const TOTAL_PACKETS = Number(process.env.FUZZ_PACKETS ?? 12_000);
/** Packets per batch (a normal client is checked after each). */
const BATCH_PACKETS = 500;
/** Connections open at once. */
const PARALLEL = 16;
/** Share of packets sent mutated (the rest are valid, so connections live on to later states). */
const MUTATED = 0.6;

describe('mqtt 20: fuzz (generated and mutated packets of every type, both levels, TCP and WebSocket)', function () {
  this.timeout(Math.max(120_000, TOTAL_PACKETS * 20));
  let server: TestServer;
  let log: CapturedLog;

  before(async () => {
    // eslint-disable-next-line no-console
    console.log(`      fuzz seed ${SEED} (FUZZ_SEED), ${TOTAL_PACKETS} packets (FUZZ_PACKETS)`);
    log = captureLog('error');
    server = await startServer({
      plugins: ALL_TRANSPORT_PLUGINS, ...MQTT_PORTS, mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin', mqtt_max_packet_size: 64 * 1024,
    }, { logger: log.logger });
  });
  after(() => server?.close());

  /** One raw connection: a CONNECT (valid, or now and then mutated), then `count` packets, in random writes; ended by the client. Returns the packets sent. */
  async function fuzzConnection(random: Random, transport: Transport, protocolVersion: number, count: number): Promise<number> {
    const session = await RawSession.open(server, transport, protocolVersion);
    const parts: Buffer[] = [];
    let sent = 0;
    if (random.chance(0.1)) {
      parts.push(mutate(random, encode(connectPacket(random, protocolVersion), protocolVersion), encode(randomPacket(random, protocolVersion), protocolVersion)));
      sent++;
    } else {
      parts.push(encode(connectPacket(random, protocolVersion, { loginOnly: random.chance(0.8) }), protocolVersion));
    }
    for (let i = 0; i < count; i++) {
      const bytes = encode(randomPacket(random, protocolVersion), protocolVersion);
      parts.push(random.chance(MUTATED) ? mutate(random, bytes, encode(randomPacket(random, protocolVersion), protocolVersion)) : bytes);
      sent++;
    }
    for (const chunk of chunks(random, Buffer.concat(parts))) session.write(chunk);
    await session.end();
    return sent;
  }

  /** A normal client on the transport connects, subscribes, publishes and receives its message. */
  async function normalClientServed(transport: Transport, protocolVersion: 4 | 5): Promise<void> {
    const { client } = await connectOk(transportUrl(server, transport), { protocolVersion, clientId: unique('healthy'), reconnectPeriod: 0 });
    try {
      const inbox = new Inbox(client);
      const topic = unique('health');
      await subscribe(client, topic, { qos: 1 });
      await publish(client, topic, 'served', { qos: 1 });
      assert.equal((await inbox.next(topic)).payload.toString(), 'served');
    } finally {
      await closeClients(client);
    }
  }

  /** Internal faults logged so far (each is a bug the guard caught). */
  function faults(): Array<Record<string, unknown>> {
    return log.entries().filter((entry) => (entry.level as number) >= 50);
  }

  for (const [index, transport] of TRANSPORTS.entries()) {
    const share = Math.ceil(TOTAL_PACKETS / TRANSPORTS.length);
    it(`${transport}: ${share} packets in batches of ${BATCH_PACKETS}; after each batch a normal client (3.1.1 and 5) is served, and no connection ended on an internal error`, async () => {
      const random = new Random(SEED + index);
      let sent = 0;
      let batch = 0;
      while (sent < share) {
        // A batch: connections of 1 to 12 packets each until the batch is full.
        const plan: Array<{ protocolVersion: number; count: number }> = [];
        for (let planned = 0; planned < Math.min(BATCH_PACKETS, share - sent);) {
          const count = 1 + random.int(12);
          plan.push({ protocolVersion: random.chance(0.5) ? 5 : 4, count });
          planned += count;
        }
        for (let i = 0; i < plan.length; i += PARALLEL) {
          const results = await Promise.all(plan.slice(i, i + PARALLEL).map(({ protocolVersion, count }) => fuzzConnection(random, transport, protocolVersion, count)));
          for (const count of results) sent += count;
        }
        batch++;
        await normalClientServed(transport, batch % 2 === 0 ? 5 : 4);
        assert.deepEqual(faults(), [], `seed ${SEED}: no internal fault after batch ${batch}`);
      }
    });
  }
});
