/**
 * Applying operation entries (kernel/storage/operation-entries.ts, docs/storage.md "Operation
 * entries and replay"): the one way the store's state changes.
 *
 * Every write method of the store checks its call, builds an entry and hands it to
 * `OperationLog.submit`, which tells the listeners and applies it with `applyEntry`; entries
 * recorded elsewhere come in through `OperationLog.apply` and take the same path. `applyEntry`
 * (with the `apply*` functions and methods it calls, which nothing else calls) alone assigns
 * record ids, message sequences, topic ids and the automatic times (`create_ts` and the like,
 * `createdAt`), from the entry and the store's state.
 *
 * Entries are applied in the order they are submitted: each joins the current event-loop turn's
 * batched commit (env.write), whose callbacks lmdb-js runs in the order they were queued, so one
 * turn's entries still share one durable commit. A message append numbers its messages when it is
 * submitted (before the commit), in that same order.
 */
import type { Clock } from '../../kernel/clock';
import { EngineError } from '../../kernel/errors';
import type {
  EntryTime, LogPosition, OperationEntry, OperationForwarder, OperationListener, OperationsPort, RecordsDeleteEntry,
  RecordsInsertEntry, RecordsUpdateEntry,
} from '../../kernel/storage/operation-entries';
import type { RecordId } from '../../kernel/storage/types';
import { saveNextId, type Catalog, type TableState } from './catalog';
import type { LmdbEnvironment } from './environment';
import type { LmdbInternalStore } from './internal-stores';
import type { LmdbLogState } from './log-state';
import type { LmdbMessageLog } from './message-log';
import { applyDelete, applyInsertValues, applyUpdate, checkValue, completeInsertValues } from './records';
import type { LmdbSchema } from './schema';
import { StorageFullState } from './storage-full';
import { isFreeing, type DiskSpaceGuard } from './disk-space';

/** The parts of the store entries are applied to. */
export interface EntryTargets {
  env: LmdbEnvironment;
  catalog: Catalog;
  schema: LmdbSchema;
  log: LmdbMessageLog;
  state: LmdbLogState;
  internal(name: string): LmdbInternalStore<unknown>;
}

/** The time of a write made now, on the store's clock (the engine's one clock: kernel/clock.ts). */
export function entryTime(clock: Clock): EntryTime {
  return new Date(clock.now()).toISOString();
}

/** An entry's time as a canonical timestamp (no zone), the form of `create_ts` and timestamp columns. */
export function canonicalTime(time: EntryTime): string {
  return time.slice(0, 23);
}

/** The column-name header of rows decoded against a definition (the columns after `id`), built once per definition. */
const headers = new WeakMap<object, readonly string[]>();
export function columnHeader(ts: TableState): readonly string[] {
  let header = headers.get(ts.def);
  if (header === undefined) {
    header = Object.freeze(ts.def.columns.slice(1).map((column) => column.name));
    headers.set(ts.def, header);
  }
  return header;
}

/** The `localState` key of the replicated log's position applyAt writes (per process, never an entry). */
const POSITION_KEY = 'replicated-log-position';

export class OperationLog implements OperationsPort {
  private listeners: OperationListener[] = [];
  /** Set by the store once its parts exist. */
  targets!: EntryTargets;
  /** Turns a commit refused for want of space into STORAGE_FULL, and tells when writes resume (storage-full.ts). */
  full = new StorageFullState(undefined);
  /** Refuses new data while the filesystem's free space is under the reserve (disk-space.ts). */
  space: DiskSpaceGuard | undefined;
  /** Takes the store's entries instead of applying them (a replicated log), when set. */
  private forwarder: OperationForwarder | null = null;
  /** Records waiting for an entry applied alone by applyAt (APPLIED_ALONE) to be applied. */
  private waiting: Array<() => void> | null = null;
  /** The last write applyAt applied: an entry applied alone waits until it is applied. */
  private lastApplied: Promise<unknown> = Promise.resolve();

  tap(listener: OperationListener): () => void {
    if (typeof listener !== 'function') throw new EngineError('INVALID_PARAMETER', { param: 'listener', reason: 'a function is required' });
    this.listeners = [...this.listeners, listener];
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }

