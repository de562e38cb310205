/**
 * Packets for the fuzz suite (18): valid packets of every type at both levels, made with
 * mqtt-packet's encoder from seeded random fields, and mutations of them (bit flips, truncation,
 * a remaining length that lies, splices of two packets, random bytes). Deterministic for a seed.
 */
import mqttPacket, { type Packet } from 'mqtt-packet';

/** mulberry32: a small seeded PRNG (the same seed gives the same packets). */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = this.int(256);
    return out;
  }
}

const TOPICS = ['fuzz/a', 'fuzz/b/c', 'fuzz/+/x', 'fuzz/#', '#', '+', '$share/g/fuzz/a', '$share//x', '$SYS/x', '', 'a//b', 'fuzz/ü/€', '/', 'fuzz/a#', 'fuzz/\u0000'];
const CLIENT_IDS = ['', 'fuzz-1', 'fuzz-2', 'fuzz-3'];

function topic(random: Random): string {
  if (random.chance(0.1)) return random.bytes(random.int(24)).toString('latin1');
  return random.pick(TOPICS);
}

function packetId(random: Random): number {
  return random.chance(0.05) ? 0 : random.chance(0.8) ? 1 + random.int(8) : random.int(65536);
}

function payload(random: Random): Buffer {
  return random.bytes(random.chance(0.02) ? random.int(4000) : random.int(48));
}

function userProperties(random: Random): Record<string, string | string[]> {
  return random.chance(0.5) ? { a: 'b' } : { k: ['v1', 'v2'], '': '' };
}

/** Some MQTT 5 properties, mostly of the packet's type, now and then one of another type. */
function properties(random: Random, kind: string): Record<string, unknown> | undefined {
  if (!random.chance(0.4)) return undefined;
  const out: Record<string, unknown> = {};
  const add = (name: string, value: unknown): void => { if (random.chance(0.5)) out[name] = value; };
  add('userProperties', userProperties(random));
  if (!['publish', 'will', 'connect', 'subscribe', 'unsubscribe'].includes(kind) || random.chance(0.05)) add('reasonString', 'fuzz');
  if (kind === 'publish' || kind === 'will') {
    add('payloadFormatIndicator', random.chance(0.5));
    add('messageExpiryInterval', random.int(100));
    add('contentType', 'text/plain');
    add('responseTopic', topic(random));
    add('correlationData', random.bytes(4));
  }
  if (kind === 'publish') add('topicAlias', random.int(4));
  if (kind === 'subscribe' || random.chance(0.05)) add('subscriptionIdentifier', random.int(3));
  if (kind === 'connect' || kind === 'disconnect' || random.chance(0.05)) add('sessionExpiryInterval', random.int(10));
  if (kind === 'connect') {
    add('receiveMaximum', 1 + random.int(5));
    add('maximumPacketSize', 20 + random.int(200));
    add('topicAliasMaximum', random.int(5));
    add('requestProblemInformation', random.chance(0.5));
  }
  if (kind === 'will') add('willDelayInterval', random.int(3));
  if (random.chance(0.05)) add('authenticationMethod', 'fuzz');
  return out;
}

/** A CONNECT (no user name: the fuzzer never counts as a failed login of a real account, now and then one of its own). */
export function connectPacket(random: Random, protocolVersion: number, options: { loginOnly?: boolean } = {}): Packet {
  const v5 = protocolVersion === 5;
  const packet: Record<string, unknown> = {
    cmd: 'connect', protocolId: 'MQTT', protocolVersion, clientId: options.loginOnly ? '' : random.pick(CLIENT_IDS),
    clean: options.loginOnly ? true : random.chance(0.7), keepalive: random.chance(0.8) ? 0 : random.int(5),
  };
  if (options.loginOnly) return packet as unknown as Packet;
  if (v5) packet.properties = properties(random, 'connect');
  if (random.chance(0.3)) {
    packet.will = {
      topic: topic(random), payload: payload(random), qos: random.int(3), retain: random.chance(0.3),
      ...(v5 ? { properties: properties(random, 'will') } : {}),
    };
  }
  if (random.chance(0.03)) {
    packet.username = 'fuzzer';
    packet.password = random.bytes(4);
  }
  return packet as unknown as Packet;
}

const TYPES = ['publish', 'publish', 'publish', 'puback', 'pubrec', 'pubrel', 'pubcomp', 'subscribe', 'subscribe', 'unsubscribe', 'pingreq',
  'disconnect', 'connect', 'connack', 'suback', 'unsuback', 'pingresp', 'auth'] as const;

