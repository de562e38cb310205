/**
 * Transform fields of topics (docs/storage.md, "Transform fields"): columns of a topic's
 * integration table read from each message's JSON payload.
 *
 * - `log:fields` key = a message's sequence, value = msgpack [fieldId, value, reason, fieldId, …]:
 *   the message's transform values by field id (ids are never reused, so a field removed and
 *   declared again never reads the old values). Written in the commit of the message's append.
 * - An indexed field has its own index sub-database (`i:<n>`, keys as any index: encoded value ‖
 *   sequence), written in the same commit.
 * - catalog ['transform', topicId] → the topic's fields and its back-fill job;
 *   ['transform-field-id'] → the next field id.
 *
 * A field declared on a topic that already holds messages is computed for messages appended from
 * then on (sequence ≥ its `since`); the earlier ones are back-filled by a background job, a chunk
 * of BACKFILL_CHUNK messages per commit, resumed after a restart. Topics without transform fields
 * cost the append path one `size` test per call.
 */
import type { LogTopic, TransformField, TransformStatus, TransformValues } from '../../kernel/storage/message-log-port';
import type { ColumnDefinition, Row } from '../../kernel/storage/types';
import type { Catalog } from './catalog';
import { EMPTY_VALUE, type IndexDb, type LmdbEnvironment } from './environment';
import { appendRecordId, encodeIndexKey, type KeySegmentSpec } from './index-keys';
import type { BlockEntry } from './log-blocks';
import type { LogReads } from './log-reads';
import type { TopicIndex } from './topic-index';
import { checkTransformFields, indexSpecs, parsedPayload, readField, type CheckedField } from './transform-fields';
import type { Database } from 'lmdb';
import { Packr } from 'msgpackr';

export const FIELDS_DB = 'log:fields';
/** Messages back-filled per commit. */
export const BACKFILL_CHUNK = 2_000;

interface PersistedField extends TransformField {
  id: number;
  /** The first sequence computed at append; earlier ones are back-filled. */
  since: number;
  /** Every message below `since` has been back-filled. */
  filled: boolean;
  indexDb: string | null;
}

interface Job { next: number; upTo: number; done: number; total: number }

interface PersistedTransform { fields: PersistedField[]; job: Job | null }

/** A field in force: as declared, with its index. */
export interface FieldState extends CheckedField {
  id: number;
  since: number;
  filled: boolean;
  indexDb: string | null;
  index: { db: IndexDb; specs: KeySegmentSpec[] } | null;
}

export interface TopicTransform {
  topicId: number;
  fields: FieldState[];
  job: Job | null;
}

/** One message's computed fields, to be written: encoded already, so writing cannot fail. */
interface FieldWrite { seq: number; bytes: Buffer; keys: Array<[IndexDb, Buffer]> }

/** Plain msgpack (no shared structures): an entry decodes on its own. */
const packr = new Packr({ useRecords: false });

/**
 * A message's cells as stored. A value that cannot be encoded (a check missed it) is stored as
 * null with the reason, instead of failing the append of everyone's messages in the turn.
 */
function encodeCells(cells: unknown[]): Buffer {
  try {
    return packr.pack(cells);
  } catch (error) {
    for (let k = 0; k < cells.length; k += 3) {
      if (cells[k + 1] !== null) { cells[k + 1] = null; cells[k + 2] = `cannot be stored: ${error instanceof Error ? error.message : String(error)}`; }
    }
    return packr.pack(cells);
  }
}


function sameField(a: TransformField, b: TransformField): boolean {
  return a.fieldName === b.fieldName && a.recordPath === b.recordPath && a.type === b.type && a.length === b.length && a.indexName === b.indexName;
}

function publicField(f: TransformField): TransformField {
  return { fieldName: f.fieldName, recordPath: f.recordPath, type: f.type, length: f.length, indexName: f.indexName };
}

export class TopicTransforms {
  private readonly byTopic = new Map<number, TopicTransform>();
  private readonly fieldsDb: Database<Buffer, number>;
  private nextFieldId = 1;
  /** Topics whose back-fill loop runs. */
  private readonly running = new Map<number, Promise<void>>();
  private closing = false;
  /** Any message ever got fields: removals of messages must also remove them (else: nothing to do). */
  private everUsed = false;

