/**
 * Flow control of the publishers: a publisher (an MQTT connection) is paused while the log's
 * backlog is over its high-water mark, while this turn's batch is full, or while a subscriber it
 * outpaces lags (served from the log meanwhile, instead of being starved of the CPU); resumed as
 * the backlog drains and the laggards catch up, or by the sweep.
 */
import type { PublishOrigin } from '../../kernel/messaging/session-types';

/** Messages waiting for their commit above which publishers are paused, and where they resume. */
const BACKLOG_HIGH = 50_000;
const BACKLOG_LOW = 12_500;

export class FlowControl {
  private readonly paused = new Set<PublishOrigin>();
  /** Publishers held until the next turn because this one is full (PublishBatch). */
  private readonly heldForTurn = new Set<PublishOrigin>();

  /** `backlog`: messages taken whose commit is not durable yet. */
  constructor(private readonly backlog: () => number) {}

  /** True while the log's backlog is over its high-water mark: the caller pauses and registers. */
  get overloaded(): boolean {
    return this.backlog() > BACKLOG_HIGH;
  }

  /** Pauses a publisher until the backlog drains or lagging targets catch up. */
  pausePublisher(origin: PublishOrigin): void {
    if (this.paused.has(origin) || !origin.mayPause()) return;
    this.paused.add(origin);
    origin.pausePublishing();
  }

  holdForTurn(origin: PublishOrigin): void {
    if (this.paused.has(origin) || this.heldForTurn.has(origin) || !origin.mayPause()) return;
    this.heldForTurn.add(origin);
    origin.pausePublishing();
  }

  releaseTurn(): void {
    if (this.heldForTurn.size === 0) return;
    // Those paused meanwhile (backlog, lagging targets) stay paused.
    for (const origin of this.heldForTurn) if (!this.paused.has(origin)) origin.resumePublishing();
    this.heldForTurn.clear();
  }

  resumePublishers(): void {
    if (this.paused.size === 0 || this.backlog() >= BACKLOG_LOW) return;
    const paused = [...this.paused];
    this.paused.clear();
    for (const origin of paused) origin.resumePublishing();
  }

  /**
   * A turn's messages are durable and routed: when they met a subscriber that lags, their
   * publishers wait for it (resumed as it catches up, or by the sweep); else paused ones go on.
   */
  published(slowTargetSeen: boolean, origins: ReadonlyArray<PublishOrigin | null>): void {
    if (slowTargetSeen) {
      for (const origin of origins) if (origin) this.pausePublisher(origin);
    } else {
      this.resumePublishers();
    }
  }
}
