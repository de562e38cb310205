/**
 * Repeated failed logins back off, per account name and per remote address: after `threshold`
 * failures in a row on a key, that key is refused for 1 s, then 2 s, 4 s … up to `maxSeconds`
 * after each further failure. A refused attempt costs no password check and does not count.
 * A success clears the account's count (not the address's: one valid account must not buy an
 * address more guesses at others). A key is forgotten 15 minutes after its last failure, and at
 * most MAX_KEYS are kept (the oldest go first), so a flood of names or addresses cannot grow it.
 */
import { systemClock, type Clock } from '../clock';

export interface ThrottleOptions {
  /** Failures in a row before backing off; 0 turns throttling off. */
  threshold: number;
  /** The longest backoff. */
  maxSeconds: number;
  /** The engine's clock (tests inject one they advance). */
  clock?: Clock;
}

interface Failures {
  count: number;
  lastAt: number;
}

const FIRST_BACKOFF_MS = 1000;
const FORGET_AFTER_MS = 15 * 60 * 1000;
const MAX_KEYS = 50_000;

export class LoginThrottle {
  private readonly failures = new Map<string, Failures>();
  private readonly clock: Clock;

  constructor(private readonly options: ThrottleOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Milliseconds before any of `keys` may try again; 0 when none is backing off. */
  waitMs(keys: readonly string[]): number {
    if (this.options.threshold === 0) return 0;
    const now = this.clock.now();
    let wait = 0;
    for (const key of keys) {
      const entry = this.current(key, now);
      if (!entry || entry.count < this.options.threshold) continue;
      wait = Math.max(wait, entry.lastAt + this.backoffMs(entry.count) - now);
    }
    return wait;
  }

  failed(keys: readonly string[]): void {
    if (this.options.threshold === 0) return;
    const now = this.clock.now();
    for (const key of keys) {
      const count = (this.current(key, now)?.count ?? 0) + 1;
      this.failures.delete(key); // re-inserted last: the map stays ordered by last failure
      this.failures.set(key, { count, lastAt: now });
    }
    this.prune(now);
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  /** How many keys are tracked (for tests). */
  get size(): number {
    return this.failures.size;
  }

  private current(key: string, now: number): Failures | undefined {
    const entry = this.failures.get(key);
    if (entry && now - entry.lastAt >= FORGET_AFTER_MS) {
      this.failures.delete(key);
      return undefined;
    }
    return entry;
  }

  private backoffMs(count: number): number {
    const doublings = Math.min(count - this.options.threshold, 30);
    return Math.min(FIRST_BACKOFF_MS * 2 ** doublings, this.options.maxSeconds * 1000);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.failures) {
      if (this.failures.size <= MAX_KEYS && now - entry.lastAt < FORGET_AFTER_MS) break;
      this.failures.delete(key);
    }
  }
}
