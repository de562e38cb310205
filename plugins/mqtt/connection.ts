/**
 * One MQTT connection, whatever the transport (TCP, TLS, WebSocket, secure WebSocket hand it a
 * duplex stream): an mqtt-packet parser at the negotiated protocol level, the dispatcher that
 * enforces CONNECT first, and the one way to answer (`send`) and to end (`close`).
 */
import type { Duplex } from 'node:stream';
import mqttPacket, { type Packet, type IConnectPacket } from 'mqtt-packet';
import { borrowParser, parserIdle, partialPacketLength, releaseParser, type PacketSink } from './parser-pool';
import type { Principal } from '../../kernel/auth/principal';
import type { ClientConnection } from '../../kernel/sessions/client-sessions';
import type { Delivery, Session, SessionOutlet } from '../messaging/session';
import type { PublishOrigin } from '../messaging/publish-batch';
import type { CoreMessage } from '../messaging/message';
import type { Broker } from './broker';
import { REASON } from './reason-codes';
import { encodeAck, encodePublish } from './outbound';
import { handleConnect } from './packets/connect';
import { handleDisconnect } from './packets/disconnect';
import { handlePingreq } from './packets/ping';
import { handlePublish, publishStored } from './packets/publish';
import { handlePuback, handlePubcomp, handlePubrec, handlePubrel } from './packets/acks';
import { handleSubscribe } from './packets/subscribe';
import { handleUnsubscribe } from './packets/unsubscribe';

// mqtt-packet otherwise fills a cache of 65,536 two-byte Buffers (~6 MB of heap) on its first
// packet; the few packets encoded with it (CONNACK, SUBACK…) are as fast without.
mqttPacket.writeToStream.cacheNumbers = false;

export type ConnectionState = 'new' | 'connecting' | 'connected' | 'closed';

/**
 * Bytes that may wait unsent for one client: a client that sends requests but does not read the
 * answers is closed rather than buffered without end (one larger packet alone may exceed it).
 */
export const OUTPUT_LIMIT = 4 << 20;
/**
 * Output the client had not taken when this turn began, above which no more messages are
 * delivered (the session lags, served from the log later): a slow reader.
 */
const DELIVERY_HIGH_WATER = 1 << 20;
/**
 * Output one turn may add for a client that keeps up: the commits that resolve in one turn can
 * route tens of thousands of messages at once (kept under OUTPUT_LIMIT, which closes clients).
 */
const DELIVERY_TURN_LIMIT = 3 << 20;
/** Topic aliases the broker accepts from a client (CONNACK Topic Alias Maximum). */
export const SERVER_TOPIC_ALIAS_MAXIMUM = 65535;
/** QoS 1/2 PUBLISHes a client may have unacknowledged (CONNACK Receive Maximum). */
export const SERVER_RECEIVE_MAXIMUM = 65535;

export class Connection implements ClientConnection, SessionOutlet, PublishOrigin, PacketSink {
  state: ConnectionState = 'new';
  /** 4 (3.1.1) or 5 once CONNECT is read; 4 until then (the encoding of a refusal to level 3). */
  protocolVersion = 4;
  clientId?: string;
  principal?: Principal;
  /** The JSON-action session whose token this connection logged in with (closed when it ends). */
  apiSessionId?: string;
  /** The keep alive the client is held to, in ms (0: none). Read by the broker's one timer. */
  keepAliveMs = 0;
  /** Date.now() of the last bytes received. */
  lastActivity: number;
  readonly openedAt: number;
  /** What the client accepts (MQTT 5 Maximum Packet Size); packets larger are not sent [MQTT-3.1.2-25]. */
  clientMaxPacketSize = Infinity;
  /** MQTT 5 Session Expiry Interval the CONNECT asked for (a DISCONNECT may not raise it from 0) [MQTT-3.14.2-2]. */
  sessionExpiryInterval = 0;
  /** The message core's session, once CONNECT is accepted. */
  session?: Session;
  /** The client's Receive Maximum (MQTT 5; 3.1.1 clients get the broker's window). */
  receiveMaximum = 65535;
  /** The client's Topic Alias Maximum: aliases the broker may use towards it. */
  clientTopicAliasMaximum = 0;
  // Created on first use: an idle connection costs no empty maps.
  private outboundAliasMap?: Map<string, number>;
  private inboundAliasMap?: Map<number, string>;
  private publishDecisionMap?: Map<string, boolean>;
  private qos2StoringSet?: Set<number>;
  publishDecisionsGeneration = -1;
  /** Characters of the topics held by inbound aliases (bounded). */
  inboundAliasBytes = 0;
  /** QoS 1/2 PUBLISHes received and not yet acknowledged (the server's Receive Maximum). */
  unacknowledged = 0;

