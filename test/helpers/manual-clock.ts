/** A clock that moves only when a test advances it: expiry tests without sleeps. */
import type { Clock } from '../../kernel/clock';

export class ManualClock implements Clock {
  private time: number;

  constructor(start = Date.now()) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  advanceSeconds(seconds: number): void {
    this.time += seconds * 1000;
  }
}