/** A valid packet of a random type (mqtt-packet's fields). */
export function randomPacket(random: Random, protocolVersion: number): Packet {
  const v5 = protocolVersion === 5;
  const kind = random.pick(TYPES);
  const reasonCode = v5 && random.chance(0.3) ? random.pick([0, 0x10, 0x80, 0x83, 0x87, 0x91]) : undefined;
  switch (kind) {
    case 'publish': {
      const qos = random.int(3);
      return {
        cmd: 'publish', topic: topic(random), payload: payload(random), qos, retain: random.chance(0.2), dup: random.chance(0.1),
        ...(qos > 0 ? { messageId: packetId(random) } : {}), ...(v5 ? { properties: properties(random, 'publish') } : {}),
      } as Packet;
    }
    case 'puback': case 'pubrec': case 'pubrel': case 'pubcomp':
      return { cmd: kind, messageId: packetId(random), ...(reasonCode !== undefined ? { reasonCode } : {}), ...(v5 ? { properties: properties(random, kind) } : {}) } as Packet;
    case 'subscribe': {
      const count = random.chance(0.05) ? 0 : 1 + random.int(3);
      const subscriptions = Array.from({ length: count }, () => ({
        topic: topic(random), qos: random.int(3), ...(v5 ? { nl: random.chance(0.2), rap: random.chance(0.2), rh: random.int(3) } : {}),
      }));
      return { cmd: 'subscribe', messageId: packetId(random), subscriptions, ...(v5 ? { properties: properties(random, 'subscribe') } : {}) } as Packet;
    }
    case 'unsubscribe': {
      const count = random.chance(0.05) ? 0 : 1 + random.int(3);
      return { cmd: 'unsubscribe', messageId: packetId(random), unsubscriptions: Array.from({ length: count }, () => topic(random)), ...(v5 ? { properties: properties(random, 'unsubscribe') } : {}) } as Packet;
    }
    case 'pingreq': case 'pingresp':
      return { cmd: kind } as Packet;
    case 'disconnect':
      return { cmd: 'disconnect', ...(v5 ? { reasonCode: random.pick([0, 0, 4, 0x80]), properties: properties(random, 'disconnect') } : {}) } as Packet;
    case 'connect':
      return connectPacket(random, protocolVersion);
    case 'connack':
      return { cmd: 'connack', sessionPresent: random.chance(0.5), ...(v5 ? { reasonCode: 0 } : { returnCode: 0 }) } as Packet;
    case 'suback':
      return { cmd: 'suback', messageId: packetId(random), granted: [random.int(3)], ...(v5 ? { reasonCode: 0 } : {}) } as Packet;
    case 'unsuback':
      return { cmd: 'unsuback', messageId: packetId(random), ...(v5 ? { granted: [0] } : {}) } as Packet;
    case 'auth':
      return { cmd: 'auth', reasonCode: random.pick([0, 0x18, 0x19]), properties: { authenticationMethod: 'fuzz' } } as Packet;
  }
}

/** The bytes of a packet; an encoder refusal (a field combination it cannot write) gives a PINGREQ. */
export function encode(packet: Packet, protocolVersion: number): Buffer {
  try {
    return mqttPacket.generate(packet, { protocolVersion });
  } catch {
    return Buffer.from([0xc0, 0x00]);
  }
}

/** The position and size of the remaining length field (1 to 4 bytes after the first byte). */
function lengthField(bytes: Buffer): { at: number; size: number } {
  let size = 1;
  while (size < 4 && 1 + size <= bytes.length && (bytes[size] & 0x80) !== 0) size++;
  return { at: 1, size };
}

function varInt(value: number): Buffer {
  const out: number[] = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return Buffer.from(out);
}

export const MUTATIONS = ['bit flips', 'truncation', 'length lie', 'splice', 'random bytes', 'first byte', 'repeat'] as const;

/** A mutation of `bytes` (`other`: another packet for splices). */
export function mutate(random: Random, bytes: Buffer, other: Buffer): Buffer {
  const kind = random.pick(MUTATIONS);
  switch (kind) {
    case 'bit flips': {
      const out = Buffer.from(bytes);
      const flips = 1 + random.int(4);
      for (let i = 0; i < flips && out.length > 0; i++) out[random.int(out.length)] ^= 1 << random.int(8);
      return out;
    }
    case 'truncation':
      return bytes.subarray(0, random.int(bytes.length));
    case 'length lie': {
      const { at, size } = lengthField(bytes);
      const lie = random.chance(0.1)
        ? Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7f]) // longer than 4 bytes: never valid
        : random.chance(0.1) ? Buffer.from([0x80, 0x80, 0x00]) // not the shortest form
          : varInt(random.chance(0.5) ? random.int(8) : random.int(70_000));
      return Buffer.concat([bytes.subarray(0, at), lie, bytes.subarray(at + size)]);
    }
    case 'splice':
      return Buffer.concat([bytes.subarray(0, random.int(bytes.length + 1)), other.subarray(random.int(other.length + 1))]);
    case 'random bytes':
      return random.bytes(1 + random.int(40));
    case 'first byte': {
      const out = Buffer.from(bytes);
      if (out.length > 0) out[0] = random.int(256);
      return out;
    }
    case 'repeat': {
      const from = random.int(bytes.length + 1);
      const to = from + random.int(bytes.length - from + 1);
      return Buffer.concat([bytes.subarray(0, to), bytes.subarray(from, to), bytes.subarray(to)]);
    }
  }
}

/** Cuts a byte stream into 1 to 4 chunks at random places (frames or writes). */
export function chunks(random: Random, bytes: Buffer): Buffer[] {
  const count = 1 + random.int(4);
  const cuts = Array.from({ length: count - 1 }, () => random.int(bytes.length + 1)).sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > start) out.push(bytes.subarray(start, cut));
    start = cut;
  }
  return out;
}
