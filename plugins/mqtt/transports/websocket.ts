/**
 * MQTT over WebSocket (`mqtt_ws_port`) and secure WebSocket (`mqtt_wss_port`): any path, the
 * `mqtt` subprotocol selected when offered [MQTT-6.0.0-3]; each connection becomes a duplex
 * stream (ws `createWebSocketStream`) for the same broker entry as TCP. Binary frames only
 * [MQTT-6.0.0-1]; a frame may carry part of a packet or several [MQTT-6.0.0-2].
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { WebSocketServer, createWebSocketStream, type WebSocket } from 'ws';
import type { Broker } from '../broker';

export interface WebSocketListener {
  server: Server;
  close(): Promise<void>;
}

export function webSocketServer(broker: Broker, tls?: { cert: string; key: string }): WebSocketListener {
  const answerPlainHttp = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket', connection: 'close' });
    res.end('MQTT over WebSocket: upgrade with the "mqtt" subprotocol\n');
  };
  const server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, answerPlainHttp) : createHttpServer(answerPlainHttp);
  if (tls) server.on('tlsClientError', (error) => broker.log.debug({ err: error }, 'TLS handshake failed'));
  const wss = new WebSocketServer({
    server,
    // An MQTT packet may span frames; one frame larger than the largest packet is refused by ws.
    maxPayload: broker.maxPacketSize + 8,
    handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : protocols.has('mqttv3.1') ? 'mqttv3.1' : false),
  });
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    const stream = createWebSocketStream(socket);
    // MQTT travels in binary frames only [MQTT-6.0.0-1]: a text frame closes the connection,
    // before the stream (whose listener comes after this one) can pass its bytes on.
    socket.prependListener('message', (_data: unknown, isBinary: boolean) => {
      if (isBinary) return;
      stream.destroy();
      socket.terminate();
    });
    broker.accept(stream, req.socket.remoteAddress ?? '');
  });
  wss.on('error', (error) => broker.log.debug({ err: error }, 'WebSocket server error'));
  return {
    server,
    close: () => new Promise((resolve) => {
      for (const client of wss.clients) client.terminate();
      wss.close(() => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    }),
  };
}
