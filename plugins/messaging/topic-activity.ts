/**
 * Per-topic traffic for watchers (the explorer's tree, overview and activity stream): messages per
 * topic in one-second windows (by the engine clock's second) over the last WINDOWS seconds, and
 * the topics touched since a reader last asked. It records only while watched (a watcher calls `watch()` at
 * least once a minute), so a server nobody looks at does no per-message work for it.
 */
import type { Clock } from '../../kernel/clock';
import type { CoreMessage } from './message';

/** Seconds of history kept for rates. */
export const WINDOWS = 10;
/** A watch lasts this long after the last `watch()` call. */
const WATCH_MS = 60_000;
/** Touched topics remembered between reads (beyond: every count is taken again). */
const MAX_TOUCHED = 200_000;

export interface TopicTick {
  topic: string;
  count: number;
  /** Engine clock, ms, of its last message. */
  lastMessageAt: number;
}

/** Messages of one topic recorded since last taken: how many, and their sequence span. */
export interface Appended {
  count: number;
  firstSequence: number;
  lastSequence: number;
  lastMessageAt: number;
}

interface Window {
  second: number;
  ticks: Map<string, TopicTick>;
  total: number;
}

export class TopicActivity {
  private watchedUntil = 0;
  private watchedSince = 0;
  /** Newest first; only seconds in which something was recorded. */
  private windows: Window[] = [];
  /** Per topic, what was appended since a reader last took it (TopicCounts). */
  private touched = new Map<string, Appended>();
  /** Grows whenever recording (re)starts or touched topics were forgotten: counts taken before are unknown. */
  epoch = 0;

  /** Seconds are the engine clock's, the clock messages' times come from. */
  constructor(private readonly clock: Clock) {}

  /** Starts (or prolongs) recording. */
  watch(now = this.clock.now()): void {
    if (this.watchedUntil < now) {
      this.windows = [];
      this.touched.clear();
      this.epoch++;
      this.watchedSince = now;
    }
    this.watchedUntil = now + WATCH_MS;
  }

  get watching(): boolean {
    return this.watchedUntil >= this.clock.now();
  }

  /** Called once per commit with the messages it made durable. */
  record(messages: readonly CoreMessage[]): void {
    if (this.watchedUntil === 0) return;
    const now = this.clock.now();
    if (now > this.watchedUntil) {
      this.watchedUntil = 0;
      return;
    }
    const second = Math.floor(now / 1000);
    let window = this.windows[0];
    if (!window || window.second !== second) {
      window = { second, ticks: new Map(), total: 0 };
      this.windows.unshift(window);
      while (this.windows.length > 0 && this.windows[this.windows.length - 1].second <= second - WINDOWS - 2) this.windows.pop();
    }
    if (this.touched.size > MAX_TOUCHED) {
      this.touched.clear();
      this.epoch++;
    }
    for (const message of messages) {
      const tick = window.ticks.get(message.topic);
      if (tick) {
        tick.count++;
        tick.lastMessageAt = message.createdAt;
      } else {
        window.ticks.set(message.topic, { topic: message.topic, count: 1, lastMessageAt: message.createdAt });
      }
      const appended = this.touched.get(message.topic);
      if (appended) {
        appended.count++;
        appended.lastSequence = message.sequence;
        appended.lastMessageAt = message.createdAt;
      } else {
        this.touched.set(message.topic, { count: 1, firstSequence: message.sequence, lastSequence: message.sequence, lastMessageAt: message.createdAt });
      }
    }
    window.total += messages.length;
  }

  /** What the topic got since this was last asked for it (then forgets it); undefined: nothing. */
  takeAppended(topic: string): Appended | undefined {
    const appended = this.touched.get(topic);
    if (appended) this.touched.delete(topic);
    return appended;
  }

  /**
   * The topics active in the complete seconds after `after` (a second number; each topic with its
   * count there), and the last complete second, which the reader passes back as `after`.
   */
  since(after: number, now = this.clock.now()): { second: number; ticks: TopicTick[] } {
    const current = Math.floor(now / 1000);
    const merged = new Map<string, TopicTick>();
    for (const window of this.windows) {
      if (window.second >= current || window.second <= after) continue;
      for (const tick of window.ticks.values()) {
        const seen = merged.get(tick.topic);
        if (seen) {
          seen.count += tick.count;
          if (tick.lastMessageAt > seen.lastMessageAt) seen.lastMessageAt = tick.lastMessageAt;
        } else {
          merged.set(tick.topic, { ...tick });
        }
      }
    }
    return { second: Math.max(after, current - 1), ticks: [...merged.values()] };
  }

  /** Messages per second of one topic over the last complete seconds. */
  rate(topic: string, now = this.clock.now()): number {
    const [from, to, seconds] = this.span(now);
    let sum = 0;
    for (const window of this.windows) if (window.second >= from && window.second <= to) sum += window.ticks.get(topic)?.count ?? 0;
    return seconds > 0 ? sum / seconds : 0;
  }

  /** The busiest topics by rate over the last complete seconds, highest first. */
  busiest(limit: number, now = this.clock.now()): Array<{ topic: string; messagesPerSecond: number }> {
    const [from, to, seconds] = this.span(now);
    if (seconds === 0) return [];
    const sums = new Map<string, number>();
    for (const window of this.windows) {
      if (window.second < from || window.second > to) continue;
      for (const tick of window.ticks.values()) sums.set(tick.topic, (sums.get(tick.topic) ?? 0) + tick.count);
    }
    return [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit)
      .map(([topic, sum]) => ({ topic, messagesPerSecond: sum / seconds }));
  }

  /** Complete seconds counted for rates: [first, last, how many], at most WINDOWS, none before recording began. */
  private span(now: number): [number, number, number] {
    const last = Math.floor(now / 1000) - 1;
    const first = Math.max(last - WINDOWS + 1, Math.floor(this.watchedSince / 1000) + 1);
    return [first, last, Math.max(0, last - first + 1)];
  }
}
