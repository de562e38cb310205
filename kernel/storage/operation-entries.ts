/**
 * Operation entries: every write that reaches storage, described by one entry that carries all of
 * its inputs (docs/storage.md, "Operation entries and replay").
 *
 * A store applies entries in order, and applying one is the only way it changes: the numbers and
 * times it assigns (record ids, message sequences, topic ids, `create_ts` and other automatic
 * timestamps, `createdAt`) are computed from the entry (its `time`, its messages' `createTs`) and
 * the store's state as the entries before it left it. So the same entries applied in the same
 * order to an empty store give the same store: this is what a replicated log will carry between
 * nodes, and what `StoragePort.operations` lets a caller record (`tap`) and apply (`apply`).
 *
 * Entries are plain data: names, canonical values (bytes, big integers), timestamps, and
 * `undefined` for an insert's value not supplied, which an encoding must keep (msgpack does, JSON
 * does not). An entry shares arrays and objects with the call that made it and with the store (no
 * copies are made on the hot paths; an insert's rows are completed in place when it is applied):
 * a listener that keeps an entry copies or encodes it when told, and never changes it.
 *
 * An entry is recorded when the store accepts it (the call's own checks passed) and before it is
 * applied, in the order the store applies them. Applying may still refuse it (a unique key taken
 * by an earlier entry of the same commit, a table deleted meanwhile): then it changes nothing, and
 * it is refused the same way when the same entries are applied again.
 */
import type { LogAppend, TransformFieldInput } from './message-log-port';
import type { StoredRecord } from './storage-port';
import type { ColumnInput, IndexInput, RecordId } from './types';

/** An ISO 8601 UTC timestamp (`YYYY-MM-DDThh:mm:ss.sssZ`): when the write was made. */
export type EntryTime = string;

// ---- databases, tables, columns, indexes -----------------------------------------------------

export interface DatabaseCreateEntry { op: 'database.create'; name: string; time: EntryTime }
export interface DatabaseDeleteEntry { op: 'database.delete'; name: string }
export interface TableCreateEntry { op: 'table.create'; database: string; table: string; columns: ColumnInput[]; time: EntryTime }
/** Deletes tables (an integration table deletes its topic). */
export interface TableDeleteEntry { op: 'table.delete'; database: string; tables: string[] }
export interface ColumnsAddEntry { op: 'columns.add'; database: string; table: string; columns: ColumnInput[] }
export interface IndexCreateEntry { op: 'index.create'; database: string; table: string; index: string; definition: IndexInput }
export interface IndexDeleteEntry { op: 'index.delete'; database: string; table: string; indexes: string[] }

// ---- records ---------------------------------------------------------------------------------

/**
 * Inserts rows given as a column-name header and positional rows: `values[i][c]` is the value of
 * column `columns[c]`, canonical, or `undefined` when not supplied (the column's automatic value,
 * computed from `time`, or its default applies). `columns` are the table's columns after the
 * record-ID column as the rows were decoded against them (the table's version); `ids[i]` is the
 * supplied record id or null (the store assigns the next one).
 */
export interface RecordsInsertEntry {
  op: 'records.insert';
  database: string;
  table: string;
  columns: readonly string[];
  ids: Array<RecordId | null>;
  values: unknown[][];
  time: EntryTime;
}

/** Replaces (columns missing become default) or patches (supplied columns only) records; rows by column name. */
export interface RecordsUpdateEntry {
  op: 'records.replace' | 'records.patch';
  database: string;
  table: string;
  records: StoredRecord[];
  time: EntryTime;
}

export interface RecordsDeleteEntry { op: 'records.delete'; database: string; table: string; ids: RecordId[]; mustExist: boolean }

/**
 * Reserves `count` automatic record ids of a table for a transaction spanning several requests:
 * the store's next id becomes at least `above` + 1, the reserved ids follow it, and no later
 * insert is given them. The transaction's commit entry then names them.
 */
export interface IdsReserveEntry { op: 'ids.reserve'; database: string; table: string; count: number; above: number }

/** The writes of a transaction spanning several requests, applied all or nothing. */
export interface TransactionCommitEntry {
  op: 'transaction.commit';
  operations: Array<RecordsInsertEntry | RecordsUpdateEntry | RecordsDeleteEntry>;
}

// ---- the message log -------------------------------------------------------------------------

/**
 * Appends messages (of any topics; a topic is created by its first message, its `createdAt` from
 * that message's `createTs`). The store gives them the next sequences, in order.
 */
