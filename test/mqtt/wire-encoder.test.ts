/**
 * The hand-made PUBLISH encoder (plugins/mqtt/wire/publish-encoder.ts) and the parser that keeps
 * user properties in order (plugins/mqtt/wire/ordered-user-properties.ts): packets round-trip
 * through mqtt-packet's parser field for field, and are byte for byte what mqttPacket.generate
 * writes whenever the user properties' order is one mqtt-packet can express (no name repeated
 * apart). Also outbound.ts's cached forms with the packet id and DUP patched in.
 */
import assert from 'node:assert/strict';
import mqttPacket, { type IPublishPacket, type Packet } from 'mqtt-packet';
import type { CoreMessage, UserProperties } from '../../plugins/messaging/message';
import { encodePublish, type PublishFields } from '../../plugins/mqtt/wire/publish-encoder';
import { orderedUserPropertiesParser, userPropertiesInOrder } from '../../plugins/mqtt/wire/ordered-user-properties';
import { cachedForms, encodePublish as encodeOutbound } from '../../plugins/mqtt/outbound';

type Level = 4 | 5;

/** Every packet `bytes` holds, read by a parser at `level`; fails on a parse error or leftover bytes. */
function parseAll(bytes: Buffer, level: Level, ordered = false): IPublishPacket[] {
  const parser = ordered ? orderedUserPropertiesParser({ protocolVersion: level }) : mqttPacket.parser({ protocolVersion: level });
  const packets: IPublishPacket[] = [];
  let failure: Error | undefined;
  parser.on('packet', (packet: Packet) => packets.push(packet as IPublishPacket));
  parser.on('error', (error: Error) => { failure = error; });
  const left = parser.parse(bytes);
  if (failure) throw failure;
  assert.equal(left, 0, 'the parser used every byte');
  return packets;
}

function parseOne(bytes: Buffer, level: Level, ordered = false): IPublishPacket {
  const packets = parseAll(bytes, level, ordered);
  assert.equal(packets.length, 1);
  return packets[0];
}

/** User properties the way mqtt-packet holds them: by name, repeated names in an array. */
function grouped(list: UserProperties): Record<string, string | string[]> {
  const record: Record<string, string | string[]> = {};
  for (const { key, value } of list) {
    const previous = record[key];
    if (previous === undefined) record[key] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else record[key] = [previous, value];
  }
  return record;
}

/** The list mqtt-packet writes from a grouped record (its key order, repeats together). */
function flattened(record: Record<string, string | string[]>): UserProperties {
  const list: UserProperties = [];
  for (const key of Object.keys(record)) {
    const value = record[key];
    for (const each of Array.isArray(value) ? value : [value]) list.push({ key, value: each });
  }
  return list;
}

/** Integer-like keys sort first in a JS object: mqtt-packet cannot keep their place either. */
function mqttPacketKeepsOrder(list: UserProperties): boolean {
  const back = flattened(grouped(list));
  return back.every((p, i) => p.key === list[i].key && p.value === list[i].value);
}

/**
 * The properties object mqttPacket.generate takes for `fields`, its keys in the order the encoder
 * writes them (this hop's, then the message's own), so that the bytes can be compared.
 */
function mqttPacketProperties(fields: PublishFields): IPublishPacket['properties'] | undefined {
  const out: Record<string, unknown> = {};
  if (fields.messageExpiryInterval !== undefined) out.messageExpiryInterval = fields.messageExpiryInterval;
  if (fields.topicAlias !== undefined) out.topicAlias = fields.topicAlias;
  const ids = fields.subscriptionIdentifiers;
  if (ids !== undefined && ids.length > 0) out.subscriptionIdentifier = ids.length === 1 ? ids[0] : [...ids];
  const p = fields.properties;
  if (p?.payloadFormatIndicator !== undefined) out.payloadFormatIndicator = p.payloadFormatIndicator;
  if (p?.contentType !== undefined) out.contentType = p.contentType;
  if (p?.responseTopic !== undefined) out.responseTopic = p.responseTopic;
  if (p?.correlationData !== undefined) out.correlationData = p.correlationData;
  if (p?.userProperties !== undefined && p.userProperties.length > 0) out.userProperties = grouped(p.userProperties);
  return Object.keys(out).length > 0 ? out as IPublishPacket['properties'] : undefined;
}