  /** The will goes out when the connection ends (not after a normal DISCONNECT). */
  sendWillOnClose = true;
  /** CONNACK sent: from now on an MQTT 5 client is told why it is closed (DISCONNECT). */
  private connackSent = false;
  /** The largest delivery written (the output limit for answers allows one of them). */
  private largestDelivery = 0;
  /** Output is corked until the end of this event-loop turn (the broker uncorks). */
  corked = false;
  /** Output the client had not taken at this turn's first write (see DELIVERY_HIGH_WATER). */
  private unsentBeforeTurn = 0;
  /** Lent while a packet is partly read (parser-pool.ts). */
  private parser?: ReturnType<typeof borrowParser>;
  /** Packets that arrived behind the CONNECT while it was being checked. */
  private pending: Packet[] | undefined;
  /** The output is over the stream's high-water mark: reading waits for 'drain'. */
  private draining = false;
  /** The message core paused this publisher (a lagging target, the log's backlog). */
  private pausedByCore = false;

  constructor(readonly broker: Broker, readonly stream: Duplex, readonly address: string) {
    this.openedAt = this.lastActivity = Date.now();
    // Listeners shared by every connection (no closures per connection: thousands stay idle).
    (stream as StreamWithConnection)[CONNECTION] = this;
    stream.on('data', onStreamData);
    stream.on('error', onStreamError);
    stream.on('close', onStreamClose);
    stream.on('end', onStreamEnd);
  }

  /** Aliases the broker assigned towards the client: topic → alias. */
  get outboundAliases(): Map<string, number> {
    return (this.outboundAliasMap ??= new Map());
  }

  /** Aliases the client set: alias → topic. */
  get inboundAliases(): Map<number, string> {
    return (this.inboundAliasMap ??= new Map());
  }

  /** Publish decisions of this connection's principal, per topic, for one roles generation. */
  get publishDecisions(): Map<string, boolean> {
    return (this.publishDecisionMap ??= new Map());
  }

  /** QoS 2 packet ids whose message is being stored (PUBREC not sent yet). */
  get qos2Storing(): Set<number> {
    return (this.qos2StoringSet ??= new Set());
  }

  /** The account holding this connection (a takeover by another account needs mq.takeover). */
  get account(): string | undefined {
    return this.principal?.account;
  }

  /** Another connection took this client id [MQTT-3.1.4-2]: MQTT 5 hears 0x8E. */
  takeOver(): void {
    this.close(REASON.SESSION_TAKEN_OVER, 'another connection took over this client identifier');
  }

  disconnect(): void {
    this.close(REASON.ADMINISTRATIVE_ACTION, 'disconnected by an administrator');
  }

  /** Encodes and writes a packet for this client's protocol level; false when it was not sent. */
  send(packet: Packet): boolean {
    if (this.state === 'closed' || this.stream.destroyed) return false;
    let bytes = mqttPacket.generate(packet, { protocolVersion: this.protocolVersion });
    if (bytes.length > this.clientMaxPacketSize) {
      // [MQTT-3.1.2-25]: a reason string or user properties are dropped first [MQTT-3.2.2-19].
      const properties = (packet as { properties?: Record<string, unknown> }).properties;
      if (properties) {
        delete properties.reasonString;
        delete properties.userProperties;
        bytes = mqttPacket.generate(packet, { protocolVersion: this.protocolVersion });
      }
      if (bytes.length > this.clientMaxPacketSize) {
        // Not even a CONNACK fits what the client accepts: nothing can be said to it.
        if (packet.cmd === 'connack') this.destroyNow();
        return false;
      }
    }
    if (packet.cmd === 'connack') this.connackSent = true;
    return this.writeAnswer(bytes);
  }

  /** Writes an answer to the client's request; reading waits while the client does not read. */
  writeAnswer(bytes: Buffer): boolean {
    if (this.state === 'closed' || this.stream.destroyed) return false;
    const stream = this.stream;
    if (!this.write(bytes) && !this.draining) {
      // Backpressure: read no more requests until the client has taken its answers.
      this.draining = true;
      this.updateReading();
      stream.once('drain', () => {
        this.draining = false;
        this.updateReading();
      });
    }
    if (stream.writableLength > OUTPUT_LIMIT + this.largestDelivery && stream.writableLength > bytes.length) {
      // Requests already parsed from one chunk keep answering: a client that never reads is closed.
      this.destroyNow();
      return false;
    }
    return true;
  }

  /** Writes bytes, gathered with the rest of this turn's output into one write (the broker uncorks). */
  private write(bytes: Buffer): boolean {
    if (!this.corked) {
      this.unsentBeforeTurn = this.stream.writableLength;
      this.corked = true;
      this.stream.cork();
      this.broker.uncorkLater(this);
    }
    this.broker.core.stats.bytesSent += bytes.length;
    return this.stream.write(bytes);
  }

  // ---- SessionOutlet: messages to the client ------------------------------------------------

