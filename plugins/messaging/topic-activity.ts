/**
 * Per-topic traffic for watchers (the explorer's tree, overview and activity stream): messages per
 * topic in one-second windows over the last WINDOWS seconds, and the topics active in the last
 * second. It records only while watched (a watcher calls `watch()` at least once a minute), so a
 * server nobody looks at does no per-message work for it.
 */
import type { CoreMessage } from './message';

/** Seconds of history kept for rates. */
export const WINDOWS = 10;
/** A watch lasts this long after the last `watch()` call. */
const WATCH_MS = 60_000;

export interface TopicTick {
  topic: string;
  count: number;
  /** Engine clock, ms, of its last message. */
  lastMessageAt: number;
}

export class TopicActivity {
  private watchedUntil = 0;
  /** Counts of the current second, then of the previous WINDOWS - 1 seconds (newest first). */
  private windows: Array<Map<string, TopicTick>> = [new Map()];
  private windowStart = 0;
  /** Messages (all topics) per window, same order. */
  private totals: number[] = [0];

  /** Starts (or prolongs) recording. */
  watch(now = Date.now()): void {
    if (this.watchedUntil < now) {
      this.windows = [new Map()];
      this.totals = [0];
      this.windowStart = now;
    }
    this.watchedUntil = now + WATCH_MS;
  }

  get watching(): boolean {
    return this.watchedUntil >= Date.now();
  }

  /** Called once per commit with the messages it made durable. */
  record(messages: readonly CoreMessage[]): void {
    if (this.watchedUntil === 0) return;
    const now = Date.now();
    if (now > this.watchedUntil) {
      this.watchedUntil = 0;
      return;
    }
    this.rotate(now);
    const current = this.windows[0];
    for (const message of messages) {
      const tick = current.get(message.topic);
      if (tick) {
        tick.count++;
        tick.lastMessageAt = message.createdAt;
      } else {
        current.set(message.topic, { topic: message.topic, count: 1, lastMessageAt: message.createdAt });
      }
    }
    this.totals[0] += messages.length;
  }

  /**
   * The topics active in the last complete second (each with its count there), and that second's
   * number (a reader passes it back as `after` so a second is never reported twice).
   */
  lastSecond(after = 0, now = Date.now()): { second: number; ticks: TopicTick[] } {
    this.rotate(now);
    const second = Math.floor(this.windowStart / 1000) - 1;
    if (second <= after || this.windows.length < 2) return { second: Math.max(second, after), ticks: [] };
    return { second, ticks: [...this.windows[1].values()] };
  }

  /** Messages per second of one topic over the recorded windows (complete ones only). */
  rate(topic: string, now = Date.now()): number {
    this.rotate(now);
    let sum = 0;
    for (let i = 1; i < this.windows.length; i++) sum += this.windows[i].get(topic)?.count ?? 0;
    return this.windows.length > 1 ? sum / (this.windows.length - 1) : 0;
  }

  /** The last message time of a topic seen in the recorded windows (ms), or undefined. */
  lastMessageAt(topic: string): number | undefined {
    for (const window of this.windows) {
      const tick = window.get(topic);
      if (tick) return tick.lastMessageAt;
    }
    return undefined;
  }

  /** The busiest topics by rate over the recorded windows, highest first. */
  busiest(limit: number, now = Date.now()): Array<{ topic: string; messagesPerSecond: number }> {
    this.rotate(now);
    const complete = this.windows.length - 1;
    if (complete === 0) return [];
    const sums = new Map<string, number>();
    for (let i = 1; i < this.windows.length; i++) {
      for (const tick of this.windows[i].values()) sums.set(tick.topic, (sums.get(tick.topic) ?? 0) + tick.count);
    }
    return [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit)
      .map(([topic, sum]) => ({ topic, messagesPerSecond: sum / complete }));
  }

  /** Messages per second over all topics (complete windows). */
  totalRate(now = Date.now()): number {
    this.rotate(now);
    const complete = this.totals.length - 1;
    if (complete === 0) return 0;
    let sum = 0;
    for (let i = 1; i < this.totals.length; i++) sum += this.totals[i];
    return sum / complete;
  }

  private rotate(now: number): void {
    if (this.windowStart === 0) this.windowStart = now;
    const elapsed = Math.floor((now - this.windowStart) / 1000);
    if (elapsed <= 0) return;
    for (let i = 0; i < Math.min(elapsed, WINDOWS); i++) {
      this.windows.unshift(new Map());
      this.totals.unshift(0);
    }
    this.windows.length = Math.min(this.windows.length, WINDOWS + 1);
    this.totals.length = Math.min(this.totals.length, WINDOWS + 1);
    this.windowStart += elapsed * 1000;
  }
}
