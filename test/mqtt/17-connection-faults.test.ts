/**
 * MQTT 17: no client can bring the server down. A protocol violation closes the connection that
 * sent it (MQTT 5 hears why), whatever throws while one connection is handled closes that
 * connection only (the log gets a reference), and a client connected at the same time notices
 * nothing: it keeps publishing and receiving, over TCP, WebSocket and WebSocket at /mqtt.
 */
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import type { MqttClient } from 'mqtt';
import type { Packet } from 'mqtt-packet';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { startServer, type TestServer } from '../helpers/server';
import type { Connection } from '../../plugins/mqtt/connection';
import { MQTT_PORTS } from './mqtt-helpers';
import { Inbox, closeClients, connectClient, publish, subscribe, unique } from './pubsub-helpers';
import { ALL_TRANSPORT_PLUGINS, RawSession, TRANSPORTS } from './raw-transport';

/**
 * Test-only hook: every packet this connection receives from now on makes its handler throw,
 * as a bug in a handler would (the dispatcher is replaced on this one connection object).
 */
function makeHandlersThrow(connection: Connection): void {
  (connection as unknown as { dispatch(packet: Packet): void }).dispatch = () => {
    throw new Error('a handler failed (test hook)');
  };
}

describe('mqtt 17: one connection\'s fault closes that connection only', function () {
  this.timeout(30_000);
  let server: TestServer;
  let log: CapturedLog;
  /** A client connected through every test, which must notice nothing of the others' faults. */
  let bystander: MqttClient;
  let bystanderInbox: Inbox;
  const bystanderTopic = unique('bystander');
  let bystanderCloses = 0;

  before(async () => {
    log = captureLog('error');
    server = await startServer({ plugins: ALL_TRANSPORT_PLUGINS, ...MQTT_PORTS }, { logger: log.logger });
    bystander = await connectClient(server, { reconnectPeriod: 0 });
    bystander.on('close', () => { bystanderCloses++; });
    bystanderInbox = new Inbox(bystander);
    await subscribe(bystander, `${bystanderTopic}/#`, { qos: 1 });
  });
  after(async () => {
    await closeClients(bystander);
    await server?.close();
  });

  /** The bystander still publishes and receives, and was never disconnected. */
  async function bystanderUnaffected(): Promise<void> {
    const topic = `${bystanderTopic}/${unique('check')}`;
    await publish(bystander, topic, 'still here', { qos: 1 });
    assert.equal((await bystanderInbox.next(topic)).payload.toString(), 'still here');
    assert.equal(bystanderCloses, 0, 'the bystander was never disconnected');
  }

  /** Sends `bytes` on a logged-in session and asserts the server closed it without any of `answers` (MQTT 5: with DISCONNECT `reasonCode`). */
  async function closesWithout(session: RawSession, bytes: number[] | Buffer, answers: string[], reasonCode: number): Promise<void> {
    const earlier = session.history.length;
    session.write(bytes);
    const sent = (await session.serverClosed()).slice(earlier);
    const answered = sent.filter((packet) => answers.includes(packet.cmd));
    assert.deepEqual(answered, [], `no ${answers.join(' / ')}: the connection is closed instead`);
    const disconnect = sent.find((packet) => packet.cmd === 'disconnect') as { reasonCode?: number } | undefined;
    if (session.protocolVersion === 5) assert.equal(disconnect?.reasonCode, reasonCode, 'MQTT 5 hears why');
    else assert.equal(disconnect, undefined, 'a 3.1.1 client is just closed');
    await bystanderUnaffected();
  }

  for (const transport of TRANSPORTS) {
    for (const protocolVersion of [4, 5] as const) {
      const level = protocolVersion === 5 ? 'MQTT 5' : '3.1.1';
      it(`${transport}, ${level}: a SUBSCRIBE without a topic filter closes that connection, no SUBACK [MQTT-3.8.3-3]`, async () => {
        const session = await RawSession.login(server, transport, protocolVersion);
        await closesWithout(session, protocolVersion === 5 ? [0x82, 0x03, 0x00, 0x01, 0x00] : [0x82, 0x02, 0x00, 0x01], ['suback'], 0x82);
      });

      it(`${transport}, ${level}: an UNSUBSCRIBE without a topic filter closes that connection, no UNSUBACK [MQTT-3.10.3-2]`, async () => {
        const session = await RawSession.login(server, transport, protocolVersion);
        await closesWithout(session, protocolVersion === 5 ? [0xa2, 0x03, 0x00, 0x01, 0x00] : [0xa2, 0x02, 0x00, 0x01], ['unsuback'], 0x82);
      });
    }
  }

  for (const protocolVersion of [4, 5] as const) {
    const level = protocolVersion === 5 ? 'MQTT 5' : '3.1.1';
    const props = protocolVersion === 5 ? [0x00] : [];
    const cases: Array<{ name: string; bytes: number[]; answers: string[]; reasonCode: number }> = [
      { name: 'a PINGREQ with a payload', bytes: [0xc0, 0x01, 0x00], answers: ['pingresp'], reasonCode: 0x81 },
      { name: 'a SUBSCRIBE with packet identifier 0 [MQTT-2.2.1-3]', bytes: [0x82, 4 + props.length + 2, 0x00, 0x00, ...props, 0x00, 0x01, 0x61, 0x00], answers: ['suback'], reasonCode: 0x81 },
      { name: 'an UNSUBSCRIBE with packet identifier 0 [MQTT-2.2.1-3]', bytes: [0xa2, 3 + props.length + 2, 0x00, 0x00, ...props, 0x00, 0x01, 0x61], answers: ['unsuback'], reasonCode: 0x81 },
      { name: 'a QoS 1 PUBLISH with packet identifier 0 [MQTT-2.2.1-3]', bytes: [0x32, 5 + props.length + 1, 0x00, 0x01, 0x61, 0x00, 0x00, ...props, 0x78], answers: ['puback'], reasonCode: 0x81 },
      { name: 'a SUBSCRIBE with a zero-length topic filter [MQTT-4.7.3-1]', bytes: [0x82, 2 + props.length + 3, 0x00, 0x01, ...props, 0x00, 0x00, 0x00], answers: ['suback'], reasonCode: 0x82 },
      { name: 'a second CONNECT [MQTT-3.1.0-2]', bytes: [0x10, 0x0c + (protocolVersion === 5 ? 1 : 0), 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, protocolVersion, 0x02, 0x00, 0x00, ...props, 0x00, 0x00], answers: ['connack'], reasonCode: 0x82 },
      { name: 'a packet only a server sends (SUBACK)', bytes: [0x90, 3 + props.length, 0x00, 0x01, ...props, 0x00], answers: ['suback'], reasonCode: 0x82 },
      { name: 'SUBSCRIBE with the reserved flags wrong (0000, not 0010) [MQTT-3.8.1-1]', bytes: [0x80, 2 + props.length + 4, 0x00, 0x01, ...props, 0x00, 0x01, 0x61, 0x00], answers: ['suback'], reasonCode: 0x81 },
      { name: 'an UNSUBSCRIBE whose filter breaks the wildcard rules ("a/#/b") [MQTT-4.7.1-1]', bytes: [0xa2, 2 + props.length + 7, 0x00, 0x01, ...props, 0x00, 0x05, 0x61, 0x2f, 0x23, 0x2f, 0x62], answers: ['unsuback'], reasonCode: 0x82 },
      { name: 'an UNSUBSCRIBE whose filter is not UTF-8 [MQTT-1.5.4-1]', bytes: [0xa2, 2 + props.length + 4, 0x00, 0x01, ...props, 0x00, 0x02, 0x61, 0xff], answers: ['unsuback'], reasonCode: 0x82 },
      { name: 'a QoS 0 PUBLISH with DUP set [MQTT-3.3.1-2]', bytes: [0x38, 3 + props.length + 1, 0x00, 0x01, 0x61, ...props, 0x78], answers: [], reasonCode: 0x81 },
      { name: 'a SUBSCRIBE asking QoS 3 [MQTT-3.8.3-4]', bytes: [0x82, 2 + props.length + 4, 0x00, 0x01, ...props, 0x00, 0x01, 0x61, 0x03], answers: ['suback'], reasonCode: 0x81 },
    ];
    if (protocolVersion === 4) {
      cases.push({ name: 'a PUBACK longer than its packet identifier', bytes: [0x40, 0x03, 0x00, 0x01, 0x00], answers: [], reasonCode: 0x81 });
    } else {
      // Property 0x23 (Topic Alias) belongs to PUBLISH only; 0x0B (Subscription Identifier) may not repeat.
      cases.push({ name: 'a SUBSCRIBE carrying a property SUBSCRIBE does not have (Topic Alias) [MQTT 5 §2.2.2.2]', bytes: [0x82, 0x0a, 0x00, 0x01, 0x03, 0x23, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00], answers: ['suback'], reasonCode: 0x81 });
      cases.push({ name: 'a PUBLISH carrying a property PUBLISH does not have (Session Expiry Interval) [MQTT 5 §2.2.2.2]', bytes: [0x30, 0x0a, 0x00, 0x01, 0x61, 0x05, 0x11, 0x00, 0x00, 0x00, 0x01, 0x78], answers: [], reasonCode: 0x81 });
      cases.push({ name: 'a SUBSCRIBE with its Subscription Identifier twice', bytes: [0x82, 0x0b, 0x00, 0x01, 0x04, 0x0b, 0x01, 0x0b, 0x02, 0x00, 0x01, 0x61, 0x00], answers: ['suback'], reasonCode: 0x82 });
      cases.push({ name: 'AUTH without an authentication method [MQTT-4.12.0-6]', bytes: [0xf0, 0x02, 0x18, 0x00], answers: ['auth'], reasonCode: 0x82 });
    }
    for (const { name, bytes, answers, reasonCode } of cases) {
      it(`${level}: ${name} closes that connection${answers.length ? `, no ${answers.join(' / ').toUpperCase()}` : ''}`, async () => {
        const session = await RawSession.login(server, 'tcp', protocolVersion);
        await closesWithout(session, bytes, answers, reasonCode);
      });
    }
  }

  for (const [name, hex] of [
    ['a property CONNECT does not have (Topic Alias)', '101100044d5154540502000003230003000178'],
    ['a will property a will does not have (Session Expiry Interval)', '101a00044d5154540506000000000178051100000003000174000170'],
  ]) {
    it(`MQTT 5: a CONNECT carrying ${name} is closed without a CONNACK [MQTT 5 §2.2.2.2]`, async () => {
      const session = await RawSession.open(server, 'tcp', 5);
      session.write(Buffer.from(hex, 'hex'));
      assert.deepEqual((await session.serverClosed()).map((packet) => packet.cmd), []);
      await bystanderUnaffected();
    });
  }

  for (const [level, hex] of [['3.1.1', '101300044d515454041e0000000178000174000170'], ['MQTT 5', '101500044d515454051e00000000017800000174000170']]) {
    it(`${level}: a CONNECT with Will QoS 3 is closed without a CONNACK [MQTT-3.1.2-14]; no will is ever published (it would fail the commit it shares with others' messages)`, async () => {
      const errorsBefore = log.entries().filter((entry) => entry.level >= 50).length;
      const session = await RawSession.open(server, 'tcp', level === 'MQTT 5' ? 5 : 4);
      session.write(Buffer.from(hex, 'hex'));
      assert.deepEqual((await session.serverClosed()).map((packet) => packet.cmd), []);
      await bystanderUnaffected();
      assert.deepEqual(log.entries().filter((entry) => entry.level >= 50).slice(errorsBefore), [], 'nothing failed to be stored');
    });
  }

  it('3.1.1: a DISCONNECT with a payload is malformed: the connection closes and its will is published', async () => {
    const topic = `${bystanderTopic}/${unique('will')}`;
    const session = await RawSession.login(server, 'tcp', 4, { will: { topic, payload: Buffer.from('malformed-disconnect'), qos: 1, retain: false } });
    session.write([0xe0, 0x01, 0x00]);
    await session.serverClosed();
    assert.equal((await bystanderInbox.next(topic)).payload.toString(), 'malformed-disconnect');
  });

  it('MQTT 5: a DISCONNECT of length 0 is reason 0x00 even when a byte follows it (no will); mqtt-packet would read that byte as its reason', async () => {
    const topic = `${bystanderTopic}/${unique('no-will')}`;
    const session = await RawSession.login(server, 'tcp', 5, { will: { topic, payload: Buffer.from('must-not'), qos: 1, retain: false } });
    // 0x04 right after: "disconnect with will message" if it were read as the reason code
    session.write([0xe0, 0x00, 0x04]);
    await session.serverClosed();
    await publish(bystander, topic, 'marker', { qos: 1 });
    assert.equal((await bystanderInbox.next(topic)).payload.toString(), 'marker', 'the marker comes first: no will was published');
  });

  for (const transport of TRANSPORTS) {
    it(`${transport}: a handler that throws (test hook) closes its connection only: MQTT 5 hears DISCONNECT 0x80 with the reference the log has`, async () => {
      const clientId = unique('faulty');
      const session = await RawSession.login(server, transport, 5, { clientId });
      makeHandlersThrow(server.engine.clientConnections.holder(clientId) as unknown as Connection);
      session.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'any/#', qos: 0 }] });
      const sent = await session.serverClosed();
      const disconnect = sent.find((packet) => packet.cmd === 'disconnect') as { reasonCode?: number; properties?: { reasonString?: string } } | undefined;
      assert.equal(disconnect?.reasonCode, 0x80);
      const reference = /reference ([0-9a-f]+)/.exec(disconnect?.properties?.reasonString ?? '')?.[1];
      assert.ok(reference, `a reference in the reason string: ${disconnect?.properties?.reasonString}`);
      const entry = log.entries().find((logged) => logged.reference === reference);
      assert.ok(entry, 'the log has an entry under that reference');
      assert.equal(entry.clientId, clientId);
      assert.match(entry.err?.message ?? '', /test hook/);
      await bystanderUnaffected();
    });
  }

  it('an acknowledgement of a stored PUBLISH that throws (test hook) closes its connection only: no unhandled rejection (the process would end), the other publishers get theirs', async () => {
    const clientId = unique('faulty-ack');
    const session = await RawSession.login(server, 'tcp', 5, { clientId });
    const other = await RawSession.login(server, 'tcp', 5, { clientId: unique('other-ack') });
    const connection = server.engine.clientConnections.holder(clientId) as unknown as { stored(...args: unknown[]): void };
    // Runs in the publish batch's promise callback (plugins/messaging/publish-batch.ts), out of any chunk's guard.
    connection.stored = () => { throw new Error('an acknowledgement failed (test hook)'); };
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => { rejections.push(reason); };
    // mocha's own listener would end the run; this test asserts on the rejection itself.
    const mochaListeners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', onRejection);
    try {
      session.send({ cmd: 'publish', topic: unique('ack-fault'), payload: Buffer.from('x'), qos: 1, messageId: 1, retain: false, dup: false });
      other.send({ cmd: 'publish', topic: unique('ack-other'), payload: Buffer.from('y'), qos: 1, messageId: 1, retain: false, dup: false });
      // Stored in the same commit as the faulty one's or a later one: by its PUBACK the faulty one's is done.
      assert.equal((await other.next('puback'))?.messageId, 1, 'the other publisher gets its PUBACK');
      await new Promise<void>((resolve) => setImmediate(resolve)); // unhandled rejections are reported after the microtasks
      assert.deepEqual(rejections.map((reason) => String(reason)), [], 'no unhandled rejection (Node ends the process on one)');
      await session.serverClosed();
    } finally {
      process.removeListener('unhandledRejection', onRejection);
      for (const listener of mochaListeners) process.on('unhandledRejection', listener as (...args: unknown[]) => void);
    }
  });

  it('3.1.1: a handler that throws (test hook) closes its connection only, without a word', async () => {
    const clientId = unique('faulty311');
    const session = await RawSession.login(server, 'tcp', 4, { clientId });
    makeHandlersThrow(server.engine.clientConnections.holder(clientId) as unknown as Connection);
    session.send({ cmd: 'pingreq' });
    const sent = await session.serverClosed();
    assert.deepEqual(sent.map((packet) => packet.cmd), ['connack']);
    await bystanderUnaffected();
  });

  it('a WebSocket frame ws refuses (reserved opcode 0x3) closes that connection only', async () => {
    const port = server.engine.need('mqtt').ports.ws!;
    const socket = netConnect({ port, host: '127.0.0.1' });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    let answer = '';
    const upgraded = new Promise<void>((resolve) => socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n\r\n')) resolve();
    }));
    socket.write('GET /mqtt HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
      + 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n');
    await upgraded;
    assert.match(answer, /^HTTP\/1\.1 101/);
    // FIN + reserved opcode 0x3, masked, empty
    socket.write(Buffer.from([0x83, 0x80, 0x01, 0x02, 0x03, 0x04]));
    await closed;
    await bystanderUnaffected();
  });

  it('a client speaking plain TCP to the TLS port fails its handshake: that connection only', async () => {
    const port = server.engine.need('mqtt').ports.mqtts!;
    const socket = netConnect({ port, host: '127.0.0.1' });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(Buffer.from([0x10, 0x0c, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00]));
    await closed;
    await bystanderUnaffected();
  });

  it('a packet the encoder refuses, sent outside any packet of the client\'s (an empty SUBACK), closes that connection only', async () => {
    const clientId = unique('unencodable');
    const session = await RawSession.login(server, 'tcp', 4, { clientId });
    const connection = server.engine.clientConnections.holder(clientId) as unknown as Connection;
    const before = log.entries().length;
    assert.equal(connection.send({ cmd: 'suback', messageId: 1, granted: [] }), false, 'not sent');
    await session.serverClosed();
    assert.ok(log.entries().slice(before).some((entry) => typeof entry.reference === 'string' && entry.during === 'encoding suback'), 'logged with a reference');
    await bystanderUnaffected();
  });
});
