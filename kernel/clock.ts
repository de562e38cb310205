/**
 * The engine's one clock (milliseconds since the epoch). Everything that expires by time reads it:
 * authToken sessions, cursors, transactions (kernel/idle-expiry.ts). Tests inject one they advance.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });
