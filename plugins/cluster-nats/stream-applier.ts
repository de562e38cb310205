/**
 * Applies the stream to this node's store, in stream order, from the position the store last
 * made durable (StoragePort.operations.applyAt writes it in the same commit as the record's
 * effects, so a record is applied once, also across a crash).
 *
 * It reads with an ordered consumer. When the NATS server that consumer reads from dies, the
 * client library only reports missed heartbeats and never recovers by itself: the applier then
 * drops the consumer and creates a new one from the record after the last it applied.
 */
import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { LogPosition, OperationEntry, OperationsPort } from '../../kernel/storage/operation-entries';
import { decodeRecord } from './record-codec';
import { STREAM, type ClusterLink } from './stream';
import type { TurnWriter } from './turn-writer';
import { withDeadline } from './deadline';

/** Records applied before waiting for their commit (bounds what is applied but not yet durable). */
const RECORDS_PER_COMMIT_WAIT = 512;
/** Heartbeats the consumer may miss before it is re-created (the server it read from is gone). */
const MISSED_HEARTBEATS = 2;

/**
 * Sees each record before it is applied (session-claims.ts): may pass some of its entries over.
 * `reviewed` returns what to run once that record is applied (undefined: nothing), so that what
 * follows from it reads the state with the record in it, also when a trim delays the record.
 */
export interface RecordReviewer {
  review(writer: string | undefined, entries: OperationEntry[]): OperationEntry[];
  reviewed(): (() => void) | undefined;
}

type Log = { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };

export class StreamApplier {
  /** The last record handed to the store (its effects queued, durable soon after). */
  private applied = 0;
  /** Where the store stood at start: that record may have been applied only in part. */
  private readonly start: LogPosition;
  private stopped = false;
  private messages: ConsumerMessages | null = null;
  /** Settles once the last record applied is durable. */
  private durable: Promise<unknown> = Promise.resolve();
  private sinceWait = 0;
  private readonly waiters: Array<{ sequence: number; resolve: () => void }> = [];
  private running: Promise<void> | null = null;
  reviewer: RecordReviewer | null = null;
  /**
   * Asked before each record is applied (node-liveness.ts leaseHeld: fences a node whose lease
   * it no longer holds, so a node resumed from a pause delivers nothing of the records it
   * applies then to connections of sessions it may have lost). The record is applied either way.
   */
  beforeRecord: () => unknown = () => undefined;

  constructor(
    private readonly link: ClusterLink,
    private readonly operations: OperationsPort,
    private readonly writer: TurnWriter,
    private readonly log: Log,
    private readonly retryMs: number,
    /** The deadline of a JetStream call (cluster_request_timeout_ms). */
    private readonly timeoutMs: number,
  ) {
    this.start = operations.appliedPosition() ?? { sequence: 0, applied: 0 };
    this.applied = this.start.sequence > 0 ? this.start.sequence - 1 : 0;
  }

  /** The record a restart resumes from (the one of the store's position: it may be applied in part). */
  get resumeSequence(): number { return Math.max(1, this.start.sequence); }

  /** The last record this node applied. */
  get appliedSequence(): number { return this.applied; }

  run(): void {
    this.running ??= this.loop();
    void this.followConnection();
  }

  /**
   * A reconnect means another server: the consumer the old one held is gone with it (an ordered
   * consumer lives on one server), and the library may never say so. Read again from the record
   * after the last applied.
   */
  private async followConnection(): Promise<void> {
    for await (const status of this.link.nc.status()) {
      if (this.stopped) return;
      if (status.type === 'reconnect') {
        this.log.warn({ next: this.applied + 1 }, 'cluster: reconnected to another server; reading the stream again through it');
        this.messages?.stop();
      }
    }
  }

  /** Resolves once every record up to `sequence` is applied and durable. */
  async reached(sequence: number): Promise<void> {
    if (this.applied < sequence) await new Promise<void>((resolve) => { this.waiters.push({ sequence, resolve }); });
    await this.durable.catch(() => undefined);
  }