function withoutUserProperties(properties: IPublishPacket['properties'] | undefined): Record<string, unknown> | undefined {
  if (properties === undefined) return undefined;
  const out: Record<string, unknown> = { ...properties };
  delete out.userProperties;
  return out;
}

function remainingLengthSize(length: number): number {
  return length < 128 ? 1 : length < 16_384 ? 2 : length < 2_097_152 ? 3 : 4;
}

/**
 * Encodes `fields`, and checks: the size the header announces, every field read back by
 * mqtt-packet, the user properties in order through the ordered parser, and the bytes against
 * mqttPacket.generate when mqtt-packet can express the same order.
 */
function roundTrip(fields: PublishFields, level: Level): Buffer {
  const bytes = encodePublish(fields, level);
  const packet = parseOne(bytes, level);
  const remainingLength = packet.length ?? -1;
  assert.equal(bytes.length, 1 + remainingLengthSize(remainingLength) + remainingLength, 'the remaining length announces the rest of the packet');
  assert.equal(packet.cmd, 'publish');
  assert.equal(packet.topic, fields.topic);
  assert.ok(Buffer.isBuffer(packet.payload));
  assert.ok((packet.payload as Buffer).equals(fields.payload), 'payload');
  assert.equal(packet.qos, fields.qos);
  assert.equal(packet.retain, fields.retain);
  assert.equal(packet.dup, fields.qos > 0 && fields.dup);
  if (fields.qos > 0) assert.equal(packet.messageId, fields.packetId);
  const expected = level === 5 ? mqttPacketProperties(fields) : undefined;
  // User properties are compared in order below: mqtt-packet's object can lose one (a repeated
  // name whose first value is '' keeps only the later value).
  assert.deepEqual(withoutUserProperties(packet.properties), withoutUserProperties(expected));

  const userProperties = level === 5 ? fields.properties?.userProperties : undefined;
  const ordered = parseOne(bytes, level, true);
  if (userProperties !== undefined && userProperties.length > 0) {
    assert.ok(ordered.properties);
    assert.deepEqual(userPropertiesInOrder(ordered.properties), userProperties, 'user properties in their order');
  }

  if (userProperties === undefined || mqttPacketKeepsOrder(userProperties)) {
    const generated = mqttPacket.generate({
      cmd: 'publish', topic: fields.topic, payload: fields.payload, qos: fields.qos, retain: fields.retain, dup: fields.qos > 0 && fields.dup,
      messageId: fields.qos > 0 ? fields.packetId : undefined, properties: expected,
    }, { protocolVersion: level });
    assert.deepEqual(bytes, generated, 'the bytes mqttPacket.generate writes');
  }
  return bytes;
}

function fields(extra: Partial<PublishFields> = {}): PublishFields {
  return { topic: 'a/b', payload: Buffer.from('payload'), qos: 0, retain: false, dup: false, packetId: 1, ...extra };
}

