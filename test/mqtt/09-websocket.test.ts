/** MQTT over WebSocket (`mqtt_ws_port`) and secure WebSocket (`mqtt_wss_port`): any path, subprotocol `mqtt`. */
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import mqttPacket from 'mqtt-packet';
import type { TestServer } from '../helpers/server';
import { brokerUrl, connectOk, refusedCode, startBroker } from './mqtt-helpers';

describe('mqtt 09: websocket', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => {
    server = await startBroker();
  });
  after(() => server.close());

  for (const scheme of ['ws', 'wss'] as const) {
    for (const protocolVersion of [4, 5] as const) {
      it(`${scheme}, level ${protocolVersion}: connects on any path, pings, refuses bad credentials`, async () => {
        for (const path of ['/mqtt', '/', '/some/other/path']) {
          const { client } = await connectOk(brokerUrl(server, scheme, path), { protocolVersion, username: 'admin', password: 'ADMIN', keepalive: 1 });
          // mqtt.js pings after 1 s of silence; a PINGRESP keeps it connected.
          await new Promise<void>((resolve) => client.once('packetreceive', (packet) => { if (packet.cmd === 'pingresp') resolve(); }));
          assert.ok(client.connected);
          await client.endAsync();
        }
        assert.equal(await refusedCode(brokerUrl(server, scheme, '/mqtt'), { protocolVersion, username: 'admin', password: 'bad' }), protocolVersion === 5 ? 0x86 : 0x04);
      });
    }
  }

  it('every transport publishes to every other (TCP, TLS, WS, WSS; levels 4 and 5; QoS 0, 1, 2), the exact bytes', async () => {
    const schemes = ['mqtt', 'mqtts', 'ws', 'wss'] as const;
    const subscribers = [];
    for (const scheme of schemes) {
      for (const protocolVersion of [4, 5] as const) {
        const { client } = await connectOk(brokerUrl(server, scheme), { protocolVersion, username: 'admin', password: 'ADMIN', clientId: `x-${scheme}-${protocolVersion}` });
        await client.subscribeAsync('across/#', { qos: 2 });
        const got: string[] = [];
        client.on('message', (topic, payload, packet) => got.push(`${topic} ${payload.toString('hex')} ${packet.qos}`));
        subscribers.push({ client, got, name: `${scheme}/${protocolVersion}` });
      }
    }
    const expected: string[] = [];
    for (const [i, scheme] of schemes.entries()) {
      const { client } = await connectOk(brokerUrl(server, scheme), { protocolVersion: i % 2 === 0 ? 5 : 4, username: 'admin', password: 'ADMIN' });
      for (const qos of [0, 1, 2] as const) {
        const payload = Buffer.from([i, qos, 0xff, 0x00, 0xc3]);
        await client.publishAsync(`across/${scheme}`, payload, { qos });
        expected.push(`across/${scheme} ${payload.toString('hex')} ${qos}`);
      }
      await client.endAsync();
    }
    for (const subscriber of subscribers) {
      // QoS 2 and 1 are acknowledged after delivery is arranged; wait for all, in order per publisher.
      while (subscriber.got.length < expected.length) await new Promise((resolve) => subscriber.client.once('message', resolve));
      assert.deepEqual(subscriber.got, expected, subscriber.name);
      await subscriber.client.endAsync();
    }
  });

  it('selects the mqtt subprotocol and takes a packet split over frames', async () => {
    const socket = new WebSocket(brokerUrl(server, 'ws', '/anything'), ['mqtt'], { rejectUnauthorized: false });
    await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
    assert.equal(socket.protocol, 'mqtt');
    const connect = mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'ws-split', keepalive: 0, username: 'admin', password: Buffer.from('ADMIN') });
    const reply = new Promise<Buffer>((resolve) => socket.once('message', (data) => resolve(data as Buffer)));
    socket.send(connect.subarray(0, 5));
    socket.send(connect.subarray(5));
    assert.deepEqual([...await reply], [0x20, 0x02, 0x00, 0x00]);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.send(Buffer.from([0xe0, 0x00]));
    await closed;
  });

  it('answers a plain HTTP request with 426', async () => {
    const port = server.engine.need('mqtt').ports.ws!;
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.status, 426);
  });
});
