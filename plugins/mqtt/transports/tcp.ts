/** MQTT over TCP (`mqtt_port`) and over TLS (`mqtts_port`): each socket goes to the broker. */
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { Broker } from '../broker';
import type { ClientVerificationOptions } from '../../../lib/tls/client-certificates';

/** TCP keepalive probes (an OS feature, no timer here): a peer that vanished with keep alive 0 is found. */
const TCP_KEEPALIVE_MS = 60_000;

export function tcpServer(broker: Broker): Server {
  return createNetServer({ noDelay: true, keepAlive: true, keepAliveInitialDelay: TCP_KEEPALIVE_MS }, (socket: Socket) => acceptSocket(broker, socket, 0));
}

/**
 * Hands a socket to the broker; a socket whose setup throws (it reset at once) is destroyed,
 * never thrown into the server's 'connection' event.
 */
function acceptSocket(broker: Broker, socket: Socket, transport: 0 | 1): void {
  try {
    broker.accept(socket, undefined, transport);
  } catch (error) {
    broker.log.debug({ err: error }, 'accepting a connection failed');
    socket.destroy();
  }
}

/** `clientVerification`: asks clients for a certificate (tls_client_certificates), judged at CONNECT. */
export function tlsServer(broker: Broker, tls: { cert: string; key: string }, clientVerification?: ClientVerificationOptions): TlsServer {
  const server = createTlsServer({ cert: tls.cert, key: tls.key, ...clientVerification }, (socket: TLSSocket) => {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
    acceptSocket(broker, socket, 1);
  });
  // A failed handshake (a plain-TCP client, a client that rejects the certificate) is the
  // client's problem: logged at debug, never thrown.
  server.on('tlsClientError', (error) => broker.log.debug({ err: error }, 'TLS handshake failed'));
  return server;
}
