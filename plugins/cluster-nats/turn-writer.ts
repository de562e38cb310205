/**
 * The store's forwarder (StoragePort.operations.forward): the entries of one event-loop turn
 * become ONE stream record, published with `Nats-Msg-Id` = node.boot.turn so that JetStream
 * stores a resent record once. A write is answered when the stream has acknowledged its record
 * AND this node's applier has applied it (stream-applier.ts), with what the apply answered: so a
 * client reads its own write on the node it wrote to, and a unique key is decided in stream
 * order, the same on every node.
 */
import { randomBytes } from 'node:crypto';
import { EngineError } from '../../kernel/errors';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import type { ClusterLink } from './stream';
import { encodeRecord } from './record-codec';

interface Waiting {
  resolve(answer: Promise<unknown>): void;
  reject(error: unknown): void;
}

/** A record this node published, until its writers are answered. */
interface OwnRecord {
  entries: OperationEntry[];
  waiting: Waiting[];
  acked: boolean;
  /** The applier's answers, once it applied the record. */
  answers: Array<Promise<unknown>> | null;
  /** Fails the writers when the applier does not apply an acknowledged record in time. */
  timer: NodeJS.Timeout | null;
}

/** The first wait before a record is sent again, and the longest (doubling in between). */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 1000;
/** The header block around a record's Nats-Msg-Id (`NATS/1.0␍␊Nats-Msg-Id: <id>␍␊␍␊`), without the id. */
const HEADER_BYTES = 'NATS/1.0\r\nNats-Msg-Id: \r\n\r\n'.length;
/** The most digits a turn number has (Number.MAX_SAFE_INTEGER). */
const MAX_TURN_DIGITS = 16;

export class TurnWriter {
  private turn: { entries: OperationEntry[]; waiting: Waiting[] } | null = null;
  private readonly own = new Map<string, OwnRecord>();
  private turnNumber = 0;
  /** Tells this process's records from those of an earlier run of the same node. */
  private readonly boot = randomBytes(4).toString('hex');
  private closing = false;
  private settledAll: (() => void) | null = null;
  /**
   * Does this node hold its lease (node-liveness.ts)? Asked once per turn: a node that no longer
   * does may be taken for dead, its sessions adopted and their wills sent by a survivor, so what
   * it did since (a will of its own, a client's publish read after a pause) is not written.
   */
  leaseHeld: () => boolean = () => true;

  constructor(
    private readonly link: ClusterLink,
    private readonly node: string,
    private readonly timeoutMs: number,
  ) {}

  /** The forwarder: the entry joins this turn's record. */
  readonly forward = (entry: OperationEntry): Promise<unknown> => new Promise<unknown>((resolve, reject) => {
    if (this.closing) {
      reject(unavailable('this node is stopping', 'was not stored'));
      return;
    }
    let turn = this.turn;
    if (turn === null) {
      turn = this.turn = { entries: [], waiting: [] };
      setImmediate(() => this.flush());
    }
    turn.entries.push(entry);
    turn.waiting.push({ resolve, reject });
  });

  /** The entries of a record this node published and still waits for (applied as these objects), if any. */
  ownEntries(id: string | undefined): OperationEntry[] | undefined {
    return id === undefined ? undefined : this.own.get(id)?.entries;
  }

  /** The applier applied one of this node's records: its writers are answered once it is acknowledged too. */
  applied(id: string, answers: Array<Promise<unknown>>): void {
    const record = this.own.get(id);
    if (record === undefined) return;
    record.answers = answers;
    if (record.acked) this.answer(id, record);
  }

  /** Stops taking writes; resolves once every record published has been answered (or timed out). */
  close(): Promise<void> {
    this.closing = true;
    this.flush();
    if (this.own.size === 0) return Promise.resolve();
    return new Promise((resolve) => { this.settledAll = resolve; });
  }

