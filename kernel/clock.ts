/**
 * The engine's one clock (milliseconds since the epoch). Everything that expires by time reads it:
 * authToken sessions, cursors, transactions (kernel/idle-expiry.ts). Tests inject one they advance.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** Epoch ms when the kernel was loaded: the base of small times. */
const TIME_BASE = Date.now();

/**
 * Epoch ms `time` as ms since the kernel was loaded: a small integer V8 keeps in an object's
 * field without a 16-byte number box (a Smi) while it fits 31 bits, about 12 days of uptime;
 * later values stay boxed, still exact. (Arithmetic on Date.now() values gives boxed numbers
 * even when the result is small.) Objects kept by the thousand store their times this way.
 */
export function smallTime(time: number): number {
  const offset = time - TIME_BASE;
  return offset >= -0x40000000 && offset < 0x40000000 ? offset | 0 : offset;
}

/** The epoch ms of a `smallTime`. */
export function fromSmallTime(offset: number): number {
  return offset + TIME_BASE;
}