/** A deterministic pseudo-random source (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('mqtt wire: the PUBLISH encoder', () => {
  describe('fixed header and variable header, levels 4 and 5', () => {
    for (const level of [4, 5] as const) {
      it(`level ${level}: every QoS × RETAIN × DUP, bytes as mqttPacket.generate writes`, () => {
        for (const qos of [0, 1, 2] as const) {
          for (const retain of [false, true]) {
            for (const dup of [false, true]) {
              if (qos === 0 && dup) continue;
              roundTrip(fields({ qos, retain, dup, packetId: qos === 0 ? 1 : 65_535 - qos }), level);
            }
          }
        }
      });

      it(`level ${level}: empty payload, empty properties, one-character topic`, () => {
        roundTrip(fields({ topic: 'x', payload: Buffer.alloc(0) }), level);
        roundTrip(fields({ topic: 'x', payload: Buffer.alloc(0), qos: 1, packetId: 1, properties: {} }), level);
      });

      it(`level ${level}: topics of many lengths, multi-byte UTF-8, up to 65535 bytes`, () => {
        for (const length of [1, 127, 128, 255, 256, 16_383, 16_384, 65_535]) roundTrip(fields({ topic: 't'.repeat(length), qos: 1, packetId: 7 }), level);
        roundTrip(fields({ topic: 'ünïcödé/€/𝄞/日本' }), level);
        roundTrip(fields({ topic: '€'.repeat(21_845) }), level); // 65535 bytes
        assert.throws(() => encodePublish(fields({ topic: 't'.repeat(65_536) }), level), RangeError);
        assert.throws(() => encodePublish(fields({ topic: '€'.repeat(21_846) }), level), RangeError);
      });

      it(`level ${level}: remaining lengths at the variable byte integer boundaries 127/128, 16383/16384, 2097151/2097152`, () => {
        const topic = 'boundary/topic';
        for (const qos of [0, 1] as const) {
          // Remaining length = topic (2 + bytes) + packet id + (MQTT 5: property length 0, one byte) + payload.
          const overhead = 2 + topic.length + (qos > 0 ? 2 : 0) + (level === 5 ? 1 : 0);
          for (const target of [127, 128, 16_383, 16_384, 2_097_151, 2_097_152]) {
            const payload = Buffer.alloc(target - overhead, 0xa5);
            const bytes = roundTrip(fields({ topic, payload, qos, packetId: 300 }), level);
            assert.equal(bytes.length, 1 + remainingLengthSize(target) + target, `remaining length ${target}`);
          }
        }
      });
    }

    it('DUP is never set on QoS 0 [MQTT-3.3.1-2]', () => {
      for (const level of [4, 5] as const) assert.equal(encodePublish(fields({ qos: 0, dup: true }), level)[0], 0x30);
    });

    it('level 4 writes no properties, whatever it is given', () => {
      const withProperties = fields({
        qos: 1, packetId: 9, properties: { contentType: 'text/plain', userProperties: [{ key: 'k', value: 'v' }] },
        messageExpiryInterval: 10, topicAlias: 3, subscriptionIdentifiers: [4],
      });
      assert.deepEqual(encodePublish(withProperties, 4), encodePublish(fields({ qos: 1, packetId: 9 }), 4));
    });

    it('a packet over 268,435,455 bytes, packet identifier 0 at QoS 1 and out-of-range numbers are refused', () => {
      const huge = { length: 268_435_455 } as Buffer;
      assert.throws(() => encodePublish(fields({ payload: huge }), 4), RangeError);
      assert.throws(() => encodePublish(fields({ qos: 1, packetId: 0 }), 4), RangeError);
      assert.throws(() => encodePublish(fields({ qos: 2, packetId: 65_536 }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ topicAlias: 0 }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ topicAlias: 65_536 }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ subscriptionIdentifiers: [0] }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ subscriptionIdentifiers: [268_435_456] }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ messageExpiryInterval: -1 }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ messageExpiryInterval: 2 ** 32 }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ properties: { contentType: 'c'.repeat(65_536) } }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ properties: { correlationData: Buffer.alloc(65_536) } }), 5), RangeError);
      assert.throws(() => encodePublish(fields({ properties: { userProperties: [{ key: 'k', value: 'v'.repeat(65_536) }] } }), 5), RangeError);
    });
  });

  describe('MQTT 5 properties, each one', () => {
    const cases: Array<[string, Partial<PublishFields>]> = [
      ['payload format indicator 1', { properties: { payloadFormatIndicator: true } }],
      ['payload format indicator 0 (kept, not left out)', { properties: { payloadFormatIndicator: false } }],
      ['message expiry interval 0', { messageExpiryInterval: 0 }],
      ['message expiry interval 1', { messageExpiryInterval: 1 }],
      ['message expiry interval 4294967295', { messageExpiryInterval: 0xffff_ffff }],
      ['topic alias 1 with the topic', { topicAlias: 1 }],
      ['topic alias 65535 instead of the topic', { topicAlias: 65_535, topic: '' }],
      ['response topic', { properties: { responseTopic: 'reply/ü/to' } }],
      ['empty response topic', { properties: { responseTopic: '' } }],
      ['correlation data, every byte value', { properties: { correlationData: Buffer.from(Array.from({ length: 256 }, (_, i) => i)) } }],
      ['empty correlation data', { properties: { correlationData: Buffer.alloc(0) } }],
      ['content type', { properties: { contentType: 'application/vnd.test+json; charset=utf-8' } }],
      ['one user property', { properties: { userProperties: [{ key: 'name', value: 'value' }] } }],
      ['an empty user property', { properties: { userProperties: [{ key: '', value: '' }] } }],
      ['a user property of 65535-byte name and value', { properties: { userProperties: [{ key: 'k'.repeat(65_535), value: 'v'.repeat(65_535) }] } }],
      ['subscription identifier 1', { subscriptionIdentifiers: [1] }],
      ...[127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455].map((id): [string, Partial<PublishFields>] => [`subscription identifier ${id}`, { subscriptionIdentifiers: [id] }]),
      ['several subscription identifiers, one property each [MQTT-3.3.4-3]', { subscriptionIdentifiers: [1, 128, 16_384, 2_097_152, 268_435_455] }],
      ['no subscription identifier (an empty list)', { subscriptionIdentifiers: [] }],
      ['all of them', {
        topic: '', topicAlias: 12, messageExpiryInterval: 3600, subscriptionIdentifiers: [5, 300],
        properties: {
          payloadFormatIndicator: true, contentType: 'text/plain', responseTopic: 'r/t', correlationData: Buffer.from([0, 1, 2]),
          userProperties: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }],
        },
      }],
    ];
    for (const [name, extra] of cases) {
      it(`${name}: read back by mqtt-packet, bytes as mqttPacket.generate writes`, () => {
        for (const qos of [0, 1, 2] as const) roundTrip(fields({ ...extra, qos, packetId: 42 + qos }), 5);
      });
    }

    it('property lengths at the variable byte integer boundaries 127/128 and 16383/16384', () => {
      for (const target of [127, 128, 16_383, 16_384]) {
        // One user property: 1 (identifier) + 2 + name + 2 + value bytes.
        const value = 'v'.repeat(target - 1 - 2 - 1 - 2);
        const bytes = roundTrip(fields({ properties: { userProperties: [{ key: 'k', value }] } }), 5);
        let propertyLengthAt = 1;
        while (bytes[propertyLengthAt] & 0x80) propertyLengthAt++;
        propertyLengthAt += 1 + 2 + 'a/b'.length; // past the remaining length and the topic (QoS 0: no packet id)
        const size = remainingLengthSize(target);
        let read = 0;
        for (let i = 0, multiplier = 1; i < size; i++, multiplier *= 128) read += (bytes[propertyLengthAt + i] & 0x7f) * multiplier;
        assert.equal(read, target, `property length ${target}`);
      }
    });
  });

  describe('user properties in their order [MQTT-3.3.2-17, MQTT-3.3.2-18]', () => {
    const interleaved: UserProperties = [
      { key: 'b', value: '2' }, { key: 'a', value: '1' }, { key: 'b', value: 'again' },
      { key: 'ünïcode', value: 'välue' }, { key: 'a', value: '1' }, { key: '', value: '' },
    ];

    it('repeated names apart stay apart, in order; mqtt-packet\'s own object still groups them', () => {
      const bytes = roundTrip(fields({ qos: 1, packetId: 10, properties: { userProperties: interleaved } }), 5);
      const plainPacket = parseOne(bytes, 5);
      assert.deepEqual({ ...plainPacket.properties?.userProperties }, { b: ['2', 'again'], a: ['1', '1'], 'ünïcode': 'välue', '': '' });
      const orderedPacket = parseOne(bytes, 5, true);
      assert.deepEqual({ ...orderedPacket.properties?.userProperties }, { ...plainPacket.properties?.userProperties }, 'the object is as mqtt-packet makes it');
      assert.deepEqual(userPropertiesInOrder(orderedPacket.properties!), interleaved);
    });

    it('names that look like numbers keep their place (a JS object would move them first)', () => {
      roundTrip(fields({ properties: { userProperties: [{ key: 'z', value: '1' }, { key: '10', value: '2' }, { key: '2', value: '3' }] } }), 5);
    });

    it('the ordered parser keeps the order of each of several packets in one chunk, and of a CONNECT\'s will properties', () => {
      const first: UserProperties = [{ key: 'x', value: '1' }, { key: 'y', value: '2' }, { key: 'x', value: '3' }];
      const second: UserProperties = [{ key: 'q', value: 'r' }];
      const chunk = Buffer.concat([
        encodePublish(fields({ properties: { userProperties: first } }), 5),
        encodePublish(fields({ topic: 'plain' }), 5),
        encodePublish(fields({ properties: { userProperties: second } }), 5),
      ]);
      const packets = parseAll(chunk, 5, true);
      assert.deepEqual(packets.map((p) => p.properties && userPropertiesInOrder(p.properties)), [first, undefined, second]);

      // A will's properties: CONNECT bytes with interleaved user properties, by hand.
      const will = Buffer.concat([
        Buffer.from([0x26, 0, 1, 0x62, 0, 1, 0x31]), // b=1
        Buffer.from([0x26, 0, 1, 0x61, 0, 1, 0x32]), // a=2
        Buffer.from([0x26, 0, 1, 0x62, 0, 1, 0x33]), // b=3
      ]);
      const body = Buffer.concat([
        Buffer.from([0, 4, 0x4d, 0x51, 0x54, 0x54, 5, 0x06, 0, 60, 0]), // "MQTT", level 5, clean start + will, keep alive 60, no properties
        Buffer.from([0, 1, 0x63]), // client id "c"
        Buffer.from([will.length]), will,
        Buffer.from([0, 1, 0x77]), // will topic "w"
        Buffer.from([0, 0]), // empty will payload
      ]);
      const connect = Buffer.concat([Buffer.from([0x10, body.length]), body]);
      const parser = orderedUserPropertiesParser();
      let parsed: mqttPacket.IConnectPacket | undefined;
      parser.on('packet', (packet: Packet) => { parsed = packet as mqttPacket.IConnectPacket; });
      parser.on('error', (error: Error) => { throw error; });
      parser.parse(connect);
      assert.ok(parsed?.will?.properties);
      assert.deepEqual(userPropertiesInOrder(parsed.will.properties), [{ key: 'b', value: '1' }, { key: 'a', value: '2' }, { key: 'b', value: '3' }]);
    });

    it('properties built in code (no ordered parser) are read in their object\'s order', () => {
      assert.deepEqual(userPropertiesInOrder({ userProperties: { a: '1', b: ['2', '3'] } }), [{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { key: 'b', value: '3' }]);
      assert.equal(userPropertiesInOrder({}), undefined);
      assert.equal(userPropertiesInOrder({ userProperties: {} }), undefined);
    });

    it('a user property cut short by the property length is a malformed packet', () => {
      // Property length 4 holds the name "k" but not its value; the value's length is read past it.
      const properties = Buffer.from([0x26, 0, 1, 0x6b]);
      const body = Buffer.concat([Buffer.from([0, 1, 0x74, properties.length]), properties, Buffer.from([0xff])]);
      const parser = orderedUserPropertiesParser({ protocolVersion: 5 });
      const errors: Error[] = [];
      let packets = 0;
      parser.on('packet', () => { packets++; });
      parser.on('error', (error: Error) => errors.push(error));
      parser.parse(Buffer.concat([Buffer.from([0x30, body.length]), body]));
      assert.equal(packets, 0);
      assert.ok(errors.length > 0);
    });
  });

  it('round-trips 600 pseudo-random packets (seeded), levels 4 and 5, every field and property', () => {
    const next = random(20_261_123);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)];
    const text = (max: number): string => {
      const alphabet = ['a', 'b', '/', '0', '9', ' ', 'ü', '€', '𝄞', '日'];
      let out = '';
      const length = Math.floor(next() * max);
      for (let i = 0; i < length; i++) out += pick(alphabet);
      return out;
    };
    for (let n = 0; n < 600; n++) {
      const level = pick([4, 5] as const);
      const qos = pick([0, 1, 2] as const);
      const topicAlias = level === 5 && next() < 0.3 ? 1 + Math.floor(next() * 65_535) : undefined;
      const publish: PublishFields = {
        topic: topicAlias !== undefined && next() < 0.5 ? '' : text(next() < 0.1 ? 3000 : 40) || 't',
        payload: Buffer.from(Array.from({ length: Math.floor(next() * (next() < 0.1 ? 20_000 : 200)) }, () => Math.floor(next() * 256))),
        qos, retain: next() < 0.5, dup: qos > 0 && next() < 0.3, packetId: 1 + Math.floor(next() * 65_535),
        topicAlias,
        messageExpiryInterval: next() < 0.3 ? Math.floor(next() * 0xffff_ffff) : undefined,
        subscriptionIdentifiers: next() < 0.3 ? Array.from({ length: 1 + Math.floor(next() * 3) }, () => 1 + Math.floor(next() * 268_435_455)) : undefined,
      };
      if (next() < 0.7) {
        publish.properties = {
          payloadFormatIndicator: next() < 0.3 ? next() < 0.5 : undefined,
          contentType: next() < 0.3 ? text(30) : undefined,
          responseTopic: next() < 0.3 ? text(30) : undefined,
          correlationData: next() < 0.3 ? Buffer.from(text(20)) : undefined,
          userProperties: next() < 0.6 ? Array.from({ length: Math.floor(next() * 6) }, () => ({ key: pick(['a', 'b', 'c', '', 'ü']), value: text(10) })) : undefined,
        };
      }
      roundTrip(publish, level);
    }
  });
});

describe('mqtt wire: outbound forms (outbound.ts)', () => {
  function message(extra: Partial<CoreMessage> = {}): CoreMessage {
    return {
      topic: 'forms/t', payload: Buffer.from('body'), qos: 2, retain: false, publisher: 'p', createdAt: 1_000_000, sequence: 1,
      properties: { contentType: 'text/plain', userProperties: [{ key: 'b', value: '1' }, { key: 'a', value: '2' }, { key: 'b', value: '3' }] },
      ...extra,
    };
  }
  const options = { qos: 1 as const, retain: false, dup: false, packetId: 513, now: 1_000_000 };

  it('a form is encoded once; each delivery gets its packet id and DUP patched into a copy', () => {
    for (const level of [4, 5] as const) {
      const m = message();
      const first = encodeOutbound(m, { ...options, level });
      assert.equal(cachedForms(m).length, 1, 'the form is cached on the message');
      const second = encodeOutbound(m, { ...options, level, packetId: 0x1234, dup: true });
      assert.notEqual(first, second);
      assert.equal(cachedForms(m).length, 1, 'still one form');
      const a = parseOne(first, level, true);
      const b = parseOne(second, level, true);
      assert.equal(a.messageId, 513);
      assert.equal(a.dup, false);
      assert.equal(b.messageId, 0x1234);
      assert.equal(b.dup, true);
      assert.deepEqual(second, encodePublish({ topic: 'forms/t', payload: Buffer.from('body'), qos: 1, retain: false, dup: true, packetId: 0x1234, properties: m.properties }, level));
      if (level === 5) assert.deepEqual(userPropertiesInOrder(b.properties!), m.properties!.userProperties);
      else assert.equal(b.properties, undefined);
    }
  });

  it('a message delivered in several forms keeps each form (the first one too) and sends the same bytes again', () => {
    const m = message();
    const forms = [
      { level: 4 as const, qos: 0 as const, retain: false },
      { level: 5 as const, qos: 0 as const, retain: true },
      { level: 4 as const, qos: 1 as const, retain: false },
    ];
    const first = forms.map((f) => encodeOutbound(m, { ...options, ...f }));
    assert.equal(cachedForms(m).length, 3, 'three forms cached');
    forms.forEach((f, i) => {
      const again = encodeOutbound(m, { ...options, ...f });
      assert.deepEqual(again, first[i], `form ${i} again`);
      assert.deepEqual(again, encodePublish({ topic: 'forms/t', payload: Buffer.from('body'), qos: f.qos, retain: f.retain, dup: false, packetId: 513, properties: m.properties }, f.level));
    });
    assert.equal(encodeOutbound(m, { ...options, level: 4, qos: 0, retain: false }), first[0], 'a QoS 0 form is the cached buffer itself');
    assert.equal(cachedForms(m).length, 3, 'still three forms');
  });

  it('a delivery with its own properties (alias, subscription identifiers, remaining expiry) is encoded for itself', () => {
    const m = message({ properties: { messageExpiryInterval: 60, userProperties: [{ key: 'z', value: '1' }, { key: 'y', value: '2' }, { key: 'z', value: '3' }] } });
    const bytes = encodeOutbound(m, { ...options, level: 5, now: 1_000_000 + 25_000, alias: 4, aliasOnly: true, subscriptionIds: [7, 9] });
    assert.equal(m.wire, undefined, 'nothing cached');
    const packet = parseOne(bytes, 5, true);
    assert.equal(packet.topic, '');
    assert.equal(packet.properties?.topicAlias, 4);
    assert.deepEqual(packet.properties?.subscriptionIdentifier, [7, 9]);
    assert.equal(packet.properties?.messageExpiryInterval, 35, 'the remaining lifetime [MQTT-3.3.2-6]');
    assert.deepEqual(userPropertiesInOrder(packet.properties!), m.properties!.userProperties);
  });
});
