/**
 * A subscriber's PUBACK read without a parser: the 4 bytes of a success PUBACK (0x40 0x02 and
 * the packet identifier, at either level [MQTT-3.4.2-1]) at an offset of a chunk. A QoS 1
 * subscriber sends one per delivery; mqtt-packet reads each through its buffer list with a debug
 * call per state, about 1 KB of garbage per PUBACK in a sampled heap profile. Anything else (other
 * flags, a reason code or properties, a packet cut by the chunk's end) returns undefined and goes to
 * mqtt-packet as before. What this returns equals what mqtt-packet returns for the same bytes
 * (test/mqtt/23-simple-puback.test.ts).
 */
import type { IPubackPacket } from 'mqtt-packet';

/** A PUBACK as mqtt-packet's parser makes it (the same fields; MQTT 5 adds reason code 0). */
class SimplePuback {
  readonly cmd = 'puback' as const;
  readonly retain = false;
  readonly qos = 0 as const;
  readonly dup = false;
  readonly length = 2;
  readonly topic = null;
  readonly payload = null;
  constructor(readonly messageId: number) {}
  // MQTT 5 only: the success a 2-byte PUBACK stands for.
  declare reasonCode?: number;
}

/** The success PUBACK at `offset` of `chunk`, or undefined when the bytes there are anything else. */
export function readSimplePuback(chunk: Buffer, offset: number, protocolVersion: number): IPubackPacket | undefined {
  if (chunk[offset] !== 0x40 || chunk[offset + 1] !== 2 || offset + 4 > chunk.length) return undefined;
  const packet = new SimplePuback((chunk[offset + 2] << 8) | chunk[offset + 3]);
  if (protocolVersion === 5) packet.reasonCode = 0;
  return packet as unknown as IPubackPacket;
}
