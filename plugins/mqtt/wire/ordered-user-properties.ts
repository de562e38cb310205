/**
 * An mqtt-packet parser that also keeps User Properties in their order.
 *
 * Why: MQTT 5 forwards user properties unaltered and in their order, repeated names included
 * [MQTT-3.3.2-17, MQTT-3.3.2-18], but mqtt-packet's `_parseProperties` groups them into an object
 * keyed by name, so `b=2, a=1, b=again` comes out as `{ b: ['2', 'again'], a: '1' }` and the order
 * is lost. The parser instance made here records every pair as it is read and attaches the ordered
 * list to the properties object under a symbol; the object itself stays as mqtt-packet makes it,
 * so all other code reading `properties.userProperties` is unchanged.
 *
 * How: only this instance is changed (not mqtt-packet's prototype). `_parseProperties` opens a list
 * for one properties section (PUBLISH, CONNECT, will, …) and `_parseStringPair` (which mqtt-packet
 * uses for User Property (0x26) only, the one property of type "pair") appends to it. Both are
 * internals of mqtt-packet 9: making a parser throws if a release renames them.
 */
import mqttPacket, { type Parser } from 'mqtt-packet';
import type { UserProperties } from '../../../kernel/messaging/message';

/** The ordered user properties of a parsed properties object. */
const IN_ORDER = Symbol('userPropertiesInOrder');

/** The mqtt-packet parser internals this module wraps. */
interface ParserInternals {
  _parseProperties(): Record<string, unknown> | false;
  _parseStringPair(): { name: string | null; value: string | null };
  _emitError(error: Error): void;
}

/** A parser (as `mqttPacket.parser()`) whose properties carry their user properties in order. */
export function orderedUserPropertiesParser(options?: object): Parser {
  const parser = mqttPacket.parser(options);
  const internals = parser as unknown as ParserInternals;
  const parseProperties = internals._parseProperties;
  const parseStringPair = internals._parseStringPair;
  if (typeof parseProperties !== 'function' || typeof parseStringPair !== 'function') {
    throw new Error('mqtt-packet parser internals changed: user properties cannot be kept in order');
  }
  /** The list of the properties section being read (undefined outside one). */
  let reading: UserProperties | undefined;

  internals._parseStringPair = function (this: ParserInternals) {
    const pair = parseStringPair.call(this);
    if (reading !== undefined) {
      // mqtt-packet would file a pair it could not read under the name "null": malformed.
      if (pair.name === null || pair.value === null) this._emitError(new Error('Cannot parse user property'));
      else reading.push({ key: pair.name, value: pair.value });
    }
    return pair;
  };

  internals._parseProperties = function (this: ParserInternals) {
    const list: UserProperties = [];
    reading = list;
    try {
      const result = parseProperties.call(this);
      // Not enumerable (a symbol): mqtt-packet's "any properties?" check and generator ignore it.
      if (result && list.length > 0) Object.defineProperty(result, IN_ORDER, { value: list });
      return result;
    } finally {
      reading = undefined;
    }
  };
  return parser;
}

/**
 * The user properties of parsed properties, in wire order. Properties that did not come from an
 * `orderedUserPropertiesParser` (built in code) are read from mqtt-packet's object: in its key
 * order, repeated names together, which is all such an object can say.
 */
export function userPropertiesInOrder(properties: { userProperties?: Record<string, string | string[]> }): UserProperties | undefined {
  const ordered = (properties as { [IN_ORDER]?: UserProperties })[IN_ORDER];
  if (ordered !== undefined) return ordered;
  const grouped = properties.userProperties;
  if (grouped === undefined) return undefined;
  const list: UserProperties = [];
  for (const key of Object.keys(grouped)) {
    const value = grouped[key];
    if (Array.isArray(value)) for (const each of value) list.push({ key, value: each });
    else list.push({ key, value });
  }
  return list.length > 0 ? list : undefined;
}
