/**
 * mqtt-packet parsers lent to connections while they have bytes to parse. A parser holds ~1.5 KB
 * (an EventEmitter, a buffer list, a packet); an idle connection needs none, so it gives its
 * parser back once a chunk ended on a packet boundary, and the next chunk borrows one again.
 * The listeners are set once per parser and call whichever connection holds it.
 */
import type mqttPacket from 'mqtt-packet';
import type { Packet } from 'mqtt-packet';
import { orderedUserPropertiesParser } from './wire/ordered-user-properties';

/** Who receives a parser's packets and errors. */
export interface PacketSink {
  onPacket(packet: Packet): void;
  onMalformed(error: Error): void;
}

type Parser = ReturnType<typeof mqttPacket.parser>;

/** mqtt-packet's parser state this pool reads (not in its typings). */
interface ParserState {
  sink?: PacketSink;
  settings: { protocolVersion?: number };
  packet: { length: number };
  error: Error | null;
  _stateCounter: number;
  _list: { length: number };
}

/** Parsers kept for reuse; more are created when needed and dropped when given back over this. */
const POOL_LIMIT = 64;
const pool: Parser[] = [];

function create(): Parser {
  const parser = orderedUserPropertiesParser();
  parser.on('packet', function (this: ParserState, packet: Packet) { this.sink?.onPacket(packet); });
  parser.on('error', function (this: ParserState, error: Error) { this.sink?.onMalformed(error); });
  return parser;
}

/** A parser reading packets of `protocolVersion` (the level of a CONNECT it reads becomes its level). */
export function borrowParser(sink: PacketSink, protocolVersion: number): Parser {
  const parser = pool.pop() ?? create();
  const state = parser as unknown as ParserState;
  state.sink = sink;
  state.settings = { protocolVersion };
  return parser;
}

/** True when the parser holds nothing of a packet (it can be given back). */
export function parserIdle(parser: Parser): boolean {
  const state = parser as unknown as ParserState;
  return state._stateCounter === 0 && state._list.length === 0 && state.error === null;
}

/** The announced length of a packet still arriving (0 when none). */
export function partialPacketLength(parser: Parser): number {
  const length = (parser as unknown as ParserState).packet.length;
  return length > 0 ? length : 0;
}

/** Gives a parser back; one holding part of a packet (or an error) is dropped, never lent again. */
export function releaseParser(parser: Parser): void {
  const state = parser as unknown as ParserState;
  state.sink = undefined;
  if (parserIdle(parser) && pool.length < POOL_LIMIT) pool.push(parser);
}