  writable(): boolean {
    if (this.state !== 'connected') return false;
    const length = this.stream.writableLength;
    if ((this.corked ? this.unsentBeforeTurn : length) < DELIVERY_HIGH_WATER && length < DELIVERY_TURN_LIMIT) return true;
    // The session lags until the output drains: the drain serves it again.
    this.watchDrain();
    return false;
  }

  deliver(delivery: Delivery): boolean {
    // Closing: kept in flight (a persistent session gets it again on reconnect).
    if (this.state !== 'connected' || this.stream.destroyed) return true;
    const { message } = delivery;
    let alias: number | undefined;
    let aliasOnly = false;
    if (this.clientTopicAliasMaximum > 0) {
      // The broker uses topic aliases towards MQTT 5 clients that accept them.
      alias = this.outboundAliases.get(message.topic);
      if (alias !== undefined) aliasOnly = true;
      else if (this.outboundAliases.size < this.clientTopicAliasMaximum) {
        alias = this.outboundAliases.size + 1;
        this.outboundAliases.set(message.topic, alias);
      }
    }
    const bytes = encodePublish(message, {
      level: this.protocolVersion, qos: delivery.qos, retain: delivery.retain, dup: delivery.dup, packetId: delivery.packetId,
      subscriptionIds: this.protocolVersion === 5 ? delivery.subscriptionIds : undefined, alias, aliasOnly, now: this.broker.engine.clock.now(),
    });
    if (bytes.length > this.clientMaxPacketSize) {
      if (alias !== undefined && !aliasOnly) this.outboundAliases.delete(message.topic);
      return false;
    }
    if (bytes.length > this.largestDelivery) this.largestDelivery = bytes.length;
    if (!this.write(bytes)) this.watchDrain();
    return true;
  }

  resendPubrel(packetId: number): void {
    this.write(encodeAck('pubrel', packetId, this.protocolVersion));
  }

  /** The output went over the stream's mark: the session is served again once it drains. */
  private watchingDrain = false;
  private watchDrain(): void {
    if (this.watchingDrain) return;
    this.watchingDrain = true;
    this.stream.once('drain', () => {
      this.watchingDrain = false;
      if (this.session && this.state === 'connected') this.broker.core.writable(this.session);
    });
  }

  // ---- PublishOrigin / Pausable: the client's messages -----------------------------------------

  stored(token: number, ok: boolean, message: CoreMessage): void {
    publishStored(this, token, ok, message);
  }

  mayPause(): boolean {
    const session = this.session;
    return session === undefined || (session.inflightCount === 0 && !session.lagging);
  }

  pausePublishing(): void {
    this.pausedByCore = true;
    this.updateReading();
  }

  resumePublishing(): void {
    this.pausedByCore = false;
    this.updateReading();
  }

  /**
   * Reads while nothing holds it back: the CONNECT being checked, answers the client has not
   * taken (`draining`), or the message core (a lagging target, the log's backlog).
   */
  private updateReading(): void {
    const hold = this.state === 'connecting' || this.draining || this.pausedByCore;
    if (hold) this.stream.pause();
    else if (this.state !== 'closed') this.stream.resume();
  }

  /** Ends the connection without a word (nothing more can be sent to this client). */
  private destroyNow(): void {
    this.endSession();
    this.state = 'closed';
    this.pending = undefined;
    this.stream.destroy();
    this.broker.closing(this);
  }

  /**
   * Ends the connection. An MQTT 5 client that had its CONNACK is first sent DISCONNECT with
   * `reasonCode` (when given) [MQTT-4.13.2-1]; a 3.1.1 client is just closed.
   */
  close(reasonCode?: number, reasonString?: string): void {
    if (this.state === 'closed') return;
    this.endSession();
    if (reasonCode !== undefined && this.protocolVersion === 5 && this.connackSent) {
      this.send({ cmd: 'disconnect', reasonCode, properties: reasonString ? { reasonString } : undefined });
    }
    this.state = 'closed';
    this.pending = undefined;
    const stream = this.stream;
    stream.end(() => stream.destroy());
    // A peer that never reads would keep the socket: destroyed by the broker's sweep.
    this.broker.closing(this);
  }

  onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    this.lastActivity = Date.now();
    this.broker.now = this.broker.engine.clock.now();
    this.broker.core.stats.bytesReceived += chunk.length;
    const parser = this.parser ?? (this.parser = borrowParser(this, this.protocolVersion));
    parser.parse(chunk);
    if (this.parser !== parser) return;
    if (parserIdle(parser)) {
      this.parser = undefined;
      releaseParser(parser);
      return;
    }
    if ((this.state as ConnectionState) === 'closed') {
      // Part of a packet is left in it: never lent again.
      this.parser = undefined;
      return;
    }
    // A packet still arriving whose announced length is over the limit is refused now, before
    // its body is buffered.
    const length = partialPacketLength(parser);
    if (length > 0 && packetSize(length) > this.broker.maxPacketSize) this.tooLarge();
  }

  onPacket(packet: Packet): void {
    if (this.state === 'closed') return;
    if (packetSize(packet.length ?? 0) > this.broker.maxPacketSize) return this.tooLarge();
    switch (this.state) {
      case 'new':
        // The first packet must be CONNECT [MQTT-3.1.0-1].
        if (packet.cmd !== 'connect') return this.close();
        this.state = 'connecting';
        this.updateReading();
        void handleConnect(this, packet as IConnectPacket).then(() => this.connected(), (error: unknown) => {
          this.broker.log.error({ err: error }, 'CONNECT failed');
          this.close();
        });
        return;
      case 'connecting':
        (this.pending ??= []).push(packet);
        return;
      case 'connected':
        this.dispatch(packet);
    }
  }

  private connected(): void {
    if (this.state !== 'connected') return;
    const pending = this.pending ?? [];
    this.pending = undefined;
    for (const packet of pending) {
      if (this.state !== 'connected') return;
      this.dispatch(packet);
    }
    this.updateReading();
  }

  private dispatch(packet: Packet): void {
    switch (packet.cmd) {
      case 'pingreq': return handlePingreq(this);
      case 'disconnect': return handleDisconnect(this, packet);
      case 'publish': return handlePublish(this, packet);
      case 'puback': return handlePuback(this, packet);
      case 'pubrec': return handlePubrec(this, packet);
      case 'pubrel': return handlePubrel(this, packet);
      case 'pubcomp': return handlePubcomp(this, packet);
      case 'subscribe': return handleSubscribe(this, packet);
      case 'unsubscribe': return handleUnsubscribe(this, packet);
      case 'connect':
        // A second CONNECT is a protocol violation [MQTT-3.1.0-2].
        return this.close(REASON.PROTOCOL_ERROR, 'a second CONNECT on one connection');
      case 'auth':
        // No Authentication Method was accepted in CONNECT, so AUTH is a protocol error [MQTT-4.12.0-6].
        return this.close(REASON.PROTOCOL_ERROR, 'AUTH without an authentication method');
      default:
        // CONNACK, SUBACK, PINGRESP, …: packets only a server sends.
        return this.close(REASON.PROTOCOL_ERROR, `${packet.cmd} is not a packet a client sends`);
    }
  }

  /** A malformed packet closes the connection [MQTT-4.8.0-1]; MQTT 5 hears 0x81 when connected. */
  onMalformed(error: Error): void {
    if (this.state === 'closed') return;
    if (this.state === 'new' && /protocol version/i.test(error.message)) {
      // A CONNECT of a level mqtt-packet cannot read: CONNACK 0x01 in the 3.1.1 encoding [MQTT-3.1.2-2].
      this.send({ cmd: 'connack', returnCode: 0x01, sessionPresent: false });
      return this.close();
    }
    this.broker.log.debug({ address: this.address, clientId: this.clientId, reason: error.message }, 'malformed packet');
    this.close(REASON.MALFORMED_PACKET, `malformed packet: ${error.message}`);
  }

  /** Larger than mqtt_max_packet_size [MQTT-3.2.2-15]: MQTT 5 hears 0x95. */
  private tooLarge(): void {
    this.close(REASON.PACKET_TOO_LARGE, `packets are limited to ${this.broker.maxPacketSize} bytes`);
  }

  onClosed(): void {
    if (this.state !== 'closed') {
      this.state = 'closed';
      this.pending = undefined;
    }
    this.endSession();
    this.broker.closed(this);
  }

  /** The session lets go of this connection (once): the will, the session's expiry apply. */
  private endSession(): void {
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    this.broker.core.closeSession(session, this, this.sendWillOnClose);
  }
}

/** Fixed header (1 byte + the remaining length's variable byte integer) plus the remaining length. */
function packetSize(remainingLength: number): number {
  const lengthBytes = remainingLength < 128 ? 1 : remainingLength < 16_384 ? 2 : remainingLength < 2_097_152 ? 3 : 4;
  return 1 + lengthBytes + remainingLength;
}

const CONNECTION = Symbol('connection');
type StreamWithConnection = Duplex & { [CONNECTION]: Connection };

function onStreamData(this: StreamWithConnection, chunk: Buffer): void {
  this[CONNECTION].onData(chunk);
}

function onStreamError(this: StreamWithConnection, error: Error): void {
  const connection = this[CONNECTION];
  connection.broker.log.debug({ err: error, address: connection.address }, 'connection error');
}

function onStreamClose(this: StreamWithConnection): void {
  this[CONNECTION].onClosed();
}

function onStreamEnd(this: StreamWithConnection): void {
  this.end();
}