  constructor(
    private readonly env: LmdbEnvironment,
    private readonly catalog: Catalog,
    private readonly reads: LogReads,
    private readonly topicIndex: TopicIndex,
    /** The next sequence the log hands out. */
    private readonly nextSeq: () => number,
    /** Drops a topic's cached integration-table view (its columns changed). */
    private readonly forgetView: (topicId: number) => void,
  ) {
    this.fieldsDb = env.root.openDB<Buffer, number>(FIELDS_DB, { encoding: 'binary' }) as Database<Buffer, number>;
  }

  /** Whether any topic has transform fields (the append path asks once per call). */
  get active(): boolean { return this.byTopic.size > 0; }

  of(topicId: number): TopicTransform | undefined { return this.byTopic.get(topicId); }

  /** At open, after the catalog and the topic index: the fields in force, and back-fills to go on with. */
  load(): void {
    this.nextFieldId = (this.env.catalog.get(['transform-field-id']) as number | undefined) ?? 1;
    for (const { key, value } of this.env.catalog.getRange({ start: ['transform', 0], end: ['transform', Number.MAX_SAFE_INTEGER] })) {
      const topicId = (key as unknown[])[1] as number;
      if (!this.catalog.topicsById.has(topicId)) continue;
      const persisted = value as PersistedTransform;
      const fields = checkTransformFields(persisted.fields.map(publicField)).map((checked, i): FieldState => {
        const p = persisted.fields[i];
        return {
          ...checked, id: p.id, since: p.since, filled: p.filled, indexDb: p.indexDb,
          index: p.indexDb === null ? null : { db: this.env.openIndex(p.indexDb), specs: indexSpecs(checked) },
        };
      });
      this.byTopic.set(topicId, { topicId, fields, job: persisted.job });
    }
    for (const key of this.fieldsDb.getKeys({ limit: 1 })) { void key; this.everUsed = true; }
    for (const t of this.byTopic.values()) if (t.job !== null) this.startBackfill(t.topicId);
  }

  /** The topic's status (fields and back-fill progress). */
  status(topicId: number): TransformStatus {
    const t = this.byTopic.get(topicId);
    const job = t?.job ?? null;
    return {
      fields: t === undefined ? [] : t.fields.map(publicField),
      backfill: job === null ? { state: 'idle', messagesDone: 0, messagesTotal: 0 } : { state: 'running', messagesDone: job.done, messagesTotal: job.total },
    };
  }

  /**
   * Applies a `topic.transform` entry: the new list in force at once (appends numbered from now on
   * compute it), the catalog and the index sub-databases in the turn's commit, then the back-fill.
   */
  configure(info: LogTopic, inputs: TransformField[]): Promise<TransformStatus> {
    const checked = checkTransformFields(inputs);
    const topicId = info.topicId;
    const current = this.byTopic.get(topicId);
    const since = this.nextSeq();
    const kept: FieldState[] = [];
    const added: FieldState[] = [];
    const removed = (current?.fields ?? []).filter((f) => !checked.some((c) => sameField(c, f)));
    let needsSeq = false;
    for (const c of checked) {
      const old = current?.fields.find((f) => sameField(c, f));
      if (old !== undefined) { kept.push(old); continue; }
      const indexDb = c.indexName === null ? null : this.catalog.newDbName('i');
      // Messages numbered before `since` (some perhaps not yet durable) are back-filled: the walk
      // starts once this commit is durable, after theirs.
      added.push({
        ...c, id: this.nextFieldId++, since, filled: false, indexDb,
        index: indexDb === null ? null : { db: this.env.openIndex(indexDb), specs: indexSpecs(c) },
      });
      needsSeq ||= indexDb !== null;
    }
    const fields = checked.map((c) => kept.find((f) => f.fieldName === c.fieldName) ?? added.find((f) => f.fieldName === c.fieldName)!);
    let job = current?.job ?? null;
    if (added.some((f) => !f.filled)) {
      // One walk over the topic's earlier messages fills every field still missing values (a
      // running walk starts again from the first message: computing a field twice gives the same).
      const upTo = Math.max(since - 1, job?.upTo ?? 0);
      job = { next: 0, upTo, done: 0, total: this.topicIndex.count(topicId) - this.topicIndex.count(topicId, upTo + 1) };
    }
    if (fields.length === 0) job = null;
    const transform: TopicTransform = { topicId, fields, job };
    if (fields.length === 0) this.byTopic.delete(topicId);
    else this.byTopic.set(topicId, transform);
    this.forgetView(topicId);
    const nextFieldId = this.nextFieldId;
    return this.env.write(() => {
      if (needsSeq) this.catalog.persistSeq();
      this.env.catalog.put(['transform-field-id'], nextFieldId);
      this.persistInTxn(transform);
      for (const f of removed) if (f.index !== null) f.index.db.dropSync();
    }).then(() => {
      if (job !== null) this.startBackfill(topicId);
      return this.status(topicId);
    });
  }

