/**
 * Helpers for the publish/subscribe suites (02 subscribe, 03 publish, 04 retain, 10 properties,
 * 11 flow): a broker with the message core, `mqtt` package clients with promise wrappers and an
 * inbox that waits for messages by event, and a wire client that keeps each packet's raw bytes
 * (for byte-exact checks such as the order of user properties).
 */
import { connect as netConnect, type Socket } from 'node:net';
import mqtt, { type IClientOptions, type IClientPublishOptions, type IClientSubscribeOptions, type MqttClient } from 'mqtt';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { startServer, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import type { Clock } from '../../kernel/clock';
import { MQTT_PORTS, brokerUrl, connectOk } from './mqtt-helpers';

/** The plugins the broker needs for publish/subscribe (the message core included). */
export const PUBSUB_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'mqtt'];
/** The same plus the ways to read integration tables (db actions and REST). */
export const PUBSUB_WITH_TABLES_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];

export function startPubSubBroker(overrides: Partial<Settings> = {}, options: { clock?: Clock } = {}): Promise<TestServer> {
  return startServer({ plugins: PUBSUB_PLUGINS, ...MQTT_PORTS, ...overrides }, options);
}

export function mqttPort(server: TestServer): number {
  return server.engine.need('mqtt').ports.mqtt!;
}

let counter = 0;
/** A name no other test of the run uses (client ids, topic roots). */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** An `mqtt` package client of admin, connected; MQTT 5 unless told otherwise. */
export async function connectClient(server: TestServer, options: IClientOptions = {}): Promise<MqttClient> {
  const { client } = await connectOk(brokerUrl(server), {
    username: 'admin', password: 'ADMIN', clientId: unique('c'), protocolVersion: 5, clean: true, ...options,
  });
  return client;
}

/** SUBSCRIBE; resolves with the granted codes of the SUBACK (rejects when the client reports an error). */
export function subscribe(client: MqttClient, filter: string | string[], options: Partial<IClientSubscribeOptions> = {}): Promise<number[]> {
  return new Promise((resolve, reject) => {
    client.subscribe(filter, { qos: 0, ...options } as IClientSubscribeOptions, (error, granted) => {
      if (error) reject(error);
      else resolve((granted ?? []).map((grant) => grant.qos));
    });
  });
}

export function unsubscribe(client: MqttClient, filter: string | string[], properties?: Record<string, unknown>): Promise<any> {
  return new Promise((resolve, reject) => {
    client.unsubscribe(filter, properties ? { properties } : {}, (error: any, packet: any) => (error ? reject(error) : resolve(packet)));
  });
}

/** PUBLISH; resolves once the QoS flow completed (with the PUBACK/PUBCOMP packet when there is one). */
export function publish(client: MqttClient, topic: string, payload: Buffer | string, options: IClientPublishOptions = {}): Promise<any> {
  return new Promise((resolve, reject) => {
    client.publish(topic, payload, { qos: 0, ...options }, (error: any, packet: any) => (error ? reject(error) : resolve(packet)));
  });
}

export async function closeClients(...clients: Array<MqttClient | undefined>): Promise<void> {
  await Promise.all(clients.map((client) => (client ? client.endAsync(true).catch(() => undefined) : undefined)));
}

export interface Received {
  topic: string;
  payload: Buffer;
  packet: any;
  /** Arrival number on this client (1, 2, ...). */
  arrival: number;
}

/** Every message a client receives, in order; waits by event, never by time. */
export class Inbox {
  readonly messages: Received[] = [];
  private waiters: Array<() => void> = [];
  private arrivals = 0;

  constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      this.arrivals += 1;
      this.messages.push({ topic, payload, packet, arrival: this.arrivals });
      this.wake();
    });
    client.on('close', () => this.wake());
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Takes the first message that satisfies `match` (waiting for it); throws if the client closes first. */
  async take(match: (message: Received) => boolean = () => true): Promise<Received> {
    for (;;) {
      const index = this.messages.findIndex(match);
      if (index >= 0) return this.messages.splice(index, 1)[0];
      if (!this.client.connected) throw new Error('the client closed before the message arrived');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Takes the next message on `topic`. */
  next(topic: string): Promise<Received> {
    return this.take((message) => message.topic === topic);
  }

  /**
   * Waits for the marker (the first message on `topic` with `payload`) and returns, taken from the
   * inbox, every message that arrived before it. Used to assert that something was NOT delivered:
   * the broker delivers a session's messages in log order (docs/message-core.md; per topic
   * [MQTT-4.6.0-5]), so whatever was published before the marker and is not here was not delivered.
   */
  async before(topic: string, payload = 'marker'): Promise<Received[]> {
    const marker = await this.take((message) => message.topic === topic && message.payload.toString() === payload);
    const earlier = this.messages.filter((message) => message.arrival < marker.arrival);
    for (const message of earlier) this.messages.splice(this.messages.indexOf(message), 1);
    return earlier;
  }
}

/** Resolves once `condition` holds over the inboxes, checked after every message any of them receives. */
export function until(inboxes: Inbox[], condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (condition()) return resolve();
    const check = (): void => {
      if (!condition()) return;
      for (const inbox of inboxes) inbox.client.removeListener('message', check);
      resolve();
    };
    for (const inbox of inboxes) inbox.client.on('message', check);
  });
}