  /**
   * Applies an entry the store accepted and tells the listeners, once its synchronous part (checks
   * that can refuse it at once, the numbering of messages) is done: an entry refused then is not
   * told. `prepared`: what the caller already computed from the entry (checked appends), so the
   * hot paths do no work twice.
   */
  submit<T>(entry: OperationEntry, prepared?: unknown): Promise<T> {
    // New data is refused where it is written, before a replicated log takes it (disk-space.ts).
    const refusal = this.space?.refusal(entry);
    if (refusal !== undefined) {
      this.full.enter(refusal);
      return Promise.reject(new EngineError('STORAGE_FULL', { reason: refusal }));
    }
    if (this.forwarder !== null) return this.forwarder(entry) as Promise<T>;
    return this.applyNow<T>(entry, prepared);
  }

  forward(forwarder: OperationForwarder | null): void {
    if (forwarder !== null && typeof forwarder !== 'function') throw new EngineError('INVALID_PARAMETER', { param: 'forwarder', reason: 'a function or null is required' });
    this.forwarder = forwarder;
  }

  appliedPosition(): LogPosition | undefined {
    return this.targets.log.localState.get(POSITION_KEY) as LogPosition | undefined;
  }

  applyAt(sequence: number, entries: readonly OperationEntry[], from = 0, applied?: () => void): Array<Promise<unknown>> {
    const answers = new Array<Promise<unknown>>(Math.max(0, entries.length - from));
    if (this.waiting === null) {
      this.applyRecord(sequence, entries, from, from, answers, null, applied);
      return answers;
    }
    const settle = new Array<(answer: Promise<unknown>) => void>(answers.length);
    for (let k = 0; k < answers.length; k++) answers[k] = promisedAnswer((resolve) => { settle[k] = resolve; });
    this.waiting.push(() => this.applyRecord(sequence, entries, from, from, answers, settle, applied));
    return answers;
  }

  /**
   * Applies a record's entries from `i` on in the current commit, with its position. An entry
   * applied alone (APPLIED_ALONE) ends the run: the position before it joins the commit of what
   * came before; it is applied once that is applied, and the rest of the record (and later
   * records) wait until it is applied in turn.
   */
  private applyRecord(
    sequence: number, entries: readonly OperationEntry[], from: number, i: number,
    answers: Array<Promise<unknown>>, settle: Array<(answer: Promise<unknown>) => void> | null,
    applied: (() => void) | undefined,
  ): void {
    const answer = (k: number, value: Promise<unknown>): void => {
      value.catch(ignore); // the caller reads it, or it was refused on every node alike
      const told = settle?.[k - from];
      if (told === undefined) answers[k - from] = value;
      else told(value);
    };
    let last: Promise<unknown> | undefined;
    for (; i < entries.length; i++) {
      const entry = entries[i];
      if (APPLIED_ALONE.has(entry?.op)) break;
      answer(i, last = this.applyNow(entry));
    }
    if (last !== undefined) this.lastApplied = last;
    void this.targets.log.localState.put(POSITION_KEY, { sequence, applied: i } satisfies LogPosition);
    if (i === entries.length) {
      applied?.();
      return;
    }
    // The entry at i and the rest of the record are answered later: their answers are promised now.
    settle ??= new Array<(answer: Promise<unknown>) => void>(answers.length);
    for (let k = i; k < entries.length; k++) {
      if (settle[k - from] === undefined) answers[k - from] = promisedAnswer((resolve) => { settle![k - from] = resolve; });
    }
    this.waiting ??= [];
    const alone = i;
    // It runs once every write queued before it has committed (a write queued now commits after
    // them: lmdb-js commits in queue order; the last entry applied may have queued none, refused at
    // once) and the last entry applied has settled (an append is indexed, and told to the log's
    // followers, just after its commit).
    let queued: Promise<unknown>;
    try {
      queued = this.targets.env.write(ignore);
    } catch (error) {
      queued = Promise.reject(error); // the store is closing: nothing is waited for
    }
    void Promise.all([settled(this.lastApplied), settled(queued)]).then(() => {
      const entry = entries[alone];
      const done = this.applyNow(entry);
      // A trim spans several commits: the position after it is written once it has finished,
      // with what follows it; any other entry's position joins its own commit.
      if (entry.op !== 'topic.trim') void this.targets.log.localState.put(POSITION_KEY, { sequence, applied: alone + 1 } satisfies LogPosition);
      answer(alone, done);
      this.lastApplied = done;
      return settled(done);
    }).then(() => {
      const waiting = this.waiting ?? [];
      this.waiting = null;
      this.applyRecord(sequence, entries, from, alone + 1, answers, settle, applied);
      // Later records run in order until one meets an entry applied alone again (and waits in turn).
      while (waiting.length > 0 && this.waiting === null) waiting.shift()!();
      if (waiting.length > 0) this.waiting = [...waiting, ...(this.waiting ?? [])];
    });
  }

