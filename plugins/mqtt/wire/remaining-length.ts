/**
 * The fixed header's Remaining Length (MQTT 3.1.1 §2.2.3, MQTT 5 §1.5.5), as the broker's own
 * packet readers (simple-connect.ts, simple-publish.ts) read it: in its shortest form only, so
 * whatever else mqtt-packet reads, with its checks and errors.
 */

/** The bytes end inside the remaining length. */
export const LENGTH_CUT = -1;
/** Not in its shortest form, or more than 4 bytes: left to mqtt-packet. */
export const LENGTH_UNREAD = -2;

/** The remaining length of the packet whose first byte is at `offset`; LENGTH_CUT or LENGTH_UNREAD otherwise. */
export function remainingLength(bytes: Buffer, offset: number): number {
  let length = 0;
  let multiplier = 1;
  for (let i = 0; i < 4; i++) {
    const at = offset + 1 + i;
    if (at >= bytes.length) return LENGTH_CUT;
    const byte = bytes[at];
    length += (byte & 0x7f) * multiplier;
    if ((byte & 0x80) === 0) return byte === 0 && i > 0 ? LENGTH_UNREAD : length;
    multiplier *= 0x80;
  }
  return LENGTH_UNREAD;
}

/** Bytes of a packet whose remaining length is `length`: the fixed header (shortest form) and the rest. */
export function packetSize(length: number): number {
  return 1 + (length < 0x80 ? 1 : length < 0x4000 ? 2 : length < 0x200000 ? 3 : 4) + length;
}
