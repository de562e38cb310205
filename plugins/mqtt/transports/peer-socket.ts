/**
 * The socket under a connection's stream, where a client certificate is found: the stream itself
 * for TCP and TLS, the HTTP(S) request's socket for WebSocket, kept on the stream when the
 * WebSocket runs over TLS (plain WebSocket streams carry nothing extra).
 */
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';

const PEER_SOCKET = Symbol('peerSocket');

type WithPeer = Duplex & { [PEER_SOCKET]?: TLSSocket };

/** Remembers the TLS socket a WebSocket stream runs over. */
export function keepTlsPeer(stream: Duplex, socket: unknown): void {
  if (socket instanceof TLSSocket) (stream as WithPeer)[PEER_SOCKET] = socket;
}

/** The socket whose TLS session may hold the client's certificate. */
export function peerSocketOf(stream: Duplex): Duplex {
  return (stream as WithPeer)[PEER_SOCKET] ?? stream;
}
