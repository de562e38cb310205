/**
 * The commonest first packet, read without a parser: an MQTT 3.1.1 CONNECT with no will, user
 * name or password, alone and whole in the connection's first chunk. Thousands of clients
 * connecting at once each cost a borrowed mqtt-packet parser, its buffer list and its slices
 * (~2.5 KB of garbage per CONNECT) otherwise. Anything else (another level, flags, a packet
 * cut across chunks or followed by more bytes, whatever is malformed) returns undefined and
 * goes to mqtt-packet as before, so its checks and errors stay the only ones.
 */
import type { IConnectPacket } from 'mqtt-packet';
import { packetSize, remainingLength } from './remaining-length';

/** Connect flags this reads: Clean Session only (no will, user name, password; reserved bit 0). */
const CLEAN_SESSION = 0x02;

/** The CONNECT `chunk` holds exactly, when it is of the simple form; otherwise undefined. */
export function readSimpleConnect(chunk: Buffer): IConnectPacket | undefined {
  const total = chunk.length;
  // Fixed header: CONNECT with its reserved flags 0 [MQTT-2.2.2-1].
  if (total < 2 || chunk[0] !== 0x10) return undefined;
  const length = remainingLength(chunk, 0);
  if (length < 0) return undefined;
  const at = packetSize(length) - length;
  if (at + length !== total) return undefined;
  // Protocol name "MQTT", level 4, flags, keep alive, client identifier length: 12 bytes.
  if (length < 12) return undefined;
  if (chunk[at] !== 0 || chunk[at + 1] !== 4 || chunk[at + 2] !== 0x4d || chunk[at + 3] !== 0x51 || chunk[at + 4] !== 0x54 || chunk[at + 5] !== 0x54) return undefined;
  if (chunk[at + 6] !== 4) return undefined;
  const flags = chunk[at + 7];
  if ((flags & ~CLEAN_SESSION) !== 0) return undefined;
  const keepalive = (chunk[at + 8] << 8) | chunk[at + 9];
  const idLength = (chunk[at + 10] << 8) | chunk[at + 11];
  const idStart = at + 12;
  if (idStart + idLength !== total) return undefined;
  return {
    cmd: 'connect', length,
    protocolId: 'MQTT', protocolVersion: 4, clean: (flags & CLEAN_SESSION) !== 0, keepalive,
    // As mqtt-packet reads it (invalid UTF-8 becomes U+FFFD).
    clientId: chunk.toString('utf8', idStart, total),
  };
}