/**
 * A client with an inbox attached before CONNECT is sent, so messages a resumed session sends
 * right after CONNACK are not missed.
 */
export function connectWithInbox(server: TestServer, options: IClientOptions = {}): Promise<{ client: MqttClient; inbox: Inbox; connack: any }> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(brokerUrl(server), {
      username: 'admin', password: 'ADMIN', clientId: unique('c'), protocolVersion: 5, clean: true, reconnectPeriod: 0, connectTimeout: 10_000, ...options,
    });
    const inbox = new Inbox(client);
    client.once('connect', (connack) => resolve({ client, inbox, connack }));
    client.once('error', (error) => { client.end(true); reject(error); });
  });
}

export interface WirePacket {
  packet: any;
  bytes: Buffer;
}

/**
 * A raw TCP client that keeps every packet the server sends with its raw bytes, and answers
 * nothing by itself (no PUBACK, no PINGRESP): the test decides every byte sent.
 */
export class WireClient {
  readonly packets: WirePacket[] = [];
  /** Every packet received, in order, never taken away. */
  readonly history: WirePacket[] = [];
  readonly closed: Promise<void>;
  private pending: Buffer = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  private isClosed = false;

  private constructor(readonly socket: Socket, readonly protocolVersion: number) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.on('close', () => {
      this.isClosed = true;
      resolve();
      this.wake();
    }));
  }

  static open(port: number, protocolVersion = 5): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ port, host: '127.0.0.1' }, () => resolve(new WireClient(socket, protocolVersion)));
      socket.once('error', reject);
    });
  }

  /** Opens, sends CONNECT (admin) and returns once CONNACK 0 arrived. */
  static async connect(server: TestServer, protocolVersion = 5, fields: Record<string, unknown> = {}): Promise<{ wire: WireClient; connack: any }> {
    const wire = await WireClient.open(mqttPort(server), protocolVersion);
    wire.send({
      cmd: 'connect', protocolId: 'MQTT', protocolVersion, clean: true, clientId: unique('w'), keepalive: 0,
      username: 'admin', password: Buffer.from('ADMIN'), ...fields,
    });
    const connack = await wire.next('connack');
    const code = connack?.returnCode ?? connack?.reasonCode;
    if (code !== 0) throw new Error(`CONNECT refused: ${String(code)}`);
    return { wire, connack };
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      const size = frameSize(this.pending);
      if (size === undefined || this.pending.length < size) break;
      const bytes = this.pending.subarray(0, size);
      this.pending = this.pending.subarray(size);
      const parser = mqttPacket.parser({ protocolVersion: this.protocolVersion });
      let parsed: any;
      parser.on('packet', (packet: Packet) => { parsed = packet; });
      parser.on('error', (error: Error) => { parsed = { cmd: 'unparsable', error }; });
      parser.parse(Buffer.from(bytes));
      const entry = { packet: parsed, bytes: Buffer.from(bytes) };
      this.packets.push(entry);
      this.history.push(entry);
    }
    this.wake();
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  write(bytes: Buffer | number[]): void {
    this.socket.write(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes));
  }

  send(packet: Record<string, unknown>): void {
    this.write(mqttPacket.generate(packet as unknown as Packet, { protocolVersion: this.protocolVersion }));
  }

  /** Takes the next received packet of `cmd` that satisfies `match`; undefined once the socket closed without one. */
  async nextWire(cmd: string, match: (packet: any) => boolean = () => true): Promise<WirePacket | undefined> {
    for (;;) {
      const index = this.packets.findIndex((entry) => entry.packet?.cmd === cmd && match(entry.packet));
      if (index >= 0) return this.packets.splice(index, 1)[0];
      if (this.isClosed) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async next(cmd: string, match?: (packet: any) => boolean): Promise<any> {
    return (await this.nextWire(cmd, match))?.packet;
  }

  /**
   * Waits until the server closes the connection or sends one of `answers` (which would mean it
   * did not close): the first such packet, or undefined when it closed. Fails fast either way.
   */
  async closedOrAnswered(answers: string[]): Promise<any> {
    for (;;) {
      const answered = this.history.find((entry) => answers.includes(entry.packet?.cmd));
      if (answered) return answered.packet;
      if (this.isClosed) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** The DISCONNECT the server sent, if any. */
  get disconnect(): any {
    return this.history.find((entry) => entry.packet?.cmd === 'disconnect')?.packet;
  }

  /** Packets received so far of `cmd` (not taken). */
  count(cmd: string): number {
    return this.history.filter((entry) => entry.packet?.cmd === cmd).length;
  }

  /** SUBSCRIBE with one packet id; resolves with the SUBACK. */
  async subscribe(messageId: number, subscriptions: Array<Record<string, unknown>>, properties?: Record<string, unknown>): Promise<any> {
    this.send({ cmd: 'subscribe', messageId, subscriptions, ...(properties ? { properties } : {}) });
    return this.next('suback', (packet) => packet.messageId === messageId);
  }

  /** A PINGREQ/PINGRESP round trip: everything the server wrote before answering has arrived. */
  async roundTrip(): Promise<void> {
    this.send({ cmd: 'pingreq' });
    const answer = await this.next('pingresp');
    if (!answer) throw new Error('closed before PINGRESP');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Size of the first MQTT packet in `buffer` (fixed header + remaining length), or undefined if not known yet. */
function frameSize(buffer: Buffer): number | undefined {
  let multiplier = 1;
  let length = 0;
  for (let i = 1; i < 5; i++) {
    if (i >= buffer.length) return undefined;
    length += (buffer[i] & 0x7f) * multiplier;
    if ((buffer[i] & 0x80) === 0) return 1 + i + length;
    multiplier *= 128;
  }
  throw new Error('malformed remaining length from the server');
}

// ---- raw MQTT 5 encoding, for what mqtt-packet cannot express (interleaved user properties) ----

export function varInt(value: number): Buffer {
  const bytes: number[] = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    bytes.push(byte);
  } while (value > 0);
  return Buffer.from(bytes);
}

export function utf8String(text: string | Buffer): Buffer {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** A User Property (0x26) as bytes. */
export function userPropertyBytes(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x26]), utf8String(name), utf8String(value)]);
}

/** An MQTT 5 PUBLISH from parts; `properties` are already-encoded property bytes. */
export function publishV5Bytes(fields: { topic: string; qos?: number; retain?: boolean; messageId?: number; properties?: Buffer; payload?: Buffer }): Buffer {
  const qos = fields.qos ?? 0;
  const properties = fields.properties ?? Buffer.alloc(0);
  const id = Buffer.alloc(qos > 0 ? 2 : 0);
  if (qos > 0) id.writeUInt16BE(fields.messageId ?? 1);
  const body = Buffer.concat([utf8String(fields.topic), id, varInt(properties.length), properties, fields.payload ?? Buffer.alloc(0)]);
  const first = 0x30 | (qos << 1) | (fields.retain ? 1 : 0);
  return Buffer.concat([Buffer.from([first]), varInt(body.length), body]);
}

/** The User Properties of a received MQTT 5 PUBLISH, as [name, value] pairs in wire order. */
export function userPropertiesInOrder(publishBytes: Buffer): Array<[string, string]> {
  let offset = 1;
  while (publishBytes[offset] & 0x80) offset += 1;
  offset += 1; // past the remaining length
  const qos = (publishBytes[0] >> 1) & 3;
  const topicLength = publishBytes.readUInt16BE(offset);
  offset += 2 + topicLength + (qos > 0 ? 2 : 0);
  const { value: propertiesLength, size } = readVarInt(publishBytes, offset);
  offset += size;
  const end = offset + propertiesLength;
  const pairs: Array<[string, string]> = [];
  while (offset < end) {
    const id = publishBytes[offset];
    offset += 1;
    const width = PROPERTY_WIDTH[id];
    if (id === 0x26) {
      const name = readString(publishBytes, offset);
      offset = name.end;
      const value = readString(publishBytes, offset);
      offset = value.end;
      pairs.push([name.text, value.text]);
    } else if (width === 'string' || width === 'binary') {
      offset = readString(publishBytes, offset).end;
    } else if (width === 'var') {
      offset += readVarInt(publishBytes, offset).size;
    } else if (typeof width === 'number') {
      offset += width;
    } else {
      throw new Error(`unexpected property 0x${id.toString(16)} in PUBLISH`);
    }
  }
  return pairs;
}

const PROPERTY_WIDTH: Record<number, number | 'string' | 'binary' | 'var'> = {
  0x01: 1, 0x02: 4, 0x03: 'string', 0x08: 'string', 0x09: 'binary', 0x0b: 'var', 0x23: 2,
};

function readVarInt(buffer: Buffer, offset: number): { value: number; size: number } {
  let value = 0;
  let multiplier = 1;
  let size = 0;
  for (;;) {
    const byte = buffer[offset + size];
    size += 1;
    value += (byte & 0x7f) * multiplier;
    if ((byte & 0x80) === 0) return { value, size };
    multiplier *= 128;
  }
}

function readString(buffer: Buffer, offset: number): { text: string; end: number } {
  const length = buffer.readUInt16BE(offset);
  return { text: buffer.subarray(offset + 2, offset + 2 + length).toString('utf8'), end: offset + 2 + length };
}