  private persistInTxn(t: TopicTransform): void {
    if (t.fields.length === 0) {
      this.env.catalog.remove(['transform', t.topicId]);
      return;
    }
    const fields: PersistedField[] = t.fields.map((f) => ({ ...publicField(f), id: f.id, since: f.since, filled: f.filled, indexDb: f.indexDb }));
    this.env.catalog.put(['transform', t.topicId], { fields, job: t.job } satisfies PersistedTransform);
  }

  /** Inside the write removing a topic: its fields and indexes go (its messages' values go with their purge). */
  removeTopicInTxn(topicId: number): void {
    const t = this.byTopic.get(topicId);
    if (t === undefined) return;
    this.byTopic.delete(topicId);
    this.env.catalog.remove(['transform', topicId]);
    for (const f of t.fields) if (f.index !== null) f.index.db.dropSync();
  }

  // ---- appends -------------------------------------------------------------------------------

  /**
   * The numbered entries' fields, computed now (from each message alone, with the fields in force
   * when they were numbered); written by `write` in the append's commit. Null when no entry's topic
   * has transform fields.
   */
  compute(entries: readonly BlockEntry[]): FieldWrite[] | null {
    let out: FieldWrite[] | null = null;
    for (let i = 0; i < entries.length; i++) {
      const t = this.byTopic.get(entries[i].topicId);
      if (t === undefined) continue;
      (out ??= []).push(this.fieldsOf(t.fields, entries[i].seq, entries[i].message.payload));
    }
    return out;
  }

  /** Writes computed fields (inside the append's write, or queued in its turn's commit). */
  write(writes: FieldWrite[]): void {
    this.everUsed = true;
    for (const w of writes) {
      void this.fieldsDb.put(w.seq, w.bytes);
      for (const [db, key] of w.keys) void db.put(key, EMPTY_VALUE);
    }
  }

  private fieldsOf(fields: readonly FieldState[], seq: number, payload: BlockEntry['message']['payload']): FieldWrite {
    const parsed = parsedPayload(payload);
    const cells = new Array<unknown>(fields.length * 3);
    const keys: Array<[IndexDb, Buffer]> = [];
    for (let j = 0; j < fields.length; j++) this.cell(fields[j], parsed, seq, cells, j * 3, keys);
    return { seq, bytes: encodeCells(cells), keys };
  }

  /** One field's value into `cells` at `at` (id, value, reason), and its index key. */
  private cell(f: FieldState, parsed: ReturnType<typeof parsedPayload>, seq: number, cells: unknown[], at: number, keys: Array<[IndexDb, Buffer]>): void {
    const outcome = readField(f, parsed);
    let { value, reason } = outcome;
    if (f.index !== null) {
      try {
        keys.push([f.index.db, appendRecordId(encodeIndexKey(f.index.specs, { [f.fieldName]: value } as Row), seq)]);
      } catch (error) {
        // A value the index cannot hold is not stored (the column and the index stay alike).
        value = null;
        reason = `cannot be indexed: ${error instanceof Error ? error.message : String(error)}`;
        keys.push([f.index.db, appendRecordId(encodeIndexKey(f.index.specs, { [f.fieldName]: null } as Row), seq)]);
      }
    }
    cells[at] = f.id;
    cells[at + 1] = value;
    cells[at + 2] = reason;
  }

  // ---- reads ---------------------------------------------------------------------------------

  /** A message's fields as the view's values (in field order), with its `error` and `log`. */
  /** A message's stored cells, undefined when none. */
  private cellsOf(seq: number): unknown[] | undefined {
    const bytes = this.fieldsDb.get(seq);
    return bytes === undefined ? undefined : packr.unpack(bytes) as unknown[];
  }

