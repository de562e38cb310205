/**
 * Helpers for the publish/subscribe suites (session, will, durability, mosquitto clients, topic
 * auth): a broker with the message core, `mqtt` package clients whose messages are collected from
 * before their CONNACK, raw-socket sessions, restarts on the same data folder, and reads of what
 * the message log stored. "Not delivered" is always proven by a later marker on the same path.
 */
import { EventEmitter, once } from 'node:events';
import mqtt, { type IClientOptions, type IClientPublishOptions, type IClientSubscribeOptions, type MqttClient } from 'mqtt';
import type { Packet } from 'mqtt-packet';
import type { TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import type { Clock } from '../../kernel/clock';
import type { Logger } from 'pino';
import { RawClient, brokerUrl, connectPacket, startBroker } from './mqtt-helpers';

export const MESSAGING_PLUGINS = ['storage-lmdb', 'messaging', 'mqtt'];

export interface BrokerOptions {
  clock?: Clock;
  logger?: Logger;
}

/** An engine with storage, the message core and the broker, on free ports. */
export function startMessagingBroker(overrides: Partial<Settings> = {}, options: BrokerOptions = {}): Promise<TestServer> {
  return startBroker({ plugins: MESSAGING_PLUGINS, ...overrides }, options);
}

/** Closes the engine keeping its data folder and starts a new one on it (new ports). */
export async function restartBroker(server: TestServer, overrides: Partial<Settings> = {}, options: BrokerOptions = {}): Promise<TestServer> {
  await server.close({ keepData: true });
  return startMessagingBroker({ ...overrides, data_dir: server.dataDir }, options);
}

export interface Received {
  topic: string;
  payload: string;
  packet: any;
}

/** Every PUBLISH a client receives, in order; waits are resolved by arrivals, never by timers. */
export class Inbox {
  readonly messages: Received[] = [];
  private readonly arrivals = new EventEmitter();
  private closed = false;

  constructor(client: MqttClient) {
    this.arrivals.setMaxListeners(0);
    client.on('message', (topic, payload, packet) => {
      this.messages.push({ topic, payload: payload.toString(), packet });
      this.arrivals.emit('message');
    });
    client.on('close', () => { this.closed = true; this.arrivals.emit('message'); });
  }

  /** The first message (received already or arriving) that matches. */
  async waitFor(match: (message: Received) => boolean, what = 'a matching message'): Promise<Received> {
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.closed) throw new Error(`the connection closed before ${what} arrived`);
      await once(this.arrivals, 'message');
    }
  }

  /** Waits for the message with this payload (markers are unique payloads). */
  waitForPayload(payload: string): Promise<Received> {
    return this.waitFor((message) => message.payload === payload, `payload ${payload}`);
  }

  /** Waits until `count` messages matched. */
  async waitForCount(count: number, match: (message: Received) => boolean = () => true): Promise<Received[]> {
    for (;;) {
      const found = this.messages.filter(match);
      if (found.length >= count) return found;
      if (this.closed) throw new Error(`the connection closed after ${found.length} of ${count} messages`);
      await once(this.arrivals, 'message');
    }
  }

  payloads(topic?: string): string[] {
    return this.messages.filter((message) => topic === undefined || message.topic === topic).map((message) => message.payload);
  }
}

export interface Client {
  client: MqttClient;
  connack: any;
  inbox: Inbox;
  /** Resolves when the connection closed (for any reason). */
  closed: Promise<void>;
}

/**
 * Connects an `mqtt` package client (admin unless told otherwise, no automatic reconnect) whose
 * inbox collects from the first byte, so messages a session delivers right after CONNACK are kept.
 */
export function openClient(server: TestServer, options: IClientOptions = {}): Promise<Client> {
  const client = mqtt.connect(brokerUrl(server), {
    reconnectPeriod: 0, connectTimeout: 10_000, username: 'admin', password: 'ADMIN', ...options,
  });
  const inbox = new Inbox(client);
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    let connack: any;
    client.on('packetreceive', (packet: any) => { if (packet.cmd === 'connack') connack = packet; });
    client.once('connect', (packet) => resolve({ client, connack: packet, inbox, closed }));
    client.once('error', (error) => { client.end(true); reject(error); });
    void closed.then(() => {
      if (!client.connected) reject(new Error(`connection closed before CONNACK${connack ? ` (code 0x${(connack.returnCode ?? connack.reasonCode).toString(16)})` : ''}`));
    });
  });
}

/** SUBACK return codes (3.1.1) / reason codes (5) of one SUBSCRIBE, including refusals (≥ 0x80). */
export function subscribeCodes(client: MqttClient, filters: string | string[], options: IClientSubscribeOptions = { qos: 1 }): Promise<number[]> {
  return new Promise((resolve) => {
    const onPacket = (packet: any): void => {
      if (packet.cmd !== 'suback') return;
      client.off('packetreceive', onPacket);
      resolve(packet.granted);
    };
    client.on('packetreceive', onPacket);
    client.subscribe(filters, options, () => undefined);
  });
}

