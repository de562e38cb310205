/**
 * One MQTT connection, whatever the transport (TCP, TLS, WebSocket, secure WebSocket hand it a
 * duplex stream): an mqtt-packet parser at the negotiated protocol level, the dispatcher that
 * enforces CONNECT first, and the one way to answer (`send`) and to end (`close`).
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import mqttPacket, { type Packet, type IConnectPacket } from 'mqtt-packet';
import { borrowParser, parserIdle, partialPacketLength, releaseParser, type PacketSink } from './parser-pool';
import type { Principal } from '../../kernel/auth/principal';
import { fromSmallTime, smallTime } from '../../kernel/clock';
import { EngineError, newErrorReference } from '../../kernel/errors';
import type { ClientConnection } from '../../kernel/sessions/client-connections';
import type { Delivery, PublishOrigin, SessionOutlet } from '../../kernel/messaging/session-types';
import type { SessionHandle } from '../../kernel/messaging/message-core-port';
import type { CoreMessage } from '../../kernel/messaging/message';
import type { Broker } from './broker';
import { attachStream } from './stream-listeners';
import { REASON, RETURN_CODE_311 } from './reason-codes';
import { CONNACK_SENT, ConnectionFields, DRAINING, HELD_FOR_SHUTDOWN, PAUSED_BY_CORE, WATCHING_DRAIN } from './connection-fields';
import { connack311, encodeAck, encodePublish, setDeliveryFields, sharedPublishForm, type OutboundOptions } from './outbound';
import { handleConnect } from './packets/connect';
import { readSimpleConnect } from './wire/simple-connect';
import { packetSize } from './wire/remaining-length';
import { isCutPublish, readSimplePublish } from './wire/simple-publish';
import { readSimplePuback } from './wire/simple-puback';
import { publishStored } from './packets/publish';
import { COPY_LIMIT, TurnOutput } from './turn-output';
import { dispatchPacket } from './packets/dispatch';
import { connectViolation, type Violation } from './packets/packet-rules';

// mqtt-packet otherwise fills a cache of 65,536 two-byte Buffers (~6 MB of heap, and the young
// generation grown to its maximum) on its first packet. The few packets still encoded with it
// (MQTT 5 CONNACK, SUBACK, UNSUBACK, DISCONNECT) allocate their two-byte numbers instead.
mqttPacket.writeToStream.cacheNumbers = false;

export type ConnectionState = 'new' | 'connecting' | 'connected' | 'closed';

/** Filled in for each delivery and passed to encodePublish, which keeps nothing of it (writeDelivery). */
const deliveryOptions: OutboundOptions = { level: 4, qos: 0, retain: false, dup: false, packetId: 0, subscriptionIds: undefined, alias: undefined, aliasOnly: false, now: 0 };

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
/**
 * The largest Receive Maximum MQTT allows: what 3.1.1 clients (who are not told one) are held to.
 * MQTT 5 clients are told and held to `mqtt_receive_maximum` (Broker.receiveMaximum).
 */
export const SERVER_RECEIVE_MAXIMUM = 65535;

export class Connection extends ConnectionFields implements ClientConnection, SessionOutlet, PublishOrigin, PacketSink {
  state: ConnectionState = 'new';
  /** 4 (3.1.1) or 5 once CONNECT is read; 4 until then (the encoding of a refusal to level 3). */
  protocolVersion = 4;
  clientId?: string;
  principal?: Principal;
  /** The keep alive the client is held to, in ms (0: none). Read by the broker's one timer. */
  keepAliveMs = 0;
  /** The message core's session, once CONNECT is accepted. */
  session?: SessionHandle;
  /** Lent while a packet is partly read (parser-pool.ts). */
  private parser?: ReturnType<typeof borrowParser>;
  private activeAt: number;
  private readonly openedAtOffset: number;
  /** The peer's address, read from the socket when first needed (see `address`). */
  private addressText: string | undefined;
  /** The peer's address ('' when unknown). */
  get address(): string {
    // A TCP/TLS socket is asked only when needed: reading it makes Node keep an object per socket.
    if (this.addressText !== undefined) return this.addressText;
    // Unknown once the socket is closed: not remembered then.
    const address = (this.stream as Partial<Socket>).remoteAddress;
    if (address) this.addressText = address;
    return address ?? '';
  }