  /**
   * reached(), or a rejection once `ms` have passed; a caller that gave up leaves no waiter behind
   * (reads waiting on a node far behind would otherwise pile up until it caught up).
   */
  async reachedWithin(sequence: number, ms: number): Promise<void> {
    if (this.applied < sequence) {
      await new Promise<void>((resolve, reject) => {
        const waiter = { sequence, resolve: () => { clearTimeout(timer); resolve(); } };
        const timer = setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(new Error(`record ${sequence} not applied within ${ms} ms`));
        }, ms);
        this.waiters.push(waiter);
      });
    }
    await this.durable.catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    await withDeadline(this.timeoutMs, 'stopping the stream reader', () => this.running ?? Promise.resolve()).catch(() => undefined);
    await this.durable.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let messages: ConsumerMessages;
      const creating = (async () => {
        const consumer = await this.link.reader.consumers.get(STREAM, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: this.applied + 1,
        });
        return consumer.consume({ max_messages: 1024, expires: 4000, idle_heartbeat: 1000 });
      })();
      try {
        messages = await withDeadline(this.timeoutMs, 'creating the stream reader', () => creating);
      } catch (error) {
        // One created after the deadline is stopped: the next attempt reads from where it stands.
        creating.then((late) => late.stop(), () => undefined);
        if (this.stopped) return;
        this.log.warn({ err: error, next: this.applied + 1 }, 'cluster: cannot read the stream now; trying again');
        await new Promise((resolve) => setTimeout(resolve, this.retryMs));
        continue;
      }
      if (this.stopped) {
        messages.stop();
        return;
      }
      this.messages = messages;
      void this.watch(messages);
      try {
        for await (const m of messages) {
          this.applyRecord(m);
          if (++this.sinceWait >= RECORDS_PER_COMMIT_WAIT) {
            this.sinceWait = 0;
            await this.durable.catch(() => undefined);
          }
        }
      } catch (error) {
        if (!this.stopped) this.log.warn({ err: error, next: this.applied + 1 }, 'cluster: reading the stream failed; reading again');
      }
      this.messages = null;
    }
  }

  /** Re-creates the consumer when its server stops answering (the library does not). */
  private async watch(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const status of messages.status()) {
        if (status.type === 'heartbeats_missed' && status.count >= MISSED_HEARTBEATS) {
          this.log.warn({ next: this.applied + 1 }, 'cluster: the stream stopped answering; reading it again through another server');
          messages.stop();
          return;
        }
      }
    } catch {
      // the iterator ended with its consumer
    }
  }

  private applyRecord(m: JsMsg): void {
    const sequence = m.seq;
    if (sequence <= this.applied) return; // delivered again by a re-created consumer
    this.beforeRecord();
    const id = m.headers?.get('Nats-Msg-Id') || undefined;
    const own = this.writer.ownEntries(id);
    let entries = own;
    if (entries === undefined) {
      try {
        entries = decodeRecord(m.data);
      } catch (error) {
        // Every node meets the same bytes and passes them over alike.
        this.log.error({ err: error, sequence }, 'cluster: a stream record cannot be decoded; passed over');
        entries = [];
      }
    }
    const from = sequence === this.start.sequence ? this.start.applied : 0;
    // The node that wrote it: the first part of its Nats-Msg-Id (node.boot.turn; names have no dots).
    const reviewer = this.reviewer;
    let applied: (() => void) | undefined;
    if (reviewer !== null) {
      entries = reviewer.review(id?.split('.', 1)[0], entries);
      applied = reviewer.reviewed();
    }
    const answers = this.operations.applyAt(sequence, entries, from, applied);
    this.applied = sequence;
    if (answers.length > 0) this.durable = answers[answers.length - 1];
    if (own !== undefined) this.writer.applied(id!, answers);
    if (this.waiters.length > 0) {
      for (let i = this.waiters.length - 1; i >= 0; i--) {
        if (this.waiters[i].sequence <= sequence) this.waiters.splice(i, 1)[0].resolve();
      }
    }
  }
}
