/**
 * MQTT over WebSocket (`mqtt_ws_port`) and secure WebSocket (`mqtt_wss_port`): any path, the
 * `mqtt` subprotocol selected when offered [MQTT-6.0.0-3]; each connection becomes a duplex
 * stream (ws `createWebSocketStream`) for the same broker entry as TCP. The same handler serves
 * `/mqtt` on the HTTP and HTTPS ports when the http plugin is loaded. Binary frames only
 * [MQTT-6.0.0-1]; a frame may carry part of a packet or several [MQTT-6.0.0-2].
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { WebSocketServer, createWebSocketStream, type WebSocket } from 'ws';
import type { UpgradeHandler } from '../../../kernel/http-service';
import type { Broker } from '../broker';
import { keepTlsPeer } from './peer-socket';
import type { ClientVerificationOptions } from '../../../lib/tls/client-certificates';

export interface WebSocketListener {
  server: Server;
  close(): Promise<void>;
}

export function webSocketServer(broker: Broker, tls?: { cert: string; key: string }, clientVerification?: ClientVerificationOptions): WebSocketListener {
  const answerPlainHttp = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket', connection: 'close' });
    res.end('MQTT over WebSocket: upgrade with the "mqtt" subprotocol\n');
  };
  const server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key, ...clientVerification }, answerPlainHttp) : createHttpServer(answerPlainHttp);
  if (tls) server.on('tlsClientError', (error) => broker.log.debug({ err: error }, 'TLS handshake failed'));
  const wss = mqttWebSocketServer(broker, { server });
  return {
    server,
    close: () => closeWebSockets(wss).then(() => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    })),
  };
}

/**
 * MQTT over WebSocket on a path of the HTTP and HTTPS listeners (`/mqtt`, the explorer's live
 * view): the http plugin hands over the upgrade requests of that path.
 */
export function webSocketUpgrades(broker: Broker): { handleUpgrade: UpgradeHandler; close(): Promise<void> } {
  const wss = mqttWebSocketServer(broker, { noServer: true });
  return {
    handleUpgrade: (request, socket, head) => {
      // Thrown into the HTTP server's 'upgrade' event it would end the process: this socket only.
      try {
        wss.handleUpgrade(request, socket, head, (client) => wss.emit('connection', client, request));
      } catch (error) {
        broker.log.debug({ err: error }, 'WebSocket upgrade failed');
        socket.destroy();
      }
    },
    close: () => closeWebSockets(wss),
  };
}

function mqttWebSocketServer(broker: Broker, mode: { server: Server } | { noServer: true }): WebSocketServer {
  const wss = new WebSocketServer({
    ...mode,
    // An MQTT packet may span frames; one frame larger than the largest packet is refused by ws.
    maxPayload: broker.maxPacketSize + 8,
    handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : protocols.has('mqttv3.1') ? 'mqttv3.1' : false),
  });
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    // ws's stream listens for one 'error' of its WebSocket only: a later one would be unheard
    // (thrown); this listener stays (the stream reports the first to the connection).
    socket.on('error', ignoreWebSocketError);
    const stream = createWebSocketStream(socket) as FrameStream;
    // Functions shared by every connection (no closures per connection), finding each other through these fields.
    stream[WS_SOCKET] = socket;
    (socket as MqttWebSocket)[WS_STREAM] = stream;
    // The broker writes a turn's packets at once (cork/uncork); without a writev each would be its
    // own frame. Several packets may share a frame [MQTT-6.0.0-2].
    stream._writev = writeFrame;
    // MQTT travels in binary frames only [MQTT-6.0.0-1]: a text frame closes the connection,
    // before the stream (whose listener comes after this one) can pass its bytes on.
    socket.prependListener('message', refuseTextFrame);
    // A client certificate of secure WebSocket is on the TLS socket under the HTTPS request.
    keepTlsPeer(stream, req.socket);
    broker.accept(stream, req.socket.remoteAddress ?? '', (req.socket as TLSSocket).encrypted ? 3 : 2);
  });
  wss.on('error', (error) => broker.log.debug({ err: error }, 'WebSocket server error'));
  return wss;
}

const WS_SOCKET = Symbol('webSocket');
const WS_STREAM = Symbol('stream');
type FrameStream = Duplex & { [WS_SOCKET]: WebSocket; _writev: NonNullable<Duplex['_writev']> };
type MqttWebSocket = WebSocket & { [WS_STREAM]: Duplex };

function writeFrame(this: FrameStream, chunks: Array<{ chunk: unknown }>, callback: (error?: Error | null) => void): void {
  const socket = this[WS_SOCKET];
  if (socket.readyState !== socket.OPEN) {
    callback(new Error('the WebSocket is not open'));
    return;
  }
  socket.send(chunks.length === 1 ? chunks[0].chunk as Buffer : Buffer.concat(chunks.map((entry) => entry.chunk as Buffer)), { binary: true }, callback);
}

function ignoreWebSocketError(): void {}

function refuseTextFrame(this: MqttWebSocket, _data: unknown, isBinary: boolean): void {
  if (isBinary) return;
  this[WS_STREAM].destroy();
  this.terminate();
}

function closeWebSockets(wss: WebSocketServer): Promise<void> {
  return new Promise((resolve) => {
    for (const client of wss.clients) client.terminate();
    wss.close(() => resolve());
  });
}