  /** Engine-clock ms of the last bytes received. */
  get lastActivity(): number {
    return fromSmallTime(this.activeAt);
  }

  set lastActivity(value: number) {
    this.activeAt = smallTime(value);
  }

  get openedAt(): number {
    return fromSmallTime(this.openedAtOffset);
  }

  /** ms since the last bytes received, at engine-clock `time` (a kernel `smallTime`: no number boxes in the broker's sweep). */
  silentFor(time: number): number {
    return time - this.activeAt;
  }

  /** ms since the connection was opened, at `time` (a kernel `smallTime`). */
  openFor(time: number): number {
    return time - this.openedAtOffset;
  }

  /** `address`: given by transports whose stream is not the socket (WebSocket); read from a TCP/TLS socket when needed. */
  constructor(readonly broker: Broker, readonly stream: Duplex, address?: string) {
    super();
    // Keep alive and the CONNECT timeout run on the engine clock (tests move it instead of waiting).
    this.openedAtOffset = this.activeAt = smallTime(broker.engine.clock.now());
    this.addressText = address;
    // Debug logs name the address of closed connections too.
    if (address === undefined && broker.log.isLevelEnabled('debug')) void this.address;
    // Listeners shared by every connection (no closures per connection: thousands stay idle).
    attachStream(this, stream);
  }

  /** Another connection took this client id [MQTT-3.1.4-2]: MQTT 5 hears 0x8E. */
  takeOver(): void {
    // In a cluster, another node's claim may come first while this CONNECT's new session is being
    // stored (no CONNACK yet): as if accepted and then taken over, MQTT 5 hears CONNACK then 0x8E,
    // rather than a closed socket it would take for a network error (and reconnect, taking over the winner).
    if (this.state === 'connecting' && this.protocolVersion === 5 && this.session !== undefined) {
      this.send({ cmd: 'connack', sessionPresent: false, reasonCode: REASON.SUCCESS });
      this.state = 'connected';
    }
    this.close(REASON.SESSION_TAKEN_OVER, 'another connection took over this client identifier');
  }

  disconnect(): void {
    this.close(REASON.ADMINISTRATIVE_ACTION, 'disconnected by an administrator');
  }

  /** This node is fenced (docs/cluster.md, "Self-fencing"); its session was let go of first, so no will is sent from here. */
  useAnotherServer(): void {
    this.close(REASON.USE_ANOTHER_SERVER, 'this node is cut off from the cluster; connect to another node');
  }

  /** Encodes and writes a packet for this client's protocol level; false when it was not sent. */
  send(packet: Packet): boolean {
    if (this.state === 'closed' || this.stream.destroyed) return false;
    let bytes = packet.cmd === 'connack' && this.protocolVersion !== 5
      ? connack311(packet.sessionPresent, packet.returnCode ?? 0)
      : this.encode(packet);
    if (bytes === undefined) return false;
    if (bytes.length > this.clientMaxPacketSize) {
      // [MQTT-3.1.2-25]: a reason string or user properties are dropped first [MQTT-3.2.2-19].
      const properties = (packet as { properties?: Record<string, unknown> }).properties;
      if (properties) {
        delete properties.reasonString;
        delete properties.userProperties;
        bytes = this.encode(packet);
        if (bytes === undefined) return false;
      }
      if (bytes.length > this.clientMaxPacketSize) {
        // Not even a CONNACK fits what the client accepts: nothing can be said to it.
        if (packet.cmd === 'connack') this.destroyNow();
        return false;
      }
    }
    if (packet.cmd !== 'connack') return this.writeAnswer(bytes);
    this.setFlag(CONNACK_SENT, true);
    // The first bytes to the client: nothing to gather them with, written at once.
    return this.writeAnswer(bytes, true);
  }

