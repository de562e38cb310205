/**
 * MQTT first layer, what a review found: a client that does not read its answers is closed (not
 * buffered without end), a client id held by another account is not taken over without
 * `mq.takeover`, unknown protocol levels get CONNACK 0x01, and WebSocket text frames close the
 * connection.
 */
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import mqttPacket from 'mqtt-packet';
import { Broker } from '../../plugins/mqtt/broker';
import { OUTPUT_LIMIT } from '../../plugins/mqtt/connection';
import WebSocket from 'ws';
import type { TestServer } from '../helpers/server';
import { RawClient, brokerUrl, connectOk, connectPacket, refusedCode, startBroker } from './mqtt-helpers';

describe('mqtt 12: flow and refusals', function () {
  this.timeout(30_000);
  let server: TestServer;
  let url: string;
  let port: number;

  before(async () => {
    server = await startBroker();
    url = brokerUrl(server);
    port = server.engine.need('mqtt').ports.mqtt!;
    await server.engine.accounts.create('reading', 'reading-pw', ['reader']);
  });
  after(() => server.close());

  it('stops reading from a client that does not read its answers, and closes one whose answers pile up', async function () {
    // Two million PINGRESPs are written before the output passes OUTPUT_LIMIT: seconds of work,
    // tens of seconds on a loaded 2-core machine (it timed out at 30 s in a loaded full run).
    this.timeout(180_000);
    // A peer that never takes what is written to it: its writes stay buffered (never acknowledged).
    let firstWrite!: (bytes: Buffer) => void;
    const wrote = new Promise<Buffer>((resolve) => { firstWrite = resolve; });
    const peer = new Duplex({
      read() { /* bytes are pushed by the test */ },
      write(chunk: Buffer, _encoding, _callback) { firstWrite(chunk); /* never calls back: the peer does not read */ },
    });
    const broker = new Broker(server.engine);
    broker.accept(peer, '127.0.0.1');
    peer.push(mqttPacket.generate(connectPacket({ clientId: 'slow-reader' })));
    assert.equal((await wrote)[0], 0x20, 'CONNACK');
    await new Promise<void>((resolve) => setImmediate(resolve));
    const pings = (count: number): Buffer => Buffer.alloc(count * 2).fill(Buffer.from([0xc0, 0x00]));
    // Two-byte PINGRESPs past the stream's high-water mark, whatever this Node's default is
    // (16 KiB before Node 22, 64 KiB since): write() then answers false and reading pauses.
    peer.push(pings(peer.writableHighWaterMark / 2 + 1_000));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.ok(peer.isPaused(), 'reading paused until the answers drain');
    assert.ok(!peer.destroyed);
    peer.emit('data', pings(OUTPUT_LIMIT / 2 + 100_000)); // a chunk already read: 200 KB of answers past the limit
    assert.ok(peer.destroyed, 'a client whose answers pile up past the limit is closed');
    const other = await connectOk(url, { username: 'admin', password: 'ADMIN', clientId: 'after-slow-reader' });
    other.client.end(true);
    await broker.stop();
  });

  it('a client id another account holds is not taken over without mq.takeover', async () => {
    const first = await connectOk(url, { username: 'admin', password: 'ADMIN', clientId: 'shared-id', protocolVersion: 5 });
    try {
      assert.equal(await refusedCode(url, { username: 'reading', password: 'reading-pw', clientId: 'shared-id', protocolVersion: 5 }), 0x87);
      assert.equal(await refusedCode(url, { username: 'reading', password: 'reading-pw', clientId: 'shared-id', protocolVersion: 4 }), 5);
      assert.ok(first.client.connected, 'the holder stays connected');
      // the same account takes over as before
      const second = await connectOk(url, { username: 'admin', password: 'ADMIN', clientId: 'shared-id', protocolVersion: 5 });
      second.client.end(true);
    } finally {
      first.client.end(true);
    }
  });

  it('a CONNECT of a protocol level mqtt-packet does not know gets CONNACK 0x01', async () => {
    const raw = await RawClient.open(port);
    const bytes = Buffer.from(mqttConnectBytes());
    bytes[8] = 6; // protocol level
    raw.write(bytes);
    const connack = await raw.next('connack');
    assert.equal(connack?.returnCode, 1);
    await raw.closed;
  });

  it('a WebSocket text frame closes the connection without an answer', async () => {
    const ws = new WebSocket(brokerUrl(server, 'ws'), 'mqtt');
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const answers: Buffer[] = [];
    ws.on('message', (data: Buffer) => answers.push(data));
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.send(Buffer.from(mqttConnectBytes()).toString('latin1'), { binary: false });
    await closed;
    assert.deepEqual(answers, []);
  });

  it('closes an MQTT 5 client whose Maximum Packet Size no CONNACK fits, instead of leaving it waiting', async () => {
    const raw = await RawClient.open(port, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'tiny', properties: { maximumPacketSize: 4 } }), 5);
    await raw.closed;
    assert.deepEqual(raw.received, []);
  });

  it('an MQTT 5 DISCONNECT may repeat the session expiry its CONNECT asked for', async () => {
    const raw = await RawClient.open(port, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'expiry', properties: { sessionExpiryInterval: 100 } }), 5);
    assert.ok(await raw.next('connack'));
    raw.send({ cmd: 'disconnect', reasonCode: 0, properties: { sessionExpiryInterval: 100 } } as never, 5);
    await raw.closed;
    assert.deepEqual(raw.received, ['connack'], 'closed without a DISCONNECT 0x82');
  });
});

/** A 3.1.1 CONNECT of admin with client id "t" (level at byte 8). */
function mqttConnectBytes(): number[] {
  const body = [0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0xc2, 0x00, 0x00, 0x00, 0x01, 0x74,
    0x00, 0x05, ...Buffer.from('admin'), 0x00, 0x05, ...Buffer.from('ADMIN')];
  return [0x10, body.length, ...body];
}