  private applyNow<T>(entry: OperationEntry, prepared?: unknown): Promise<T> {
    const full = this.full;
    let result: Promise<T>;
    try {
      result = applyEntry(this.targets, entry, prepared) as Promise<T>;
    } catch (error) {
      return Promise.reject(error);
    }
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i](entry);
      } catch {
        // a listener's failure is its own
      }
    }
    // Every write passes here: a full disk fails it with STORAGE_FULL, and while full the first
    // durable commit says space has returned (no work on the success path otherwise).
    if (full.isFull && !isFreeing(entry)) result.then(full.durable, ignore);
    return result.then(undefined, full.failed);
  }

  async apply(entries: readonly OperationEntry[]): Promise<void> {
    if (!Array.isArray(entries)) throw new EngineError('INVALID_PARAMETER', { param: 'entries', reason: 'an array is required' });
    for (const entry of entries) {
      try {
        await this.applyNow(entry);
      } catch (error) {
        // Refused where it was recorded too (the same state before it): it changed nothing there either.
        if (!(error instanceof EngineError)) throw error;
      }
    }
  }
}

function ignore(): void {}

/**
 * An answer settled later (an entry held back): refused, it must not count as unhandled when the
 * caller keeps it without reading it (a node keeps the answers of other nodes' records), which
 * would end the process; the caller that reads it still sees the refusal.
 */
function promisedAnswer(executor: (resolve: (answer: Promise<unknown>) => void) => void): Promise<unknown> {
  const answer = new Promise<unknown>(executor);
  answer.catch(ignore);
  return answer;
}

/** Settles once `written` has (resolved or refused: either way it was applied). */
function settled(written: Promise<unknown>): Promise<void> {
  return written.then(ignore, ignore);
}

/**
 * Entries applyAt applies alone: after every write queued before them has committed, and before
 * any write after them. Each checks the catalog (databases, tables, columns, indexes, topics) when it is
 * applied, before its write is queued, or changes what later entries check then: applied back to
 * back with the writes still queued ahead of it (several records in one event-loop turn), it
 * would see the catalog without them. An index on a table created one record earlier was
 * refused TABLE_NOT_FOUND on the node that read both records at once and created on the others.
 * A trim is one too: it spans several commits. All are rare beside record and message writes.
 */
const APPLIED_ALONE: ReadonlySet<string | undefined> = new Set([
  'database.create', 'database.delete', 'table.create', 'table.delete', 'columns.add', 'index.create', 'index.delete',
  'topic.create', 'topic.delete', 'topic.trim', 'topic.transform',
]);