  /**
   * mqtt-packet's bytes of a packet; undefined when it cannot encode it (it reports that by an
   * 'error' event nobody listens to, i.e. a throw): the connection then ends without a word,
   * since nothing more can be said to it reliably, and the log has a reference.
   */
  private encode(packet: Packet): Buffer | undefined {
    try {
      return mqttPacket.generate(packet, { protocolVersion: this.protocolVersion });
    } catch (error) {
      this.logFault(error, `encoding ${packet.cmd}`);
      this.destroyNow();
      return undefined;
    }
  }

  /**
   * Writes an answer to the client's request; reading waits while the client does not read.
   * `now`: written at once rather than with the rest of this turn's output.
   */
  writeAnswer(bytes: Buffer, now = false): boolean {
    if (this.state === 'closed' || this.stream.destroyed) return false;
    return this.answered(this.write(bytes, now), bytes.length);
  }

  /**
   * The PUBACK/PUBREC of a QoS 1/2 PUBLISH answered at once (refused, or a QoS 2 duplicate): in the
   * order the PUBLISHes came [MQTT-4.6.0-2, MQTT-4.6.0-3], so after the answers of the messages
   * received before it that are still being stored.
   */
  writeAnswerInOrder(bytes: Buffer): void {
    const storing = this.readExtras.unacknowledged;
    if (storing === 0) {
      this.writeAnswer(bytes);
      return;
    }
    const queue = (this.extras.answersBehindStored ??= []);
    let owed = 0;
    for (let i = 0; i < queue.length; i++) owed += queue[i].waitFor;
    queue.push({ bytes, waitFor: storing - owed });
  }

  /** A stored message was answered (publishStored): the answers that waited for it go out. */
  storedAnswered(): void {
    const queue = this.extra?.answersBehindStored;
    if (queue === undefined || queue.length === 0) return;
    queue[0].waitFor--;
    while (queue.length > 0 && queue[0].waitFor <= 0) this.writeAnswer(queue.shift()!.bytes);
  }

  /** After an answer of `size` bytes was written (`belowMark`: the stream's write answer): backpressure. */
  private answered(belowMark: boolean, size: number): boolean {
    const stream = this.stream;
    if (!belowMark && !this.hasFlag(DRAINING)) {
      // Backpressure: read no more requests until the client has taken its answers.
      this.setFlag(DRAINING, true);
      this.updateReading();
      stream.once('drain', () => {
        this.setFlag(DRAINING, false);
        this.updateReading();
      });
    }
    if (stream.writableLength > OUTPUT_LIMIT + this.readExtras.largestDelivery && stream.writableLength > size) {
      // Requests already parsed from one chunk keep answering: a client that never reads is closed.
      this.destroyNow();
      return false;
    }
    return true;
  }

  /** Writes bytes, gathered with the rest of this turn's output into one chunk (turn-output.ts; the broker ends the turn). */
  private write(bytes: Buffer, now = false): boolean {
    // PUBACKs gathered before these bytes go first: the client gets everything in call order.
    const pubacks = this.extra?.pubacks;
    if (pubacks !== undefined && pubacks.length > 0) this.writePubacks();
    this.broker.core.countBytesSent(bytes.length);
    if (now) {
      // After what this turn gathered: the client gets everything in call order.
      this.extra?.output?.push(this.stream);
      return this.stream.write(bytes);
    }
    if (!this.gathering) this.startTurnOutput();
    return this.output.add(this.stream, bytes);
  }

  /** This turn's output (turn-output.ts), kept in the extras: a connection that never writes has none. */
  private get output(): TurnOutput {
    return (this.extras.output ??= new TurnOutput());
  }

  /** The turn ends (the broker's `endTurns`): the gathered PUBACKs and output go to the stream as one chunk. */
  endTurn(): void {
    this.writePubacks();
    this.extra?.output?.endTurn(this.stream);
  }

