/**
 * A raw MQTT session over any of the broker's byte transports (TCP, WebSocket on `mqtt_ws_port`,
 * WebSocket at `/mqtt` on the HTTP port): the test writes the bytes, the session parses what the
 * server sends (mqtt-packet, at the given level) and reports the close. For the fault and fuzz
 * suites (17, 18), which must send what no client library would.
 */
import { connect as netConnect, type Socket } from 'node:net';
import WebSocket from 'ws';
import mqttPacket, { type Packet } from 'mqtt-packet';
import type { TestServer } from '../helpers/server';

export type Transport = 'tcp' | 'ws' | 'http-ws';
export const TRANSPORTS: readonly Transport[] = ['tcp', 'ws', 'http-ws'];

/** The plugins of a broker that serves all three transports (http for `/mqtt`). */
export const ALL_TRANSPORT_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'mqtt'];

/** The URL of a transport (mqtt:// for TCP, ws:// for the others), for the `mqtt` package too. */
export function transportUrl(server: TestServer, transport: Transport): string {
  const ports = server.engine.need('mqtt').ports;
  if (transport === 'tcp') return `mqtt://127.0.0.1:${ports.mqtt}`;
  if (transport === 'ws') return `ws://127.0.0.1:${ports.ws}/mqtt`;
  return `${server.http.replace(/^http/, 'ws')}/mqtt`;
}

export class RawSession {
  /** Packets received and not taken yet. */
  readonly packets: Packet[] = [];
  /** Every packet received, in order. */
  readonly history: Packet[] = [];
  readonly closed: Promise<void>;
  isClosed = false;
  private readonly parser;
  private waiters: Array<() => void> = [];
  private markClosed!: () => void;

  private constructor(private readonly socket: Socket | WebSocket, readonly protocolVersion: number) {
    this.parser = mqttPacket.parser({ protocolVersion });
    this.parser.on('packet', (packet: Packet) => {
      this.packets.push(packet);
      this.history.push(packet);
    });
    // What the server sends is parsed only to be looked at; a parse error is a packet of its own.
    this.parser.on('error', (error: Error) => this.history.push({ cmd: 'unparsable', error } as unknown as Packet));
    this.closed = new Promise((resolve) => { this.markClosed = resolve; });
  }

  static open(server: TestServer, transport: Transport, protocolVersion: number): Promise<RawSession> {
    const url = transportUrl(server, transport);
    return new Promise((resolve, reject) => {
      if (transport === 'tcp') {
        const socket = netConnect({ port: Number(new URL(url).port), host: '127.0.0.1' });
        const session = new RawSession(socket, protocolVersion);
        socket.once('connect', () => resolve(session));
        socket.on('error', reject);
        socket.on('data', (chunk: Buffer) => session.receive(chunk));
        socket.on('close', () => session.onClose());
        return;
      }
      const socket = new WebSocket(url, 'mqtt');
      const session = new RawSession(socket, protocolVersion);
      socket.once('open', () => resolve(session));
      socket.on('error', reject);
      socket.on('message', (data: Buffer) => session.receive(data));
      socket.on('close', () => session.onClose());
    });
  }

  /** Opens and logs in (CONNECT with `fields`); resolves once CONNACK 0 arrived. */
  static async login(server: TestServer, transport: Transport, protocolVersion: number, fields: Record<string, unknown> = {}): Promise<RawSession> {
    const session = await RawSession.open(server, transport, protocolVersion);
    session.send({ cmd: 'connect', protocolId: 'MQTT', protocolVersion, clean: true, clientId: '', keepalive: 0, username: 'admin', password: Buffer.from('ADMIN'), ...fields });
    const connack = await session.next('connack');
    const code = connack?.returnCode ?? connack?.reasonCode;
    if (code !== 0) throw new Error(`CONNECT refused: ${String(code)}`);
    return session;
  }

  write(bytes: Buffer | number[]): void {
    const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
    if (this.socket instanceof WebSocket) {
      if (this.socket.readyState === WebSocket.OPEN) this.socket.send(data, { binary: true });
    } else if (!this.socket.destroyed) {
      this.socket.write(data);
    }
  }

  send(packet: Record<string, unknown>): void {
    this.write(mqttPacket.generate(packet as unknown as Packet, { protocolVersion: this.protocolVersion }));
  }

  /** The next packet of `cmd` (received or arriving), or undefined once the connection closed without one. */
  async next(cmd: string): Promise<any> {
    for (;;) {
      const index = this.packets.findIndex((packet) => packet.cmd === cmd);
      if (index >= 0) return this.packets.splice(index, 1)[0];
      if (this.isClosed) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Resolves once the server closed the connection, with the packets it sent before (the DISCONNECT included). */
  async serverClosed(): Promise<Packet[]> {
    await this.closed;
    return this.history;
  }

  /** The client ends its side (a WebSocket with a close frame) and waits for the close. */
  async end(): Promise<void> {
    if (this.socket instanceof WebSocket) this.socket.close();
    else this.socket.end();
    await this.closed;
  }

  destroy(): void {
    if (this.socket instanceof WebSocket) this.socket.terminate();
    else this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.parser.parse(chunk);
    this.wake();
  }

  private onClose(): void {
    this.isClosed = true;
    this.markClosed();
    this.wake();
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