  valuesOf(t: TopicTransform, seq: number): { values: unknown[]; error: boolean; log: TransformValues['log'] } {
    const cells = this.cellsOf(seq);
    const values = new Array<unknown>(t.fields.length).fill(null);
    let log: TransformValues['log'] = null;
    if (cells === undefined) return { values, error: false, log };
    for (let j = 0; j < t.fields.length; j++) {
      const f = t.fields[j];
      for (let k = 0; k < cells.length; k += 3) {
        if (cells[k] !== f.id) continue;
        values[j] = cells[k + 1];
        if (cells[k + 2] !== null) (log ??= []).push({ fieldName: f.fieldName, recordPath: f.recordPath, reason: cells[k + 2] as string });
        break;
      }
    }
    return { values, error: log !== null, log };
  }

  /** The columns transform fields add to a topic's table. */
  columnsOf(t: TopicTransform): ColumnDefinition[] {
    return t.fields.map((f) => f.column);
  }

  // ---- removals ------------------------------------------------------------------------------

  /** Inside a write removing messages (purge, trim): their fields and index entries go too. */
  removeInTxn(seqs: Iterable<number>): void {
    if (!this.everUsed) return;
    for (const seq of seqs) {
      const cells = this.cellsOf(seq);
      if (cells === undefined) continue;
      void this.fieldsDb.remove(seq);
      for (const t of this.byTopic.values()) {
        for (const f of t.fields) {
          if (f.index === null) continue;
          for (let k = 0; k < cells.length; k += 3) {
            if (cells[k] === f.id) void f.index.db.remove(appendRecordId(encodeIndexKey(f.index.specs, { [f.fieldName]: cells[k + 1] } as Row), seq));
          }
        }
      }
    }
  }

  // ---- back-fill -----------------------------------------------------------------------------

  private startBackfill(topicId: number): void {
    if (this.running.has(topicId) || this.closing) return;
    const run = this.backfill(topicId)
      .catch((error: unknown) => {
        const warning = new Error(`the back-fill of transform fields stopped: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        warning.name = 'TransformBackfillFault';
        process.emitWarning(warning);
      })
      .finally(() => this.running.delete(topicId));
    this.running.set(topicId, run);
  }

  /** Fills the fields still missing values for the topic's earlier messages, a chunk per commit. */
  private async backfill(topicId: number): Promise<void> {
    for (;;) {
      if (this.closing) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      const t = this.byTopic.get(topicId);
      if (t === undefined || t.job === null || !this.catalog.topicsById.has(topicId)) return;
      const job = t.job;
      const seqs: number[] = [];
      for (const seq of this.reads.sequences(topicId, { start: job.next, end: job.upTo + 1 })) {
        seqs.push(seq);
        if (seqs.length >= BACKFILL_CHUNK) break;
      }
      await this.env.write(() => {
        // The configuration may have changed since the chunk was picked: what is in force now counts.
        const now = this.byTopic.get(topicId);
        if (now !== t || t.job !== job) return;
        if (seqs.length === 0) {
          for (const f of t.fields) if (f.since <= job.upTo + 1) f.filled = true;
          t.job = null;
        } else {
          this.fillInTxn(t, seqs);
          job.next = seqs[seqs.length - 1] + 1;
          job.done += seqs.length;
        }
        this.persistInTxn(t);
      });
    }
  }

  /** Inside a write: the pending fields of these messages, merged into what they hold. */
  private fillInTxn(t: TopicTransform, seqs: number[]): void {
    this.everUsed = true;
    const keys: Array<[IndexDb, Buffer]> = [];
    for (const seq of seqs) {
      const pending = t.fields.filter((f) => !f.filled && f.since > seq);
      if (pending.length === 0) continue;
      const v = this.reads.valuesOf(t.topicId, seq);
      if (v === undefined) continue;
      const parsed = parsedPayload(v[2] as BlockEntry['message']['payload']);
      const old = this.cellsOf(seq) ?? [];
      const cells: unknown[] = [];
      // Values of fields still in force and not being filled stay as they are.
      for (let k = 0; k < old.length; k += 3) {
        const id = old[k];
        if (t.fields.some((f) => f.id === id) && !pending.some((f) => f.id === id)) cells.push(old[k], old[k + 1], old[k + 2]);
      }
      for (const f of pending) this.cell(f, parsed, seq, cells, cells.length, keys);
      void this.fieldsDb.put(seq, encodeCells(cells));
    }
    for (const [db, key] of keys) void db.put(key, EMPTY_VALUE);
  }

  /** Stops the back-fills after their current chunk (they go on at the next open). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.running.values()]);
  }
}