  /**
   * Gathers this turn's output until the broker ends the turn (one chunk for the turn). The stream
   * is not corked: a chunk handed over before (over the high-water mark, a large packet) goes out at once.
   */
  private startTurnOutput(): void {
    const unsent = this.stream.writableLength;
    // Kept in the extras only when something is left (an idle connection gets none).
    if (unsent > 0 || this.extra !== undefined) this.extras.unsentBeforeTurn = unsent;
    this.gathering = true;
    this.broker.endTurnLater(this);
  }

  /**
   * A stored QoS 1 message's PUBACK (success: 4 bytes at either level [MQTT-3.4.2-1]). A commit's
   * PUBACKs are answered in one turn: they are gathered and written as one buffer, with no
   * buffer or stream write per PUBACK (`writePubacks`: when the turn ends, or before any
   * other bytes to this client).
   */
  writePuback(packetId: number): void {
    if (this.state === 'closed' || this.stream.destroyed) return;
    if (!this.gathering) this.startTurnOutput();
    (this.extras.pubacks ??= []).push(packetId);
  }

  /** Writes the gathered PUBACKs as one buffer, in the order they were gathered. */
  private writePubacks(): void {
    const ids = this.extra?.pubacks;
    if (ids === undefined || ids.length === 0) return;
    const n = ids.length;
    const size = n * 4;
    if (size > COPY_LIMIT || this.state === 'closed' || this.stream.destroyed) {
      const bytes = Buffer.allocUnsafe(size);
      fillPubacks(bytes, 0, ids);
      ids.length = 0;
      this.writeAnswer(bytes);
      return;
    }
    // Filled in straight into this turn's output: no buffer of their own.
    const at = this.reserveInTurn(size);
    fillPubacks(this.output.bufferFor, at, ids);
    ids.length = 0;
    this.answered(this.output.checkMark(this.stream), size);
  }

  /** Room for `size` bytes at the end of this turn's output, counted as sent: their offset in `output.bufferFor`. */
  private reserveInTurn(size: number): number {
    this.broker.core.countBytesSent(size);
    if (!this.gathering) this.startTurnOutput();
    return this.output.reserve(this.stream, size);
  }

  // ---- SessionOutlet: messages to the client ------------------------------------------------

  writable(): boolean {
    if (this.state !== 'connected') return false;
    const length = this.stream.writableLength + (this.extra?.output?.length ?? 0);
    if ((this.gathering ? this.readExtras.unsentBeforeTurn : length) < DELIVERY_HIGH_WATER && length < DELIVERY_TURN_LIMIT) return true;
    // The session lags until the output drains: the drain serves it again.
    this.watchDrain();
    return false;
  }

  deliver(delivery: Delivery): boolean {
    try {
      return this.writeDelivery(delivery);
    } catch (error) {
      // Called by the message core's routing for many sessions: a fault ends this connection only
      // (the message stays in flight for a persistent session).
      this.fail(error, 'delivering');
      return true;
    }
  }

  private writeDelivery(delivery: Delivery): boolean {
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
    // One options object for every delivery (no object, no boxed clock reading per delivery);
    // the clock is read only for a message that expires.
    const o = deliveryOptions;
    o.level = this.protocolVersion;
    o.qos = delivery.qos;
    o.retain = delivery.retain;
    o.dup = delivery.dup;
    o.packetId = delivery.packetId;
    o.subscriptionIds = this.protocolVersion === 5 ? delivery.subscriptionIds : undefined;
    o.alias = alias;
    o.aliasOnly = aliasOnly;
    o.now = message.properties?.messageExpiryInterval === undefined ? 0 : this.broker.engine.clock.now();
    // QoS 1/2 in a shared form: copied into the turn's output and given its DUP and packet id
    // there, with no Buffer of its own (QoS 0 writes the shared form itself).
    const shared = o.qos !== 0 ? sharedPublishForm(message, o) : undefined;
    const bytes = shared !== undefined && shared.length <= COPY_LIMIT ? shared : encodePublish(message, o);
    o.subscriptionIds = undefined;
    if (bytes.length > this.clientMaxPacketSize) {
      if (alias !== undefined && !aliasOnly) this.outboundAliases.delete(message.topic);
      return false;
    }
    if (bytes.length > this.readExtras.largestDelivery) this.extras.largestDelivery = bytes.length;
    if (!(bytes === shared ? this.writeDeliveryCopy(shared, o) : this.write(bytes))) this.watchDrain();
    return true;
  }

