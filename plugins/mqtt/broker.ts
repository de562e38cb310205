/**
 * What every MQTT connection shares: the engine, the limits from the settings, the set of open
 * connections and the ONE coarse timer that enforces keep alive for all of them (no timer per
 * connection): a connected client silent for 1.5 × its keep alive is closed [MQTT-3.1.2-24], a
 * connection that sends no CONNECT within CONNECT_TIMEOUT_MS is closed (both on the engine
 * clock, which tests move), and a closed connection whose peer never read its last bytes is
 * destroyed (on the wall clock: socket buffers do not wait for a test's clock).
 */
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Engine } from '../../kernel/engine';
import type { MessageCorePort } from '../../kernel/messaging/message-core-port';
import { smallTime } from '../../kernel/clock';
import { Connection } from './connection';
import { REASON } from './reason-codes';
import type { TransportIndex } from './connection-fields';

/** How often the keep-alive sweep runs. */
export const SWEEP_INTERVAL_MS = 500;
/** A connection must send CONNECT within this time. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** A closed connection's last bytes get this long to drain before the socket is destroyed. */
const CLOSE_GRACE_MS = 5_000;
/** Ended session tokens remembered (see Broker.endedTokens). */
const ENDED_TOKENS_KEPT = 10_000;

export class Broker {
  readonly log: Logger;
  readonly maxPacketSize: number;
  /** QoS 1/2 PUBLISHes an MQTT 5 client may have unanswered (CONNACK Receive Maximum, `mqtt_receive_maximum`). */
  readonly receiveMaximum: number;
  readonly connections = new Set<Connection>();
  /** Open connections by transport (TRANSPORTS order: tcp, tls, ws, wss), read by the metrics. */
  readonly openByTransport = [0, 0, 0, 0];
  readonly core: MessageCorePort;
  /** The engine clock, read once per chunk received (messages of one chunk share their time). */
  now = 0;
  /** Connections whose output of this turn waits to be written at once. */
  private gathering: Connection[] = [];
  private readonly closingSince = new Map<Connection, number>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  /** Tokens of recently ended action sessions (bounded): a client retrying one is refused, not counted as a password guess. */
  readonly endedTokens = new Set<string>();

  constructor(readonly engine: Engine) {
    this.log = engine.log.child({ plugin: 'mqtt' });
    this.maxPacketSize = engine.settings.mqtt_max_packet_size;
    this.receiveMaximum = engine.settings.mqtt_receive_maximum;
    this.core = engine.need('messageCore');
    // A connection logged in with a session token lives only as long as that session (logout,
    // expiry, a password change), as the session's other uses do.
    engine.apiSessions.onEnd((session) => {
      this.endedTokens.add(session.authToken);
      if (this.endedTokens.size > ENDED_TOKENS_KEPT) this.endedTokens.delete(this.endedTokens.values().next().value as string);
      for (const connection of this.connections) {
        if (connection.apiSessionId === session.id) connection.close(REASON.NOT_AUTHORIZED, 'the session this connection logged in with has ended');
      }
    });
  }

  /** Ends the connection's turn of output at the end of this event-loop turn: what it gathered goes as one chunk. */
  endTurnLater(connection: Connection): void {
    if (this.gathering.length === 0) setImmediate(() => this.endTurns());
    this.gathering.push(connection);
  }

  private endTurns(): void {
    const gathering = this.gathering;
    this.gathering = [];
    for (const connection of gathering) {
      // Still gathering: the turn's PUBACKs join the rest of its output in one chunk.
      connection.endTurn();
      connection.gathering = false;
    }
  }

  /**
   * The one entry of every transport: a new client's byte stream and its address (read from a
   * TCP/TLS socket when needed, when not given).
   */
  accept(stream: Duplex, address?: string, transport: TransportIndex = 0): void {
    if (this.stopped) {
      stream.destroy();
      return;
    }
    const connection = new Connection(this, stream, address);
    connection.transport = transport;
    this.openByTransport[transport]++;
    this.connections.add(connection);
    this.timer ??= setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  /** Called by a connection that ended itself: destroyed by the sweep if the peer does not read. */
  closing(connection: Connection): void {
    // Socket time, not the engine clock: a peer gets CLOSE_GRACE_MS of real time to read its last packets.
    if (!connection.stream.destroyed) this.closingSince.set(connection, performance.now());
  }

  /** Called when a connection's stream has closed. */
  closed(connection: Connection): void {
    if (this.connections.delete(connection)) this.openByTransport[connection.transport]--;
    this.closingSince.delete(connection);
    if (connection.clientId) this.engine.clientConnections.detach(connection.clientId, connection);
    if (this.connections.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Closes the connections whose time is up (the timer runs it every SWEEP_INTERVAL_MS). */
  sweep(): void {
    // In a cluster, a node resumed from a pause fences before its keep alive closes a silent
    // connection (and sends its will): the sweep is a timer due before the fence's.
    this.core.fenced();
    const time = smallTime(this.engine.clock.now());
    for (const connection of this.connections) {
      try {
        if (connection.state === 'connected') {
          // [MQTT-3.1.2-24]: one and a half times the keep alive without a packet (in integers).
          if (connection.keepAliveMs > 0 && connection.silentFor(time) * 2 > connection.keepAliveMs * 3) {
            connection.close(REASON.KEEP_ALIVE_TIMEOUT, 'keep alive timeout');
          }
        } else if (connection.state === 'new' || connection.state === 'connecting') {
          if (connection.openFor(time) > CONNECT_TIMEOUT_MS) connection.close();
        }
      } catch (error) {
        connection.fail(error, 'keep alive');
      }
    }
    const now = performance.now();
    for (const [connection, since] of this.closingSince) {
      if (now - since > CLOSE_GRACE_MS) {
        this.closingSince.delete(connection);
        connection.stream.destroy();
      }
    }
  }

  /**
   * Server shutdown, after the listeners closed: no connection reads more; the publishes already
   * taken are stored and acknowledged (PUBACK, PUBREC); then every client is disconnected (MQTT 5
   * hears DISCONNECT 0x8B). Bounded by the process's shutdown timeout (main.ts).
   */
  async drain(): Promise<void> {
    this.stopped = true;
    for (const connection of this.connections) connection.holdForShutdown();
    await this.core.published();
    // The acknowledgements of the last commit are written at the end of its turn (endTurns).
    await new Promise((resolve) => setImmediate(resolve));
    await this.stop();
  }

  /** Ends every connection now: MQTT 5 clients hear DISCONNECT 0x8B. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const all = [...this.connections];
    for (const connection of all) connection.close(REASON.SERVER_SHUTTING_DOWN, 'the server is shutting down');
    await new Promise((resolve) => setImmediate(resolve));
    for (const connection of all) connection.stream.destroy();
  }
}
