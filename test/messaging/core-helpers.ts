/**
 * Helpers for driving the message core through its own API: a fake SessionOutlet that records
 * deliveries and whose window and writability the test controls, and core messages to publish.
 */
import type { Delivery, SessionOutlet, SubscriptionOptions } from '../../plugins/messaging/session';
import type { CoreMessage, QoS } from '../../plugins/messaging/message';

/** A connection stand-in: records every delivery, in order; waits are resolved by deliveries, never by timers. */
export class FakeOutlet implements SessionOutlet {
  readonly deliveries: Delivery[] = [];
  readonly pubrels: number[] = [];
  /** What `writable()` answers. */
  open = true;
  /** When set, the outlet stops being writable once it holds this many deliveries (a full socket). */
  closeAfter?: number;
  private waiters: Array<() => void> = [];

  constructor(readonly receiveMaximum: number) {}

  writable(): boolean {
    return this.open;
  }

  deliver(delivery: Delivery): boolean {
    // Copied: the core fills the same object in for the next delivery (SessionOutlet.deliver).
    this.deliveries.push({ ...delivery });
    if (this.closeAfter !== undefined && this.deliveries.length >= this.closeAfter) this.open = false;
    for (const wake of this.waiters.splice(0)) wake();
    return true;
  }

  resendPubrel(packetId: number): void {
    this.pubrels.push(packetId);
  }

  /** Resolves once `count` deliveries were recorded. */
  async waitForCount(count: number): Promise<void> {
    while (this.deliveries.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  payloads(): string[] {
    return this.deliveries.map((d) => d.message.payload.toString());
  }
}

export function subscription(qos: QoS, subscriptionIdentifier?: number): SubscriptionOptions {
  return { qos, noLocal: false, retainAsPublished: false, retainHandling: 0, subscriptionIdentifier };
}

export function coreMessage(topic: string, payload: string, qos: QoS = 0): CoreMessage {
  return { topic, payload: Buffer.from(payload), qos, retain: false, publisher: null, createdAt: Date.now(), sequence: 0 };
}
