/**
 * What an idle connection keeps (thousands may be open): no parser, none of the fields only some
 * connections need, no session extras, no 'end' listener of its own on a socket that ends
 * itself; and the first-chunk CONNECT reader (wire/simple-connect.ts) reads exactly what
 * mqtt-packet reads, or leaves the chunk to it.
 */
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import mqttPacket, { type IConnectPacket, type Packet } from 'mqtt-packet';
import { Broker } from '../../plugins/mqtt/broker';
import type { Connection } from '../../plugins/mqtt/connection';
import { readSimpleConnect } from '../../plugins/mqtt/wire/simple-connect';
import type { TestServer } from '../helpers/server';
import { connectPacket, parsedByMqttPacket, startBroker } from './mqtt-helpers';

function connectBytes(fields: Partial<Record<string, unknown>>): Buffer {
  return mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'c', keepalive: 60, ...fields } as Packet);
}

/** The fields handleConnect reads, as a packet has them. */
function connectFields(packet: Packet): Record<string, unknown> {
  const p = packet as IConnectPacket;
  return {
    cmd: p.cmd, length: p.length, protocolId: p.protocolId, protocolVersion: p.protocolVersion, clean: p.clean, keepalive: p.keepalive,
    clientId: p.clientId, username: p.username, password: p.password, will: p.will, properties: p.properties,
  };
}