/** Applies one entry; resolves with what the write's caller is answered (ids, sequences, a definition) once durable. */
export function applyEntry(t: EntryTargets, entry: OperationEntry, prepared?: unknown): Promise<unknown> {
  if (entry === null || typeof entry !== 'object') return Promise.reject(new EngineError('INVALID_PARAMETER', { param: 'entry', reason: 'an entry is an object' }));
  switch (entry.op) {
    case 'messages.append': return t.log.applyAppend(entry, prepared);
    case 'records.insert': return t.env.write(() => insertInTxn(t, entry, false));
    case 'records.replace':
    case 'records.patch': return t.env.write(() => updateInTxn(t, entry));
    case 'records.delete': return t.env.write(() => deleteInTxn(t, entry));
    case 'state.put': return t.state.applyPut(entry.key, entry.value);
    case 'state.remove': return t.state.applyRemove(entry.key);
    case 'ids.reserve': return t.env.write(() => {
      const ts = writableTable(t, entry.database, entry.table);
      const start = Math.max(ts.nextId, Math.floor(entry.above) + 1);
      ts.nextId = start + Math.floor(entry.count);
      saveNextId(ts, t.env.catalog);
      return start;
    });
    case 'transaction.commit': return t.env.writeAtomic(() => {
      for (const op of entry.operations) {
        if (op.op === 'records.insert') insertInTxn(t, op, true);
        else if (op.op === 'records.delete') deleteInTxn(t, op);
        else updateInTxn(t, op);
      }
    });
    case 'database.create': return t.schema.createDatabase(entry.name, entry.time);
    case 'database.delete': return t.schema.deleteDatabase(entry.name);
    case 'table.create': return t.schema.createTable(entry.database, entry.table, entry.columns, entry.time);
    case 'table.delete': return t.schema.deleteTables(entry.database, entry.tables);
    case 'columns.add': return t.schema.addColumns(entry.database, entry.table, entry.columns);
    case 'index.create': return t.schema.createIndex(entry.database, entry.table, entry.index, entry.definition);
    case 'index.delete': return t.schema.deleteIndexes(entry.database, entry.table, entry.indexes);
    case 'topic.create': return t.log.applyCreateTopic(entry.topic, entry.time);
    case 'topic.delete': return t.log.applyDeleteTopic(entry.topic);
    case 'topic.trim': return t.log.applyTrim(entry.topic, entry.upToSequence, entry.keep);
    case 'topic.transform': return t.log.applyTransform(entry.topic, entry.fields);
    case 'internal.put': return t.internal(entry.store).applyPut(entry.key, entry.value);
    case 'internal.remove': return t.internal(entry.store).applyRemove(entry.key);
    default:
      return Promise.reject(new EngineError('INVALID_PARAMETER', { param: 'entry', reason: `unknown operation "${String((entry as { op?: unknown }).op)}"` }));
  }
}

/** A table records may be written to (not an integration table: those change through the log). */
function writableTable(t: EntryTargets, database: string, table: string): TableState {
  const ts = t.catalog.table(database, table);
  if (ts.topicId !== undefined || ts.def.topic !== null) throw new EngineError('TABLE_READ_ONLY', { table: ts.def.name });
  return ts;
}

/**
 * Inside a write: inserts the entry's rows, completing them (automatic values from the entry's
 * time, defaults) and numbering those without an id. `assigned`: the rows of a transaction's
 * commit, numbered (ids reserved) when they were written, whatever the table declares.
 */
function insertInTxn(t: EntryTargets, entry: RecordsInsertEntry, assigned: boolean): RecordId[] {
  const ts = writableTable(t, entry.database, entry.table);
  const values = aligned(ts, entry);
  const ids = entry.ids;
  const now = canonicalTime(entry.time);
  // A transaction's rows are complete, but for columns added since they were written (defaults).
  for (let i = 0; i < values.length; i++) completeInsertValues(ts, assigned ? null : ids[i], values[i], now);
  const result = applyInsertValues(ts, ids, values);
  saveNextId(ts, t.env.catalog);
  return result;
}

/**
 * The entry's rows laid out for the table's current columns: as they are when decoded against
 * them (the usual case), else moved by column name and checked in full (columns added, or a new
 * table of that name, since the rows were decoded).
 */
function aligned(ts: TableState, entry: RecordsInsertEntry): unknown[][] {
  const header = columnHeader(ts);
  const given = entry.columns;
  if (given === header || (given.length === header.length && given.every((name, i) => name === header[i]))) return entry.values;
  const columns = ts.def.columns;
  const positions = given.map((name) => {
    const at = ts.columnPos.get(name);
    if (at === undefined || at === 0) throw new EngineError('COLUMN_NOT_FOUND', { column: name, table: ts.def.name });
    return at;
  });
  return entry.values.map((row) => {
    const out = new Array<unknown>(columns.length - 1);
    for (let c = 0; c < positions.length; c++) {
      const value = row[c];
      if (value !== undefined) out[positions[c] - 1] = checkValue(columns[positions[c]], value as never);
    }
    return out;
  });
}

function updateInTxn(t: EntryTargets, entry: RecordsUpdateEntry): void {
  const ts = writableTable(t, entry.database, entry.table);
  applyUpdate(ts, entry.records, entry.op === 'records.replace' ? 'replace' : 'patch', canonicalTime(entry.time));
}

function deleteInTxn(t: EntryTargets, entry: RecordsDeleteEntry): number {
  return applyDelete(writableTable(t, entry.database, entry.table), entry.ids, entry.mustExist);
}