  private flush(): void {
    const turn = this.turn;
    this.turn = null;
    if (turn === null) return;
    if (!this.leaseHeld()) {
      const error = unavailable('this node has not renewed its lease for half a lease, so another node may have taken over its sessions', 'was not stored');
      for (const w of turn.waiting) w.reject(error);
      return;
    }
    // NATS counts the record's headers in max_payload too (its Nats-Msg-Id: this node's longest id).
    const limit = (this.link.nc.info?.max_payload ?? 1024 * 1024) - (HEADER_BYTES + Buffer.byteLength(this.node) + this.boot.length + 2 + MAX_TURN_DIGITS);
    let bytes: Uint8Array;
    try {
      bytes = encodeRecord(turn.entries);
    } catch (error) {
      for (const w of turn.waiting) w.reject(error);
      return;
    }
    if (bytes.length <= limit) {
      this.publish(turn.entries, turn.waiting, bytes);
      return;
    }
    // Larger than a NATS message may be: in several records, entry by entry.
    let entries: OperationEntry[] = [];
    let waiting: Waiting[] = [];
    let size = 0;
    const publishGroup = (): void => {
      if (entries.length > 0) this.publish(entries, waiting, encodeRecord(entries));
      entries = [];
      waiting = [];
      size = 0;
    };
    for (let i = 0; i < turn.entries.length; i++) {
      const one = encodeRecord([turn.entries[i]]);
      if (one.length > limit) {
        publishGroup();
        turn.waiting[i].reject(unavailable(`the write takes ${one.length} bytes, more than the NATS max_payload of ${limit}`, 'was not stored'));
        continue;
      }
      if (size + one.length > limit) publishGroup();
      entries.push(turn.entries[i]);
      waiting.push(turn.waiting[i]);
      size += one.length;
    }
    publishGroup();
  }

  private publish(entries: OperationEntry[], waiting: Waiting[], bytes: Uint8Array): void {
    const id = `${this.node}.${this.boot}.${++this.turnNumber}`;
    const record: OwnRecord = { entries, waiting, acked: false, answers: null, timer: null };
    this.own.set(id, record);
    const deadline = Date.now() + this.timeoutMs;
    let outcomeUnknown = false;
    let attempt = 0;
    const stored = (): void => {
      record.acked = true;
      if (record.answers !== null) {
        this.answer(id, record);
        return;
      }
      // Stored: this node's applier has it next (or is catching up to it).
      record.timer = setTimeout(() => {
        this.fail(id, record, unavailable('this node has not applied the acknowledged write in time', 'was stored, and every node will apply it'));
      }, this.timeoutMs);
    };
    const refused = (error: unknown): void => {
      // Applied means stored, whatever the acknowledgement said.
      if (record.answers !== null) {
        this.answer(id, record);
        return;
      }
      // Only "no responders" proves the request reached no stream; after a timeout or a connection
      // lost mid-request the stream may hold the record and commit it later.
      if (!/no responders|\b503\b/i.test(describe(error))) outcomeUnknown = true;
      // A leader change or a server that died answers at once ("no responders", disconnected)
      // for a few seconds: the record is sent again with the same id (JetStream stores it once)
      // until the request deadline, so a failover delays writes instead of failing them.
      const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt++);
      if (!this.closing && Date.now() + wait < deadline) {
        setTimeout(send, wait);
        return;
      }
      this.fail(id, record, unavailable(describe(error), outcomeUnknown ? 'may have been stored (the outcome is unknown)' : 'was not stored'));
    };
    const send = (): void => {
      if (record.answers !== null && record.acked) return;
      const timeout = Math.max(1, deadline - Date.now());
      this.link.writes.publish(bytes, id, timeout).then(stored, refused);
    };
    send();
  }

  private answer(id: string, record: OwnRecord): void {
    if (record.timer !== null) clearTimeout(record.timer);
    const answers = record.answers!;
    for (let i = 0; i < record.waiting.length; i++) record.waiting[i].resolve(answers[i]);
    this.forget(id);
  }

  private fail(id: string, record: OwnRecord, error: EngineError): void {
    if (record.timer !== null) clearTimeout(record.timer);
    for (const w of record.waiting) w.reject(error);
    this.forget(id);
  }

  private forget(id: string): void {
    this.own.delete(id);
    if (this.own.size === 0 && this.settledAll !== null) this.settledAll();
  }
}

function unavailable(reason: string, outcome: string): EngineError {
  // `stored`: what a protocol tells its client (an MQTT publisher is disconnected unless 'no').
  const stored = outcome.startsWith('was not') ? 'no' : outcome.startsWith('was stored') ? 'yes' : 'unknown';
  return new EngineError('CLUSTER_UNAVAILABLE', { reason, outcome, stored });
}

function describe(error: unknown): string {
  const text = String((error as { message?: unknown })?.message ?? error);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
