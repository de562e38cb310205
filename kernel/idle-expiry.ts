/**
 * Idle expiry of everything that lives between requests (authToken sessions, cursors,
 * transactions): one clock and one sweeper for all of them.
 *
 * Each kind keeps its entries in an IdleRegistry. An entry is live until `idleTimeoutMs(entry)`
 * after its last use, and never past `endsAt(entry)` when the kind sets an absolute end. Every
 * lookup checks the deadline, so expiry is exact whatever the sweep interval; the sweep releases
 * what nobody asks for again (a cursor's read transaction, a session's cursors).
 */
import type { Clock } from './clock';

export interface IdleEntry {
  /** Clock time of the last use. */
  lastUsedAt: number;
}

export interface IdleKind<V extends IdleEntry> {
  /** How long the entry may stay unused; read at every check, so a changed setting applies at once. */
  idleTimeoutMs(entry: V): number;
  /** Clock time after which the entry is over however often it is used (undefined: no such end). */
  endsAt?(entry: V): number | undefined;
  /** Releases what an expired entry held (not called for entries removed with `delete`). */
  expired(entry: V): void;
}

export class IdleRegistry<V extends IdleEntry> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly clock: Clock, private readonly kind: IdleKind<V>) {}

  get size(): number {
    return this.entries.size;
  }

  now(): number {
    return this.clock.now();
  }

  /** Adds an entry, used now. */
  add(key: string, entry: V): V {
    entry.lastUsedAt = this.clock.now();
    this.entries.set(key, entry);
    return entry;
  }

  /** The live entry of a key, without marking it used; an expired one is released and undefined. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.isExpired(entry, this.clock.now())) {
      this.expire(key, entry);
      return undefined;
    }
    return entry;
  }

  /** Marks a live entry as used now. */
  touch(entry: V): void {
    entry.lastUsedAt = this.clock.now();
  }

  /** Removes an entry without calling `expired` (the caller ends it its own way). */
  delete(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.entries.delete(key);
    return entry;
  }

  /** Every entry, live or not yet swept; for removals by owner or table. */
  all(): Array<[string, V]> {
    return [...this.entries];
  }

  /** Releases every entry past its deadline. */
  sweep(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) if (this.isExpired(entry, now)) this.expire(key, entry);
  }

  private isExpired(entry: V, now: number): boolean {
    if (now - entry.lastUsedAt > this.kind.idleTimeoutMs(entry)) return true;
    const endsAt = this.kind.endsAt?.(entry);
    return endsAt !== undefined && now > endsAt;
  }

  private expire(key: string, entry: V): void {
    // A deadline check can end other entries (a session's end closes its cursors): release once.
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    this.kind.expired(entry);
  }
}

/** How often the sweeper runs: expiry itself is checked at every use, this only frees memory sooner. */
export const SWEEP_INTERVAL_MS = 5_000;

/** The engine's registries of idle-expiring things and the one timer that sweeps them. */
export class IdleExpiry {
  private readonly registries: Array<IdleRegistry<any>> = [];
  private timer?: NodeJS.Timeout;

  constructor(readonly clock: Clock, private readonly sweepIntervalMs = SWEEP_INTERVAL_MS) {}

  /** A new registry on the engine's clock, swept with the others. */
  registry<V extends IdleEntry>(kind: IdleKind<V>): IdleRegistry<V> {
    const registry = new IdleRegistry<V>(this.clock, kind);
    this.registries.push(registry);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), this.sweepIntervalMs);
      this.timer.unref();
    }
    return registry;
  }

  /** Sweeps every registry now (the timer does it every SWEEP_INTERVAL_MS; tests after advancing the clock). */
  sweep(): void {
    for (const registry of this.registries) registry.sweep();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
