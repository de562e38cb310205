/**
 * Helpers for the MQTT suites: an engine with the broker on free ports, real `mqtt` package
 * clients that report their CONNACK or refusal, and raw sockets for byte-level cases.
 */
import { connect as netConnect, type Socket } from 'node:net';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { startServer, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import type { Clock } from '../../kernel/clock';
import type { Logger } from 'pino';

export const MQTT_PORTS = { mqtt_port: 0, mqtts_port: 0, mqtt_ws_port: 0, mqtt_wss_port: 0 } as const;

export async function startBroker(overrides: Partial<Settings> = {}, options: { clock?: Clock; logger?: Logger } = {}): Promise<TestServer> {
  return startServer({ plugins: ['storage-lmdb', 'messaging', 'mqtt'], ...MQTT_PORTS, ...overrides }, options);
}

export function brokerUrl(server: TestServer, scheme: 'mqtt' | 'mqtts' | 'ws' | 'wss' = 'mqtt', path = ''): string {
  const port = server.engine.need('mqtt').ports[scheme];
  if (port === undefined) throw new Error(`${scheme} is not listening`);
  return `${scheme}://127.0.0.1:${port}${path}`;
}

export interface Connected {
  client: MqttClient;
  connack: any;
}

export interface Refused {
  refused: true;
  code: number;
  connack?: any;
}

/** Connects once (no reconnects); resolves with the CONNACK or the refusal code. */
export function tryConnect(url: string, options: IClientOptions = {}): Promise<Connected | Refused> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 10_000, rejectUnauthorized: false, ...options });
    let connack: any;
    client.on('packetreceive', (packet: any) => { if (packet.cmd === 'connack') connack = packet; });
    client.once('connect', (packet) => resolve({ client, connack: packet }));
    client.once('error', (error: any) => {
      client.end(true);
      if (connack) resolve({ refused: true, code: connack.returnCode ?? connack.reasonCode, connack });
      else reject(error);
    });
    client.once('close', () => {
      if (connack && (connack.returnCode ?? connack.reasonCode) !== 0) resolve({ refused: true, code: connack.returnCode ?? connack.reasonCode, connack });
    });
  });
}

export async function connectOk(url: string, options: IClientOptions = {}): Promise<Connected> {
  const result = await tryConnect(url, options);
  if ('refused' in result) throw new Error(`CONNECT refused with 0x${result.code.toString(16)}`);
  return result;
}

export async function refusedCode(url: string, options: IClientOptions = {}): Promise<number> {
  const result = await tryConnect(url, options);
  if (!('refused' in result)) {
    result.client.end(true);
    throw new Error('CONNECT was accepted');
  }
  return result.code;
}

/** A raw TCP connection that collects every packet the server sends and notes when it closes. */
export class RawClient {
  readonly packets: Packet[] = [];
  /** The cmd of every packet received, in order (kept when `next` takes packets). */
  readonly received: string[] = [];
  readonly closed: Promise<void>;
  private readonly parser: ReturnType<typeof mqttPacket.parser>;
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket, protocolVersion: number) {
    this.parser = mqttPacket.parser({ protocolVersion });
    this.parser.on('packet', (packet: Packet) => {
      this.packets.push(packet);
      this.received.push(packet.cmd);
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('data', (chunk: Buffer) => this.parser.parse(chunk));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.on('close', () => {
      resolve();
      for (const wake of this.waiters.splice(0)) wake();
    }));
  }

  static open(port: number, protocolVersion = 4): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ port, host: '127.0.0.1' }, () => resolve(new RawClient(socket, protocolVersion)));
      socket.once('error', reject);
    });
  }

  write(bytes: Buffer | number[]): void {
    this.socket.write(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes));
  }

  send(packet: Packet, protocolVersion = 4): void {
    this.write(mqttPacket.generate(packet, { protocolVersion }));
  }

  /** The next packet of `cmd` (already received or arriving), or undefined once the socket closed. */
  async next(cmd: Packet['cmd']): Promise<any> {
    for (;;) {
      const index = this.packets.findIndex((packet) => packet.cmd === cmd);
      if (index >= 0) return this.packets.splice(index, 1)[0];
      if (this.socket.destroyed || this.socket.readyState === 'closed') return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Resolves after the next chunk is read (and parsed into `packets`) or the socket closes. */
  nextChunk(): Promise<void> {
    // The client's own 'data' listener was attached first: the chunk is parsed before this one runs.
    return new Promise<void>((resolve) => {
      const wake = (): void => { this.socket.off('data', wake); this.socket.off('close', wake); resolve(); };
      this.socket.on('data', wake);
      this.socket.on('close', wake);
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A CONNECT packet, admin's credentials unless told otherwise. */
export function connectPacket(fields: Partial<Record<string, unknown>> = {}): Packet {
  return {
    cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'raw', keepalive: 0,
    username: 'admin', password: Buffer.from('ADMIN'), ...fields,
  } as Packet;
}

/** What mqtt-packet's parser reads from `bytes` (the packets, or the error): the reference for the broker's own readers. */
export function parsedByMqttPacket(bytes: Buffer, protocolVersion = 4): Packet[] | Error {
  const parser = mqttPacket.parser({ protocolVersion });
  const packets: Packet[] = [];
  let error: Error | undefined;
  parser.on('packet', (packet: Packet) => packets.push(packet));
  parser.on('error', (e: Error) => { error = e; });
  parser.parse(bytes);
  return error ?? packets;
}
