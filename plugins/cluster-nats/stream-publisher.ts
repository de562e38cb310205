/**
 * Publishes the turn writer's records to the stream and waits for the stream's acknowledgement:
 * what the JetStream client's `publish` does (a request whose answer is the PubAck), on one reply
 * subscription of this node's. The client's own request costs, per record, an Error with its stack
 * (made even when the request succeeds), a second timer and a decoder: a few percent of a busy
 * node's main thread, measured with perf.
 *
 * A record is answered once: stored (a PubAck, also for a duplicate id), refused (the stream's
 * error, or "no responders": no stream leader took it, so it was not stored), or not answered in
 * time (the outcome is unknown). A reply lost with a connection ends as a timeout.
 */
import { createInbox, headers, type Msg } from '@nats-io/nats-core';
import type { NatsConnection } from './stream';

/** The header JetStream dedupes a resent record by (within the stream's duplicate window). */
const MSG_ID_HEADER = 'Nats-Msg-Id';
const decoder = new TextDecoder();

type Settle = (error: Error | null) => void;

export class StreamPublisher {
  private readonly inbox = createInbox();
  private readonly waiting = new Map<string, Settle>();
  private nextToken = 0;
  private readonly subscription;

  constructor(private readonly nc: NatsConnection, private readonly subject: string) {
    this.subscription = nc.subscribe(`${this.inbox}.*`, { callback: (error: Error | null, msg: Msg) => this.answered(error, msg) });
  }

  /** Publishes `bytes` with the id `msgId`; resolves once the stream has stored it (or had it already). */
  publish(bytes: Uint8Array, msgId: string, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const token = (++this.nextToken).toString(36);
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new Error(`timeout: the stream did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(token, (error) => {
        clearTimeout(timer);
        if (error === null) resolve();
        else reject(error);
      });
      const h = headers();
      h.set(MSG_ID_HEADER, msgId);
      try {
        this.nc.publish(this.subject, bytes, { reply: `${this.inbox}.${token}`, headers: h });
      } catch (error) {
        this.settle(token, error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Fails what still waits (the connection is closing). */
  close(): void {
    this.subscription.unsubscribe();
    for (const token of [...this.waiting.keys()]) this.settle(token, new Error('the connection to NATS is closing'));
  }

  private settle(token: string, error: Error | null): void {
    const settle = this.waiting.get(token);
    if (settle === undefined) return;
    this.waiting.delete(token);
    settle(error);
  }

  private answered(error: Error | null, msg: Msg): void {
    if (error !== null) {
      // The reply subscription failed (a permission, the connection closed): nothing will answer.
      for (const token of [...this.waiting.keys()]) this.settle(token, error);
      return;
    }
    const token = msg.subject.slice(this.inbox.length + 1);
    if (!this.waiting.has(token)) return; // answered after its timeout
    const status = msg.headers;
    if (status !== undefined && status.hasError) {
      this.settle(token, new Error(status.code === 503 ? 'no responders: no stream leader took the record' : `the stream answered ${status.status}`));
      return;
    }
    let ack: { stream?: unknown; error?: { code?: unknown; err_code?: unknown; description?: unknown } };
    try {
      ack = JSON.parse(decoder.decode(msg.data)) as typeof ack;
    } catch {
      this.settle(token, new Error('the stream answered with something other than JSON'));
      return;
    }
    if (ack.error !== undefined) {
      this.settle(token, new Error(`the stream refused the record: ${String(ack.error.description)} (${String(ack.error.err_code ?? ack.error.code)})`));
      return;
    }
    this.settle(token, typeof ack.stream === 'string' && ack.stream !== '' ? null : new Error('the stream answered without an acknowledgement'));
  }
}
