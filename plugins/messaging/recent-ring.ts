/**
 * The messages routed last, kept as routed (a ring by sequence) with the subscription tree's match
 * of each, so sessions catching up share them: decoded and encoded once, no tree lookup. Older
 * messages, and larger ones, are read from the log. Bounded by `mq_ring_messages` (rounded up to
 * a power of two) and `mq_ring_bytes` of payload (docs/settings.md).
 */
import type { CoreMessage } from './message';

/** Larger messages are not kept (the ring would pin them and their encodings): read from the log. */
const PAYLOAD_LIMIT = 4096;

export class RecentRing<M> {
  /** Slots: the smallest power of two at or above the setting (a slot is `sequence & mask`). */
  readonly capacity: number;
  private readonly mask: number;
  private readonly messages: Array<CoreMessage | undefined>;
  private readonly matches: Array<M | undefined>;
  /** Payload bytes held (at most maxBytes). */
  private bytes = 0;

  constructor(messages: number, private readonly maxBytes: number) {
    let capacity = 1;
    while (capacity < messages) capacity *= 2;
    this.capacity = capacity;
    this.mask = capacity - 1;
    this.messages = new Array<CoreMessage | undefined>(capacity);
    this.matches = new Array<M | undefined>(capacity);
  }

  /** Keeps a routed message in its sequence's slot (the message there before goes), unless over the bounds. */
  put(message: CoreMessage, matches: M): void {
    const slot = message.sequence & this.mask;
    const replaced = this.messages[slot];
    if (replaced !== undefined) this.bytes -= replaced.payload.length;
    const size = message.payload.length;
    if (size <= PAYLOAD_LIMIT && this.bytes + size <= this.maxBytes) {
      this.messages[slot] = message;
      this.matches[slot] = matches;
      this.bytes += size;
    } else {
      this.messages[slot] = undefined;
      this.matches[slot] = undefined;
    }
  }

  /** The message of this sequence, while kept. */
  at(sequence: number): CoreMessage | undefined {
    const message = this.messages[sequence & this.mask];
    return message !== undefined && message.sequence === sequence ? message : undefined;
  }

  /** The match the router made for the message of this sequence (call after `at` found it). */
  matchesAt(sequence: number): M | undefined {
    return this.matches[sequence & this.mask];
  }

}