export interface MessagesAppendEntry { op: 'messages.append'; messages: LogAppend[] }
export interface TopicCreateEntry { op: 'topic.create'; topic: string; time: EntryTime }
export interface TopicDeleteEntry { op: 'topic.delete'; topic: string }
/** Removes the topic's messages with a sequence ≤ `upToSequence`, except `keep` (retention). */
export interface TopicTrimEntry { op: 'topic.trim'; topic: string; upToSequence: number; keep?: number }
/** A topic's transform fields, the whole list (docs/storage.md, "Transform fields"); the fields as checked when submitted. */
export interface TopicTransformEntry { op: 'topic.transform'; topic: string; fields: TransformFieldInput[] }

/** The message core's shared state (MessageLogPort.state): sessions, topic configuration, retained pointers. */
export interface StatePutEntry { op: 'state.put'; key: string; value: unknown }
export interface StateRemoveEntry { op: 'state.remove'; key: string }

// ---- internal stores (kernel catalogs: accounts, roles, MQ sessions) --------------------------

export interface InternalPutEntry { op: 'internal.put'; store: string; key: string; value: unknown }
export interface InternalRemoveEntry { op: 'internal.remove'; store: string; key: string }

export type OperationEntry =
  | DatabaseCreateEntry | DatabaseDeleteEntry
  | TableCreateEntry | TableDeleteEntry | ColumnsAddEntry | IndexCreateEntry | IndexDeleteEntry
  | RecordsInsertEntry | RecordsUpdateEntry | RecordsDeleteEntry | IdsReserveEntry | TransactionCommitEntry
  | MessagesAppendEntry | TopicCreateEntry | TopicDeleteEntry | TopicTrimEntry | TopicTransformEntry
  | StatePutEntry | StateRemoveEntry
  | InternalPutEntry | InternalRemoveEntry;

/** Told every entry the store accepts, in the order it applies them. */
export type OperationListener = (entry: OperationEntry) => void;

/**
 * `StoragePort.operations`: record a store's entries and apply entries to a store.
 * - `tap(listener)`: the listener is called synchronously with each entry as the store accepts it
 *   (before it is applied), in apply order; returns the function that removes it. A listener must
 *   be quick and must not throw (a throw is ignored) or change the entry.
 * - `apply(entries)`: applies entries in order, each as the store applied it where it was recorded
 *   (the same ids, sequences and times); an entry refused with an engine error (as it was where it
 *   was recorded) is passed over. Resolves once all are durable. Applied entries are told to this
 *   store's listeners too.
 */
export interface OperationsPort {
  tap(listener: OperationListener): () => void;
  apply(entries: readonly OperationEntry[]): Promise<void>;
  /**
   * Hands every entry the store accepts from now on to `forwarder` instead of applying it, and
   * answers the write with what the forwarder's promise settles with (null: apply again). A
   * replicated log installs it (docs/cluster.md): it carries the entry to every node, each
   * applies it with `applyAt`, and the node that wrote it answers its caller then.
   */
  forward(forwarder: OperationForwarder | null): void;
  /**
   * Applies the entries of one record of a replicated log, from `from` on (earlier ones were
   * applied before a restart), never forwarded; the record's position is written in the same
   * commit as their effects, so a record is applied once even across a crash. Returns one
   * promise per entry applied (what its write answers, or its refusal; one kept unread never
   * counts as an unhandled rejection). Record and message writes of records handed over back to
   * back share commits; a schema or topic entry is applied alone, once every write queued ahead of
   * it has committed, and the entries after it wait until it has (it checks the catalog as they
   * leave it; a trim also runs over several commits). `applied` is called once the record's
   * entries are applied (readable): before applyAt returns, or, for a record holding or held back
   * by such an entry, once its last entry has been applied in its turn.
   */
  applyAt(sequence: number, entries: readonly OperationEntry[], from?: number, applied?: () => void): Array<Promise<unknown>>;
  /** The position `applyAt` last made durable (undefined when nothing was applied that way). */
  appliedPosition(): LogPosition | undefined;
}

/** Takes an entry the store accepted instead of applying it (OperationsPort.forward). */
export type OperationForwarder = (entry: OperationEntry) => Promise<unknown>;

/** How far a replicated log has been applied: the record's sequence, and how many of its entries. */
export interface LogPosition {
  sequence: number;
  applied: number;
}
