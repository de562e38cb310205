/**
 * The engine's one clock (milliseconds since the epoch). Everything that expires by time reads it:
 * authToken sessions, cursors, transactions (kernel/idle-expiry.ts). Tests inject one they advance.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/**
 * An integral `value` as V8 keeps it in an object's field without a 16-byte number box (a Smi)
 * while it fits 31 bits; larger values are returned as they are (boxed, still exact). Arithmetic
 * on Date.now() values gives boxed numbers even when the result is small.
 */
export function unboxedInteger(value: number): number {
  return value >= -0x40000000 && value < 0x40000000 ? value | 0 : value;
}