  /** A QoS 1/2 delivery from its shared form (at most COPY_LIMIT bytes), as `write` would gather it. */
  private writeDeliveryCopy(shared: Buffer, o: OutboundOptions): boolean {
    const pubacks = this.extra?.pubacks;
    if (pubacks !== undefined && pubacks.length > 0) this.writePubacks();
    const at = this.reserveInTurn(shared.length);
    const into = this.output.bufferFor;
    shared.copy(into, at);
    setDeliveryFields(into, at, o);
    return this.output.checkMark(this.stream);
  }

  resendPubrel(packetId: number): void {
    this.write(encodeAck('pubrel', packetId, this.protocolVersion));
  }

  /** The output went over the stream's mark: the session is served again once it drains. */
  private watchDrain(): void {
    if (this.hasFlag(WATCHING_DRAIN)) return;
    this.setFlag(WATCHING_DRAIN, true);
    this.stream.once('drain', () => {
      this.setFlag(WATCHING_DRAIN, false);
      if (this.session && this.state === 'connected') this.broker.core.writable(this.session);
    });
  }

  // ---- PublishOrigin / Pausable: the client's messages -----------------------------------------

  stored(token: number, ok: boolean, message: CoreMessage, error?: unknown): void {
    publishStored(this, token, ok, message, error);
  }

  mayPause(): boolean {
    const session = this.session;
    return session === undefined || !this.broker.core.hasPendingDeliveries(session);
  }

  pausePublishing(): void {
    this.setFlag(PAUSED_BY_CORE, true);
    this.updateReading();
  }

  resumePublishing(): void {
    this.setFlag(PAUSED_BY_CORE, false);
    this.updateReading();
  }

  /**
   * Reads while nothing holds it back: the CONNECT being checked, answers the client has not
   * taken (`draining`), or the message core (a lagging target, the log's backlog).
   */
  private updateReading(): void {
    const hold = this.state === 'connecting' || this.hasFlag(DRAINING | PAUSED_BY_CORE | HELD_FOR_SHUTDOWN);
    if (hold) this.stream.pause();
    else if (this.state !== 'closed') this.stream.resume();
  }

  /** Shutdown: reads nothing more; what was already taken is still answered. */
  holdForShutdown(): void {
    this.setFlag(HELD_FOR_SHUTDOWN, true);
    this.updateReading();
  }

  /** Ends the connection without a word (nothing more can be sent to this client). */
  private destroyNow(): void {
    this.endSession();
    this.state = 'closed';
    if (this.extra) {
      this.extra.pending = undefined;
      this.extra.output?.drop();
    }
    this.stream.destroy();
    this.broker.closing(this);
  }

  /**
   * Ends the connection. An MQTT 5 client that had its CONNACK is first sent DISCONNECT with
   * `reasonCode` (when given) [MQTT-4.13.2-1]; a 3.1.1 client is just closed.
   */
  close(reasonCode?: number, reasonString?: string): void {
    if (this.state === 'closed') return;
    // PUBACKs already earned go out before the end, as every answer written before it does.
    this.writePubacks();
    this.endSession();
    if (reasonCode !== undefined && this.protocolVersion === 5 && this.hasFlag(CONNACK_SENT)) {
      this.send({ cmd: 'disconnect', reasonCode, properties: reasonString ? { reasonString } : undefined });
    }
    this.state = 'closed';
    if (this.extra) this.extra.pending = undefined;
    const stream = this.stream;
    // What this turn gathered goes before the end.
    this.extra?.output?.push(stream);
    stream.end(() => stream.destroy());
    // A peer that never reads would keep the socket: destroyed by the broker's sweep.
    this.broker.closing(this);
  }

  onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    // In a cluster, a node resumed from a pause longer than half its lease fences here, before it
    // reads or answers anything: this connection is then closed (docs/cluster.md, "A node paused").
    if (this.broker.core.fenced() && (this.state as ConnectionState) === 'closed') return;
    const now = (this.broker.now = this.broker.engine.clock.now());
    this.activeAt = smallTime(now);
    this.broker.core.countBytesReceived(chunk.length);
    if (this.state === 'new' && this.parser === undefined) {
      // The usual first chunk, one plain 3.1.1 CONNECT, is read without borrowing a parser.
      const connect = readSimpleConnect(chunk);
      if (connect) return this.onPacket(connect);
    }
    if (this.state === 'connected' && this.parser === undefined) {
      const rest = this.readPublishes(chunk);
      if (rest === undefined) return;
      chunk = rest;
    }
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

  /**
   * Reads the chunk's whole PUBLISHes of the simple form (wire/simple-publish.ts) and success
   * PUBACKs (wire/simple-puback.ts) itself, in order; returns the rest, for mqtt-packet (undefined: nothing is left). A short PUBLISH cut by
   * the chunk's end waits for the next chunk here, so a publisher's stream never needs a parser.
   */
  private readPublishes(chunk: Buffer): Buffer | undefined {
    const cut = this.extra?.cutPublish;
    if (cut !== undefined) {
      this.extra!.cutPublish = undefined;
      chunk = Buffer.concat([cut, chunk]);
    }
    const total = chunk.length;
    const version = this.protocolVersion;
    let offset = 0;
    while (offset < total) {
      const packet = readSimplePublish(chunk, offset, version) ?? readSimplePuback(chunk, offset, version);
      if (packet === undefined) break;
      offset += packetSize(packet.length!);
      this.onPacket(packet);
      if (this.state !== 'connected') return undefined;
    }
    if (offset === total) return undefined;
    const rest = offset === 0 ? chunk : chunk.subarray(offset);
    if (!isCutPublish(rest, this.broker.maxPacketSize)) return rest;
    // Copied: the chunk it ends is not kept alive for it.
    this.extras.cutPublish = Buffer.from(rest);
    return undefined;
  }

  onPacket(packet: Packet): void {
    if (this.state === 'closed') return;
    if (packetSize(packet.length ?? 0) > this.broker.maxPacketSize) return this.tooLarge();
    switch (this.state) {
      case 'new':
        // The first packet must be CONNECT [MQTT-3.1.0-1].
        if (packet.cmd !== 'connect') return this.close();
        {
          // Closed without a CONNACK (the level is not settled yet).
          const violation = connectViolation(packet);
          if (violation !== undefined) return this.refuse(violation);
        }
        this.state = 'connecting';
        let checking: void | Promise<void>;
        try {
          checking = handleConnect(this, packet as IConnectPacket);
        } catch (error) {
          return this.fail(error, 'CONNECT');
        }
        if (checking === undefined) return this.connected();
        // A password is being checked: reading waits (later packets would wait in `pending`).
        this.updateReading();
        // Out of the chunk's guard (onStreamData): the packets that waited are guarded here.
        checking.then(() => {
          try {
            this.connected();
          } catch (error) {
            this.fail(error, 'packets after CONNECT');
          }
        }, (error: unknown) => this.fail(error, 'CONNECT'));
        return;
      case 'connecting':
        (this.extras.pending ??= []).push(packet);
        return;
      case 'connected':
        this.dispatch(packet);
    }
  }

  private connected(): void {
    if (this.state !== 'connected') return;
    const pending = this.extra?.pending;
    if (this.extra) this.extra.pending = undefined;
    if (pending === undefined) {
      // Read on (a CONNECT handled at once never paused the stream).
      if (this.stream.isPaused()) this.updateReading();
      return;
    }
    for (const packet of pending) {
      if (this.state !== 'connected') return;
      this.dispatch(packet);
    }
    this.updateReading();
  }