/** Subscribes and insists on the granted QoS (no refusal). */
export async function subscribeOk(client: MqttClient, filters: string | string[], options: IClientSubscribeOptions = { qos: 1 }): Promise<number[]> {
  const codes = await subscribeCodes(client, filters, options);
  const refused = codes.filter((code) => code >= 0x80);
  if (refused.length) throw new Error(`SUBSCRIBE ${String(filters)} refused: ${codes.map((code) => `0x${code.toString(16)}`).join(',')}`);
  return codes;
}

/**
 * Publishes and resolves with the reason code of its acknowledgement: 0 for PUBACK/PUBCOMP
 * success (QoS 0: once written), else the refusal's code (v5 PUBACK/PUBREC ≥ 0x80).
 */
export function publishCode(client: MqttClient, topic: string, payload: string | Buffer, options: IClientPublishOptions = { qos: 1 }): Promise<number> {
  return new Promise((resolve, reject) => {
    client.publish(topic, payload, options, (error: any, packet: any) => {
      if (error) {
        if (typeof error.code === 'number') resolve(error.code);
        else reject(error);
        return;
      }
      resolve(packet?.reasonCode ?? 0);
    });
  });
}

export async function publishOk(client: MqttClient, topic: string, payload: string | Buffer, options: IClientPublishOptions = { qos: 1 }): Promise<void> {
  const code = await publishCode(client, topic, payload, options);
  if (code >= 0x80) throw new Error(`PUBLISH ${topic} refused with 0x${code.toString(16)}`);
}

/** Ends a client cleanly (DISCONNECT) and waits for the close. */
export async function closeClient(client: Client): Promise<void> {
  await client.client.endAsync();
  await client.closed;
}

/** Drops the TCP connection without DISCONNECT: an abnormal close for the broker. */
export async function dropClient(client: Client): Promise<void> {
  (client.client.stream as any).destroy();
  await client.closed;
}

/** A raw session: RawClient after an accepted CONNECT (admin unless told otherwise). */
export async function rawSession(server: TestServer, fields: Partial<Record<string, unknown>> = {}): Promise<{ raw: RawClient; connack: any }> {
  const protocolVersion = (fields.protocolVersion as number | undefined) ?? 4;
  const raw = await RawClient.open(server.engine.need('mqtt').ports.mqtt!, protocolVersion);
  raw.send(connectPacket({ protocolVersion, ...fields }), protocolVersion);
  const connack = await raw.next('connack');
  if (!connack) throw new Error('closed before CONNACK');
  const code = connack.returnCode ?? connack.reasonCode ?? 0;
  if (code !== 0) throw new Error(`CONNECT refused with 0x${code.toString(16)}`);
  return { raw, connack };
}

/** SUBSCRIBE from a raw session; resolves with the SUBACK granted codes. */
export async function rawSubscribe(raw: RawClient, filter: string, qos: 0 | 1 | 2, protocolVersion = 4, messageId = 1): Promise<number[]> {
  raw.send({ cmd: 'subscribe', messageId, subscriptions: [{ topic: filter, qos }] } as Packet, protocolVersion);
  const suback = await raw.next('suback');
  if (!suback) throw new Error('closed before SUBACK');
  return suback.granted;
}

/** Payloads of the messages the log stored for a topic, in log order. */
export function storedPayloads(server: TestServer, topic: string): string[] {
  return storedMessages(server, topic).map((message) => payloadText(message.payload));
}

export function storedMessages(server: TestServer, topic: string): Array<{ sequence: number; payload: any; qos: number; retain: boolean }> {
  return server.engine.need('storage').messageLog.readTopic(topic, { limit: 1_000_000 }) as any[];
}

/** A stored variant's text: JSON and strings as written, bytes decoded as UTF-8. */
export function payloadText(payload: { type: string; value: unknown }): string {
  const value = payload.value as any;
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return JSON.stringify(value);
}

/** The name of a topic's integration table (docs/storage.md) (before any hash suffix for long or taken names). */
export function integrationTableName(topic: string): string {
  return `mqtt_msg_${topic.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
}

let unique = 0;
/** A name not used before in this process: topics, client ids, markers. */
export function uniqueName(prefix: string): string {
  unique += 1;
  return `${prefix}-${process.pid}-${unique}`;
}

/** PINGREQ → PINGRESP: the server has handled every packet sent before (it reads in order). */
export async function rawSync(raw: RawClient, protocolVersion = 4): Promise<void> {
  raw.send({ cmd: 'pingreq' } as Packet, protocolVersion);
  if (!(await raw.next('pingresp'))) throw new Error('closed before PINGRESP');
}

/**
 * A full CONNECT / PINGREQ / DISCONNECT with a fresh client: the broker has handled the socket
 * events that came before (a close it must see before a test moves the engine clock on).
 */
export async function brokerRoundTrip(server: TestServer): Promise<void> {
  const { raw } = await rawSession(server, { clientId: uniqueName('round-trip') });
  await rawSync(raw);
  raw.send({ cmd: 'disconnect' } as Packet);
  await raw.closed;
}
