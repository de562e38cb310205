/**
 * MQTT CONNECT with the `mqtt` package at levels 4 (3.1.1) and 5, and raw bytes where a client
 * library would not misbehave: credentials, anonymous clients, client identifiers, takeover,
 * keep alive, PINGREQ, CONNECT first, malformed packets, packet size, not-yet-built packets.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { captureLog } from '../helpers/log-capture';
import { RawClient, brokerUrl, connectOk, connectPacket, refusedCode, startBroker, tryConnect } from './mqtt-helpers';

const LEVELS = [4, 5] as const;

describe('mqtt 01: connect', function () {
  this.timeout(30_000);
  let server: TestServer;
  let url: string;
  let port: number;

  before(async () => {
    server = await startBroker({ mqtt_max_packet_size: 1024 });
    url = brokerUrl(server);
    port = server.engine.need('mqtt').ports.mqtt!;
    await server.engine.accounts.create('reading', 'reading-pw', ['reader']);
    await server.engine.accounts.create('nobody', 'nobody-pw', []);
  });
  after(() => server.close());

  for (const protocolVersion of LEVELS) {
    describe(`protocol level ${protocolVersion}`, () => {
      it('accepts good credentials: CONNACK 0, no session present', async () => {
        const { client, connack } = await connectOk(url, { protocolVersion, username: 'admin', password: 'ADMIN', clientId: `good-${protocolVersion}` });
        assert.equal(connack.sessionPresent, false);
        assert.equal(connack.returnCode ?? connack.reasonCode ?? 0, 0);
        if (protocolVersion === 5) {
          assert.equal(connack.properties.maximumPacketSize, 1024);
          assert.equal(connack.properties.serverKeepAlive, undefined, 'no Server Keep Alive when mqtt_max_keepalive is 0');
        }
        await client.endAsync();
      });

      it('refuses a wrong password and an unknown account (3.1.1 0x04, MQTT 5 0x86)', async () => {
        const expected = protocolVersion === 5 ? 0x86 : 0x04;
        assert.equal(await refusedCode(url, { protocolVersion, username: 'admin', password: 'wrong' }), expected);
        assert.equal(await refusedCode(url, { protocolVersion, username: 'no-such-account', password: 'x' }), expected);
      });

      it('refuses anonymous clients while mqtt_allow_anonymous is false (3.1.1 0x05, MQTT 5 0x87)', async () => {
        assert.equal(await refusedCode(url, { protocolVersion }), protocolVersion === 5 ? 0x87 : 0x05);
      });

      it('authorizes the client id as mq.connect on client:<id>: reader may, an account with no role may not', async () => {
        const { client } = await connectOk(url, { protocolVersion, username: 'reading', password: 'reading-pw' });
        await client.endAsync();
        assert.equal(await refusedCode(url, { protocolVersion, username: 'nobody', password: 'nobody-pw' }), protocolVersion === 5 ? 0x87 : 0x05);
      });

      it('answers PINGREQ with PINGRESP and closes on DISCONNECT', async () => {
        const raw = await RawClient.open(port, protocolVersion);
        raw.send(connectPacket({ protocolVersion, clientId: `ping-${protocolVersion}` }), protocolVersion);
        assert.equal((await raw.next('connack')).sessionPresent, false);
        raw.write([0xc0, 0x00]);
        assert.ok(await raw.next('pingresp'));
        raw.write([0xc0, 0x00]);
        assert.ok(await raw.next('pingresp'));
        raw.send({ cmd: 'disconnect' }, protocolVersion);
        await raw.closed;
        assert.deepEqual(raw.packets, [], 'DISCONNECT is not answered');
      });

      it('a second connection with the same client id takes over: the first is closed', async () => {
        const first = await connectOk(url, { protocolVersion, username: 'admin', password: 'ADMIN', clientId: `twin-${protocolVersion}` });
        const heard = new Promise<any>((resolve) => first.client.once('disconnect', resolve));
        const closed = new Promise<void>((resolve) => first.client.once('close', () => resolve()));
        const second = await connectOk(url, { protocolVersion, username: 'admin', password: 'ADMIN', clientId: `twin-${protocolVersion}` });
        await closed;
        if (protocolVersion === 5) assert.equal((await heard).reasonCode, 0x8e);
        assert.ok(second.client.connected, 'the new connection stays');
        await second.client.endAsync();
      });

      it('a second CONNECT closes the connection (MQTT 5: DISCONNECT 0x82)', async () => {
        const raw = await RawClient.open(port, protocolVersion);
        raw.send(connectPacket({ protocolVersion, clientId: `again-${protocolVersion}` }), protocolVersion);
        await raw.next('connack');
        raw.send(connectPacket({ protocolVersion, clientId: `again-${protocolVersion}` }), protocolVersion);
        const disconnect = await raw.next('disconnect');
        await raw.closed;
        if (protocolVersion === 5) assert.equal(disconnect.reasonCode, 0x82);
        else assert.equal(disconnect, undefined);
      });
    });
  }

  it('assigns a client identifier: 3.1.1 with clean session, MQTT 5 as Assigned Client Identifier', async () => {
    const raw = await RawClient.open(port, 4);
    raw.send(connectPacket({ clientId: '', clean: true }));
    assert.equal((await raw.next('connack')).returnCode, 0);
    raw.destroy();

    const raw5 = await RawClient.open(port, 5);
    raw5.send(connectPacket({ protocolVersion: 5, clientId: '', clean: true }), 5);
    const connack = await raw5.next('connack');
    assert.equal(connack.reasonCode, 0);
    assert.match(connack.properties.assignedClientIdentifier, /^auto-[0-9a-f]{24}$/);
    raw5.destroy();
  });

  it('answers packets pipelined behind CONNECT after the CONNACK, in order', async () => {
    const raw = await RawClient.open(port, 5);
    const mqttPacket = (await import('mqtt-packet')).default;
    raw.write(Buffer.concat([mqttPacket.generate(connectPacket({ protocolVersion: 5, clientId: 'pipelined' }), { protocolVersion: 5 }), Buffer.from([0xc0, 0x00, 0xc0, 0x00])]));
    await raw.next('pingresp');
    await raw.next('pingresp');
    raw.destroy();
    assert.deepEqual(raw.received, ['connack', 'pingresp', 'pingresp']);
  });

  it('refuses an empty client id without clean session on 3.1.1 (0x02)', async () => {
    const raw = await RawClient.open(port, 4);
    // mqtt-packet will not encode this CONNECT: level 4, no flags, keep alive 0, client id ''.
    raw.write([0x10, 0x0c, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00]);
    assert.equal((await raw.next('connack')).returnCode, 0x02);
    await raw.closed;
  });

  it('refuses protocol level 3 (MQIsdp) with 0x01', async () => {
    const raw = await RawClient.open(port, 4);
    raw.send(connectPacket({ protocolId: 'MQIsdp', protocolVersion: 3 }));
    assert.equal((await raw.next('connack')).returnCode, 0x01);
    await raw.closed;
  });

  it('refuses MQTT 5 enhanced authentication with 0x8C', async () => {
    const raw = await RawClient.open(port, 5);
    raw.send(connectPacket({ protocolVersion: 5, properties: { authenticationMethod: 'SCRAM-SHA-1' } }), 5);
    assert.equal((await raw.next('connack')).reasonCode, 0x8c);
    await raw.closed;
  });

  it('closes a connection whose first packet is not CONNECT, sending nothing [MQTT-3.1.0-1]', async () => {
    for (const first of [[0xc0, 0x00], [0x30, 0x05, 0x00, 0x01, 0x61, 0x68, 0x69], [0x82, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00]]) {
      const raw = await RawClient.open(port);
      raw.write(first);
      await raw.closed;
      assert.deepEqual(raw.packets, [], `first bytes ${JSON.stringify(first)}`);
    }
  });

  describe('malformed bytes close that connection, and the server keeps serving others', () => {
    // Each row: bytes sent after a good CONNECT (or instead of it), and why they are malformed.
    const cases: Array<{ name: string; bytes: number[]; first?: boolean }> = [
      { name: 'packet type 0 (reserved)', bytes: [0x00, 0x00] },
      { name: 'packet type 0 as the first packet', bytes: [0x00, 0x00], first: true },
      { name: 'PINGREQ with flags set [MQTT-2.2.2-2]', bytes: [0xc1, 0x00] },
      { name: 'SUBSCRIBE with flags 0000 [MQTT-3.8.1-1]', bytes: [0x80, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00] },
      { name: 'PUBLISH with both QoS bits set [MQTT-3.3.1-4]', bytes: [0x36, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01] },
      { name: 'remaining length of five bytes', bytes: [0x30, 0xff, 0xff, 0xff, 0xff, 0x01] },
      { name: 'CONNECT with an unknown protocol name', bytes: [0x10, 0x0c, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x58, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00], first: true },
      { name: 'CONNECT with the reserved flag set [MQTT-3.1.2-3]', bytes: [0x10, 0x0d, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x03, 0x00, 0x00, 0x00, 0x01, 0x61], first: true },
      { name: 'CONNECT whose client id runs past the packet', bytes: [0x10, 0x0c, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x00, 0x00, 0x09], first: true },
    ];
    let bystander: RawClient;
    before(async () => {
      bystander = await RawClient.open(port);
      bystander.send(connectPacket({ clientId: 'bystander' }));
      await bystander.next('connack');
    });
    after(() => bystander.destroy());

    for (const row of cases) {
      it(row.name, async () => {
        const raw = await RawClient.open(port, 5);
        if (!row.first) {
          raw.send(connectPacket({ protocolVersion: 5, clientId: 'malformed' }), 5);
          await raw.next('connack');
        }
        raw.write(row.bytes);
        const disconnect = await raw.next('disconnect');
        await raw.closed;
        if (!row.first && disconnect) assert.ok([0x81, 0x82].includes(disconnect.reasonCode), `reason 0x${disconnect.reasonCode.toString(16)}`);
        bystander.write([0xc0, 0x00]);
        assert.ok(await bystander.next('pingresp'), 'another client is still served');
      });
    }
  });

  it('enforces mqtt_max_packet_size: an oversize packet closes the connection (MQTT 5: DISCONNECT 0x95), before its body arrives', async () => {
    const raw = await RawClient.open(port, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'big' }), 5);
    await raw.next('connack');
    raw.write([0x30, 0xd0, 0x0f, 0x00, 0x01, 0x61]); // PUBLISH announcing 2000 bytes, only 3 sent
    assert.equal((await raw.next('disconnect')).reasonCode, 0x95);
    await raw.closed;

    const oversizeConnect = await RawClient.open(port, 4);
    oversizeConnect.send(connectPacket({ clientId: 'x'.repeat(2000) }));
    await oversizeConnect.closed;
    assert.deepEqual(oversizeConnect.packets, []);
  });

  it('does not send a client a packet over its Maximum Packet Size: the reason string is left out', async () => {
    const raw = await RawClient.open(port, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'tiny', properties: { maximumPacketSize: 20 } }), 5);
    await raw.next('connack');
    // A second CONNECT: DISCONNECT 0x82, whose reason string would not fit in 20 bytes.
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'tiny' }), 5);
    const disconnect = await raw.next('disconnect');
    assert.equal(disconnect.reasonCode, 0x82);
    assert.equal(disconnect.properties?.reasonString, undefined);
    await raw.closed;
  });

  it('a packet only a server sends, or AUTH, is a protocol error (MQTT 5: DISCONNECT 0x82)', async () => {
    // CONNACK, PINGRESP, AUTH "continue authentication" (no Authentication Method was accepted).
    for (const bytes of [[0x20, 0x02, 0x00, 0x00], [0xd0, 0x00], [0xf0, 0x02, 0x18, 0x00]]) {
      const raw = await RawClient.open(port, 5);
      raw.send(connectPacket({ protocolVersion: 5, clientId: 'server-only' }), 5);
      await raw.next('connack');
      raw.write(bytes);
      assert.equal((await raw.next('disconnect')).reasonCode, 0x82, `bytes ${JSON.stringify(bytes)}`);
      await raw.closed;
    }
  });

  it('raising the session expiry in DISCONNECT from 0 is a protocol error (0x82)', async () => {
    const raw = await RawClient.open(port, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'expiry' }), 5);
    await raw.next('connack');
    raw.send({ cmd: 'disconnect', reasonCode: 0, properties: { sessionExpiryInterval: 60 } }, 5);
    assert.equal((await raw.next('disconnect')).reasonCode, 0x82);
    await raw.closed;
  });
});

describe('mqtt 01: anonymous clients, keep alive, listening and shutdown', function () {
  this.timeout(30_000);

  it('logs one listening line with the four URLs on engine.listenHost, and MQTT 5 clients hear DISCONNECT 0x8B at shutdown', async () => {
    const log = captureLog();
    const server = await startBroker({}, { logger: log.logger });
    const line = log.entries().find((entry) => entry.msg === 'listening' && entry.plugin === 'mqtt');
    assert.ok(line, 'a listening line');
    assert.equal(line.host, server.engine.listenHost);
    const { ports } = server.engine.need('mqtt');
    assert.equal(line.mqtt, `mqtt://127.0.0.1:${ports.mqtt}`);
    assert.equal(line.mqtts, `mqtts://127.0.0.1:${ports.mqtts}`);
    assert.equal(line.ws, `ws://127.0.0.1:${ports.ws}`);
    assert.equal(line.wss, `wss://127.0.0.1:${ports.wss}`);
    const raw = await RawClient.open(ports.mqtt!, 5);
    raw.send(connectPacket({ protocolVersion: 5, clientId: 'until-shutdown' }), 5);
    await raw.next('connack');
    await server.close();
    assert.equal((await raw.next('disconnect')).reasonCode, 0x8b);
    await raw.closed;
  });

  it('mqtt_allow_anonymous with mqtt_anonymous_role lets a client connect without credentials; without a role it is refused', async () => {
    const server = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: 'reader' });
    try {
      for (const protocolVersion of LEVELS) {
        const { client } = await connectOk(brokerUrl(server), { protocolVersion });
        await client.endAsync();
      }
    } finally {
      await server.close();
    }
    const noRole = await startBroker({ mqtt_allow_anonymous: true, mqtt_anonymous_role: null });
    try {
      assert.equal(await refusedCode(brokerUrl(noRole), { protocolVersion: 5 }), 0x87);
      assert.equal(await refusedCode(brokerUrl(noRole), { protocolVersion: 4 }), 0x05);
    } finally {
      await noRole.close();
    }
  });

  describe('with mqtt_max_keepalive 2', () => {
    let server: TestServer;
    let port: number;
    before(async () => {
      server = await startBroker({ mqtt_max_keepalive: 2 });
      port = server.engine.need('mqtt').ports.mqtt!;
    });
    after(() => server.close());

    it('returns Server Keep Alive to MQTT 5 clients: the cap for 0 or more, their own value when lower', async () => {
      for (const [asked, expected] of [[0, 2], [60, 2], [1, 1], [2, 2]]) {
        const result = await tryConnect(brokerUrl(server), { protocolVersion: 5, username: 'admin', password: 'ADMIN', keepalive: asked });
        assert.ok(!('refused' in result));
        assert.equal(result.connack.properties.serverKeepAlive, expected, `asked ${asked}`);
        result.client.end(true);
      }
    });

    it('refuses a 3.1.1 client asking more than the cap or 0 (0x02), accepts one within it', async () => {
      assert.equal(await refusedCode(brokerUrl(server), { protocolVersion: 4, username: 'admin', password: 'ADMIN', keepalive: 60 }), 0x02);
      assert.equal(await refusedCode(brokerUrl(server), { protocolVersion: 4, username: 'admin', password: 'ADMIN', keepalive: 0 }), 0x02);
      const { client } = await connectOk(brokerUrl(server), { protocolVersion: 4, username: 'admin', password: 'ADMIN', keepalive: 2 });
      await client.endAsync();
    });

    it('closes a silent MQTT 5 client that asked 0 at 1.5 × the Server Keep Alive (DISCONNECT 0x8D)', async () => {
      const raw = await RawClient.open(port, 5);
      raw.send(connectPacket({ protocolVersion: 5, clientId: 'silent5', keepalive: 0 }), 5);
      assert.equal((await raw.next('connack')).properties.serverKeepAlive, 2);
      assert.equal((await raw.next('disconnect')).reasonCode, 0x8d);
      await raw.closed;
    });
  });

  it('closes a silent 3.1.1 client at 1.5 × its keep alive; one that pings stays', async () => {
    const server = await startBroker();
    try {
      const port = server.engine.need('mqtt').ports.mqtt!;
      const silent = await RawClient.open(port);
      silent.send(connectPacket({ clientId: 'silent4', keepalive: 1 }));
      await silent.next('connack');
      const pinging = await RawClient.open(port);
      pinging.send(connectPacket({ clientId: 'pinging4', keepalive: 1 }));
      await pinging.next('connack');
      const timer = setInterval(() => pinging.write([0xc0, 0x00]), 300);
      try {
        await silent.closed;
        assert.deepEqual(silent.packets, []);
        assert.ok(!pinging.socket.destroyed, 'the pinging client is still connected');
      } finally {
        clearInterval(timer);
        pinging.destroy();
      }
    } finally {
      await server.close();
    }
  });
});