describe('mqtt 15: what an idle connection keeps', function () {
  this.timeout(30_000);

  describe('the first-chunk CONNECT reader', () => {
    const simple: Array<[string, Buffer]> = [
      ['clean session', connectBytes({})],
      ['clean session 0', connectBytes({ clean: false })],
      ['an empty client id', connectBytes({ clientId: '' })],
      ['keep alive 0', connectBytes({ keepalive: 0 })],
      ['keep alive 65535', connectBytes({ keepalive: 65535 })],
      ['a client id of 300 characters (2-byte remaining length)', connectBytes({ clientId: 'x'.repeat(300) })],
      ['a client id in UTF-8', connectBytes({ clientId: 'çà-✓-😀' })],
    ];
    for (const [name, bytes] of simple) {
      it(`reads ${name} as mqtt-packet does`, () => {
        const packets = parsedByMqttPacket(bytes);
        assert.ok(Array.isArray(packets) && packets.length === 1);
        const read = readSimpleConnect(bytes);
        assert.ok(read, 'read without a parser');
        assert.deepEqual(connectFields(read), connectFields(packets[0]));
      });
    }

    it('reads a client id of invalid UTF-8 as mqtt-packet does (U+FFFD)', () => {
      const bytes = connectBytes({ clientId: 'ab' });
      bytes[bytes.length - 1] = 0xff;
      const packets = parsedByMqttPacket(bytes) as Packet[];
      assert.equal(readSimpleConnect(bytes)?.clientId, (packets[0] as IConnectPacket).clientId);
      assert.equal(readSimpleConnect(bytes)?.clientId, 'a\uFFFD');
    });

    const others: Array<[string, Buffer]> = [
      ['a will', connectBytes({ will: { topic: 't', payload: Buffer.from('x'), qos: 0, retain: false } })],
      ['a user name and password', connectBytes({ username: 'u', password: Buffer.from('p') })],
      ['a user name only', connectBytes({ username: 'u' })],
      ['MQTT 5', mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 5, clean: true, clientId: 'c', keepalive: 60 } as Packet, { protocolVersion: 5 })],
      ['MQTT 3.1 (MQIsdp)', connectBytes({ protocolId: 'MQIsdp', protocolVersion: 3 })],
      ['the reserved flag set', (() => { const b = connectBytes({}); b[9] |= 1; return b; })()],
      ['will flags without a will', (() => { const b = connectBytes({}); b[9] |= 0x20; return b; })()],
      ['a header with flags', (() => { const b = connectBytes({}); b[0] |= 1; return b; })()],
      ['a packet followed by another', Buffer.concat([connectBytes({}), Buffer.from([0xc0, 0])])],
      ['half a packet', connectBytes({}).subarray(0, 10)],
      ['a remaining length longer than its fields', (() => { const b = Buffer.concat([connectBytes({}), Buffer.from([0])]); b[1]++; return b; })()],
      ['a PINGREQ', Buffer.from([0xc0, 0])],
      ['one byte', Buffer.from([0x10])],
    ];
    for (const [name, bytes] of others) {
      it(`leaves ${name} to mqtt-packet`, () => {
        assert.equal(readSimpleConnect(bytes), undefined);
      });
    }
  });

  describe('an idle connection', () => {
    let server: TestServer;
    before(async () => {
      server = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'admin' });
    });
    after(() => server.close());

    type Inside = { parser?: unknown; extra?: unknown };
    const inside = (connection: Connection): Inside => connection as unknown as Inside;

    async function acceptedConnection(broker: Broker, bytes: Buffer): Promise<{ connection: Connection; peer: Duplex }> {
      let connack!: (bytes: Buffer) => void;
      const answered = new Promise<Buffer>((resolve) => { connack = resolve; });
      const peer = new Duplex({ read() { /* pushed by the test */ }, write(chunk: Buffer, _encoding, callback) { connack(chunk); callback(); } });
      broker.accept(peer, '127.0.0.1');
      peer.push(bytes);
      const answer = await answered;
      assert.deepEqual([...answer], [0x20, 2, 0, 0], 'CONNACK accepted');
      const connection = [...broker.connections].find((c) => c.stream === peer)!;
      assert.equal(connection.state, 'connected');
      return { connection, peer };
    }

    it('an anonymous 3.1.1 client holds no parser and no extras, its session none either', async () => {
      const broker = new Broker(server.engine);
      const { connection } = await acceptedConnection(broker, connectBytes({ clientId: 'idle-anonymous' }));
      assert.equal(inside(connection).parser, undefined, 'no parser');
      assert.equal(inside(connection).extra, undefined, 'no extras');
      assert.equal((connection.session as unknown as Inside).extra, undefined, 'no session extras');
      assert.equal(connection.receiveMaximum, 65535, 'the defaults are read without extras');
      assert.equal(connection.clientMaxPacketSize, Infinity);
      await broker.stop();
    });

    it('a client that logged in with a password holds no parser once its CONNECT is read', async () => {
      const broker = new Broker(server.engine);
      const { connection } = await acceptedConnection(broker, mqttPacket.generate(connectPacket({ clientId: 'idle-password' })));
      assert.equal(inside(connection).parser, undefined, 'no parser');
      assert.equal(connection.principal?.account, 'admin');
      await broker.stop();
    });

    it('packets behind a CONNECT in its chunk are answered in order', async () => {
      const broker = new Broker(server.engine);
      const answers: Buffer[] = [];
      let both!: () => void;
      const answered = new Promise<void>((resolve) => { both = resolve; });
      const peer = new Duplex({
        read() { /* pushed by the test */ },
        write(chunk: Buffer, _encoding, callback) {
          answers.push(chunk);
          if (Buffer.concat(answers).length >= 6) both();
          callback();
        },
      });
      broker.accept(peer, '127.0.0.1');
      peer.push(Buffer.concat([connectBytes({ clientId: 'idle-pipelined' }), Buffer.from([0xc0, 0])]));
      await answered;
      assert.deepEqual([...Buffer.concat(answers)], [0x20, 2, 0, 0, 0xd0, 0], 'CONNACK, then PINGRESP');
      await broker.stop();
    });

    it('a TCP socket gets no end listener of ours (Node ends it), and its address is still known', async () => {
      const port = server.engine.need('mqtt').ports.mqtt!;
      const socket: Socket = netConnect(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
      socket.write(connectBytes({ clientId: 'idle-tcp' }));
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      // The broker's own connection of this client.
      const holder = server.engine.clientConnections.holder('idle-tcp') as unknown as Connection;
      assert.ok(holder, 'connected');
      const stream = holder.stream;
      assert.equal(stream.listenerCount('end'), (new (stream.constructor as typeof Duplex)()).listenerCount('end'), 'only the listeners a new socket has');
      assert.equal(holder.address, '127.0.0.1');
      socket.destroy();
    });
  });
});
