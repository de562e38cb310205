/**
 * The listeners of a connection's stream, shared by every connection (no closures per
 * connection: thousands stay idle), and the guard of its input.
 */
import type { Duplex } from 'node:stream';
import type { Connection } from './connection';

const CONNECTION = Symbol('connection');
type StreamWithConnection = Duplex & { [CONNECTION]: Connection };

/** Listens to the connection's stream. */
export function attachStream(connection: Connection, stream: Duplex): void {
  (stream as StreamWithConnection)[CONNECTION] = connection;
  stream.on('data', onStreamData);
  stream.on('error', onStreamError);
  stream.on('close', onStreamClose);
  // A socket that does not allow half-open connections ends itself when the peer ends (Node's
  // own listener); others (the WebSocket stream) are ended here.
  if (stream.allowHalfOpen) stream.on('end', onStreamEnd);
}

/**
 * The guard of a connection's input: whatever throws while a chunk is parsed and its packets
 * handled ends this connection only (`fail`), never the process. One try per chunk, nothing per
 * packet.
 */
function onStreamData(this: StreamWithConnection, chunk: Buffer): void {
  const connection = this[CONNECTION];
  try {
    connection.onData(chunk);
  } catch (error) {
    connection.fail(error, 'reading');
  }
}

function onStreamError(this: StreamWithConnection, error: Error): void {
  const connection = this[CONNECTION];
  const log = connection.broker.log;
  if (log.isLevelEnabled('debug')) log.debug({ err: error, address: connection.address }, 'connection error');
}

function onStreamClose(this: StreamWithConnection): void {
  const connection = this[CONNECTION];
  try {
    connection.onClosed();
  } catch (error) {
    // The session's end (its will, its expiry) failed: logged; the connection is gone anyway.
    connection.fail(error, 'closing');
  }
}

function onStreamEnd(this: StreamWithConnection): void {
  this.end();
}