  /** A connected client's packet to its handler (packets/dispatch.ts). */
  private dispatch(packet: Packet): void {
    dispatchPacket(this, packet);
  }

  /** A packet breaking a rule of the protocol closes the connection; MQTT 5 hears why. */
  refuse(violation: Violation): void {
    if (this.broker.log.isLevelEnabled('debug')) this.broker.log.debug({ address: this.address, clientId: this.clientId, reason: violation.reason }, 'protocol violation');
    this.close(violation.code, violation.reason);
  }

  /**
   * Something threw while this connection was handled (a handler, the parser, a stream): this
   * connection alone ends, and the log gets the error under a reference an MQTT 5 client also
   * hears (DISCONNECT 0x80). Nothing of the packets (payloads, passwords) is logged.
   */
  fail(error: unknown, during: string): void {
    const reference = this.logFault(error, during);
    // The parser may hold part of a packet or be mid-state: dropped, never lent again.
    this.parser = undefined;
    if (this.state === 'closed') {
      this.stream.destroy();
      return;
    }
    try {
      this.close(REASON.UNSPECIFIED_ERROR, new EngineError('INTERNAL', { reference }).message);
    } catch {
      // Closing failed too: the socket goes without a word.
      this.state = 'closed';
      this.stream.destroy();
    }
  }

  /** Logs a fault of this connection under a new reference (returned). */
  private logFault(error: unknown, during: string): string {
    const reference = newErrorReference();
    this.broker.log.error({ err: error, reference, during, clientId: this.clientId, address: this.address }, 'MQTT connection closed after an internal error');
    return reference;
  }

  /** A malformed packet closes the connection [MQTT-4.8.0-1]; MQTT 5 hears 0x81 when connected. */
  onMalformed(error: Error): void {
    if (this.state === 'closed') return;
    if (this.state === 'new' && /protocol version/i.test(error.message)) {
      // A CONNECT of a level mqtt-packet cannot read: CONNACK 0x01 in the 3.1.1 encoding [MQTT-3.1.2-2].
      this.send({ cmd: 'connack', returnCode: RETURN_CODE_311.UNACCEPTABLE_PROTOCOL_VERSION, sessionPresent: false });
      return this.close();
    }
    if (this.broker.log.isLevelEnabled('debug')) this.broker.log.debug({ address: this.address, clientId: this.clientId, reason: error.message }, 'malformed packet');
    this.close(REASON.MALFORMED_PACKET, `malformed packet: ${error.message}`);
  }

  /** Larger than mqtt_max_packet_size [MQTT-3.2.2-15]: MQTT 5 hears 0x95. */
  private tooLarge(): void {
    this.close(REASON.PACKET_TOO_LARGE, `packets are limited to ${this.broker.maxPacketSize} bytes`);
  }

  onClosed(): void {
    // In a cluster, a node resumed from a pause fences first: its sessions are let go of, so no will is sent from here.
    this.broker.core.fenced();
    if (this.state !== 'closed') {
      this.state = 'closed';
      if (this.extra) this.extra.pending = undefined;
    }
    try {
      this.endSession();
    } finally {
      // Forgotten by the broker even when the session's end failed.
      this.broker.closed(this);
    }
  }

  /** The session lets go of this connection (once): the will, the session's expiry apply. */
  private endSession(): void {
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    this.broker.core.closeSession(session, this, this.sendWillOnClose);
  }
}

/** Success PUBACKs of `ids` (4 bytes each [MQTT-3.4.2-1]) into `bytes` from `at`. */
function fillPubacks(bytes: Buffer, at: number, ids: number[]): void {
  for (let i = 0; i < ids.length; i++, at += 4) {
    const id = ids[i];
    bytes[at] = 0x40;
    bytes[at + 1] = 2;
    bytes[at + 2] = id >> 8;
    bytes[at + 3] = id & 0xff;
  }
}
