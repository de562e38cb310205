/**
 * The storage port: everything the kernel and the protocols need from a store.
 *
 * A storage plugin implements this interface and provides it with `engine.provide('storage', …)`.
 * `kernel/storage/conformance.ts` is the suite every implementation must pass. Values are
 * canonical (see ./types.ts); names of databases, tables, columns and indexes are
 * case-insensitive and reported lower-case.
 *
 * Durability rule: every returned promise of a write resolves only after the write is durable on
 * disk. Reads see every write whose promise has resolved.
 *
 * Every write (here, through `messageLog`, its `state` and the internal stores) is one operation
 * entry (./operation-entries.ts): `operations` records them and applies recorded ones, so a store
 * can be replayed (docs/storage.md, "Operation entries and replay").
 */
import type {
  CanonicalValue, ColumnDefinition, ColumnInput, IndexDefinition, IndexInput, RecordId, Row, TableDefinition,
  VariantValue,
} from './types';
import type { FilterNode } from './filter-ast';
import type { MessageLogPort } from './message-log-port';
import type { OperationsPort } from './operation-entries';

/** A small durable key-value store for kernel catalogs (accounts, roles, MQ sessions). */
export interface InternalStore<V = unknown> {
  get(key: string): V | undefined;
  put(key: string, value: V): Promise<void>;
  remove(key: string): Promise<boolean>;
  entries(): Iterable<[string, V]>;
}

/** One end of a key range over an index's leading segments. */
export interface KeyBound {
  /** Canonical values for the first `values.length` segments of the index. */
  values: CanonicalValue[];
  inclusive: boolean;
}

/**
 * Which entries of an index to read.
 * - `lower` / `upper` bound the keys, in key order; a bound with fewer values than segments is a
 *   prefix bound (inclusive lower: every key starting with it; exclusive upper: no key starting
 *   with it).
 * - `prefix` selects keys whose user-visible bytes start with the encoded values, limited to
 *   `byteLength` bytes of segment data (advanced_find `find_set`).
 * - A comparison with null is false: bound values are never null (INVALID_QUERY), a range with a
 *   bound holds no key whose first segment is null, and a bound on several segments leaves out a
 *   key that reaches a null segment while its segments before it equal the bound's.
 */
export interface KeyRange {
  lower?: KeyBound;
  upper?: KeyBound;
  prefix?: { values: CanonicalValue[]; byteLength?: number };
}

export interface ReadOptions {
  /** Index to read through; omitted: record-ID order. */
  index?: string;
  range?: KeyRange;
  /** Extra criteria; rows failing it are neither returned nor counted by skip. */
  filter?: FilterNode;
  reverse?: boolean;
  skip?: number;
  limit?: number;
  /** Read as of this transaction (sees its own uncommitted writes). */
  transactionId?: string;
}

/**
 * Rows to insert, already decoded into the stored column order (`StoragePort.insertValues`): what
 * plugins/data's RecordDecoder produces, so that the store neither rebuilds nor re-checks them.
 */
export interface PositionalRows {
  /** The definition the rows were decoded against (as `getTable` returned it). */
  table: TableDefinition;
  /** Per row: the supplied record ID (only when the table declares `id`), or null to assign one. */
  ids: Array<RecordId | null>;
  /**
   * Per row: one entry per column of `table.columns` after the record-ID column (entry c - 1 is
   * column c), each a canonical value already validated for its column (`decodeValue`: type,
   * nullability, length), or `undefined` when not supplied (the default or automatic value
   * applies, and is checked). The arrays are handed over: the store may fill them in and keep them.
   */
  values: unknown[][];
}

export interface StoredRecord {
  id: RecordId;
  row: Row;
}

/**
 * A record as the store holds it: its ID and its canonical values in the order of the table's
 * current columns after the record-ID column (entry c - 1 is column c). An array may be shorter
 * than the column list (columns added since it was written): the missing entries read as the
 * columns' default values. The arrays belong to the store: read them, do not change or keep them.
 * `rowOf` (./stored-values.ts) builds a row object from them where one is wanted.
 */
export interface StoredValues {
  id: RecordId;
  values: readonly unknown[];
}

/**
 * A read carried out in slices: the one protocol of every read that may visit many entries
 * (`StoragePort.readRecords`, a cursor's `fetch`, `skip` and `hasMore`). A filter that matches
 * little or a large skip may visit far more entries than the read returns; the caller bounds the
 * entries visited per call and lets the event loop run between calls. `readAll`
 * (./stored-values.ts) runs a read to its end in one call.
 */
export interface ReadSlices<T> {
  /**
   * Goes on visiting at most `maxVisits` entries (`Infinity`: to the end); once the read is
   * finished, `done` with its result, and the same again on later calls. Each slice re-opens the
   * range after the last visited entry, so it sees commits made since the previous slice. Throws
   * what the read throws (CURSOR_NOT_FOUND after a cursor's `close`, TABLE_NOT_FOUND,
   * INDEX_NOT_FOUND), checked at every slice.
   */
  next(maxVisits: number): { done: false } | { done: true; value: T };
}

/**
 * A positioned read over a table or index; each operation streams from the store (no full scans)
 * and is carried out in slices (ReadSlices).
 *
 * The position is the key of the last record returned or skipped (or one of the two ends). An
 * operation keeps its own resume key (the last entry it visited) and moves the cursor's position
 * only when it finishes. Until then the cursor must serve no other operation: plugins/data runs
 * one operation per cursor at a time. An operation that finds the cursor moved by another one
 * meanwhile throws (it never continues from a position that is no longer the cursor's).
 */
export interface RecordCursor {
  /** Reads up to `count` records moving forward (or backward) from the current position. */
  fetch(count: number, direction: 'forward' | 'backward'): ReadSlices<StoredValues[]>;
  /** Moves over up to `count` records without returning them; finishes with how many were skipped. */
  skip(count: number, direction: 'forward' | 'backward'): ReadSlices<number>;
  /**
   * Whether a record follows the position in that direction (false once the cursor is closed or
   * its table or index is gone, instead of throwing).
   */
  hasMore(direction: 'forward' | 'backward'): ReadSlices<boolean>;
  /** Moves before the first record ('start') or after the last ('end'). */
  moveTo(end: 'start' | 'end'): void;
  close(): void;
}

/** An index's key as a caller of reads sees it (`indexKeyLayout`). */
export interface IndexKeyLayout {
  /** Per segment, in key order, the column its values are typed by: the table's column, or for a JSON property a column of the segment's type. */
  columns: ColumnDefinition[];
  /** The key's user-visible bytes (`find_set` length; KeyRange.prefix.byteLength counts in these). */
  byteLength: number;
}

export interface WriteOptions {
  /** Write inside an open transaction: invisible to others until commit. */
  transactionId?: string;
  /**
   * Internal writers may insert into integration tables (the rows are appended to the message
   * log). Replace, patch and delete are refused on them whatever this says.
   */
  allowIntegrationTables?: boolean;
}

/** A message as the broker hands it to storage (one row of an integration table). */
export interface MessageInput {
  createTs: string;                  // canonical timestamp
  payload: VariantValue;
  qos: number;
  retain: boolean;
  contentType: string | null;
  correlationData: Uint8Array | null;
  responseTopic: string | null;
  expirySeconds: number | null;
  userProperties: Array<{ key: string; value: string }> | null;
  payloadFormat: number | null;
  publisher: string | null;
}

export interface TopicInfo {
  topic: string;
  database: string;
  table: string;
  createdAt: string;
}

/** What `StoragePort.checkIntegrity` found (docs/operations.md "Backups and restores"). */
export interface IntegrityReport {
  /** No problem found. */
  ok: boolean;
  /** What is wrong, one line each (the first 50). */
  problems: string[];
  tables: number;
  records: number;
  indexEntries: number;
  topics: number;
  /** Messages of live topics in the log. */
  messages: number;
  /** Messages of deleted topics whose purge has not run yet (not an error). */
  unpurgedMessages: number;
}

/** How far a backup's copy has come: bytes written, and the most it can take (the store's size). */
export type BackupProgress = (copiedBytes: number, totalBytes: number) => void;

/** A point in an open transaction to roll back to (runSqlStatements: one per statement). Opaque to callers. */
export interface TransactionSavepoint {
  readonly operations: number;
  readonly undo: number;
}

export interface StoragePort {
  readonly dataDir: string;

  /**
   * The store's operation entries: `tap` records each write as the store accepts it, in the order
   * it applies them; `apply` applies recorded entries (to a fresh store: the same store again).
   */
  readonly operations: OperationsPort;

  /** Kernel catalogs. The name space is separate from databases and never listed as tables. */
  internal<V>(name: string): InternalStore<V>;

  // Databases
  createDatabase(name: string): Promise<void>;
  listDatabases(): string[];
  hasDatabase(name: string): boolean;
  deleteDatabase(name: string): Promise<void>;

  // Tables
  createTable(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition>;
  /** Throws DATABASE_NOT_FOUND / TABLE_NOT_FOUND. Cheap: served from memory. */
  getTable(database: string, table: string): TableDefinition;
  listTables(database: string): string[];
  /** All named tables go in one transaction: all or none. */
  deleteTables(database: string, tables: string[]): Promise<void>;
  addColumns(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition>;

  // Indexes (a unique index built on existing rows fails cleanly on duplicates)
  createIndex(database: string, table: string, index: string, definition: IndexInput): Promise<IndexDefinition>;
  deleteIndexes(database: string, table: string, indexes: string[]): Promise<void>;
  /** How an index of `table` keys its values (the store encodes keys; callers decode bounds by it). Pure: no I/O. */
  indexKeyLayout(table: TableDefinition, index: IndexDefinition): IndexKeyLayout;

  // Records: each call is one transaction, all-or-nothing.
  /**
   * Inserts rows decoded into the stored column order (PositionalRows: what plugins/data's
   * RecordDecoder produces); returns their record ids in order. Values decoded against the table's
   * current definition are not checked again (the decoder did); rows decoded against another
   * version (columns added since, or a new table of that name) are checked in full, by column
   * name. The store fills in defaults and automatic values and checks ids and unique keys.
   */
  insertValues(database: string, table: string, rows: PositionalRows, options?: WriteOptions): Promise<RecordId[]>;
  /**
   * Records by ID, in the order asked: per ID its values (laid out as StoredValues describes), or
   * undefined when absent.
   */
  getRecords(database: string, table: string, ids: RecordId[], transactionId?: string): Array<readonly unknown[] | undefined>;
  /** Replaces whole rows (columns missing from a row become null / default). Throws RECORD_NOT_FOUND. */
  replaceRecords(database: string, table: string, records: StoredRecord[], options?: WriteOptions): Promise<void>;
  /** Merges the supplied columns into each row. Throws RECORD_NOT_FOUND. */
  patchRecords(database: string, table: string, records: StoredRecord[], options?: WriteOptions): Promise<void>;
  /** Returns how many existed and were deleted; `mustExist` makes a missing ID a RECORD_NOT_FOUND. */
  deleteRecords(database: string, table: string, ids: RecordId[], options?: WriteOptions & { mustExist?: boolean }): Promise<number>;

  /**
   * Index or table read: streams through the range and finishes after skip+limit matches, with
   * the records as StoredValues. In slices (ReadSlices): a long read lets the event loop serve
   * others between them. The options are checked when called (TABLE_NOT_FOUND, INDEX_NOT_FOUND,
   * INVALID_QUERY, INVALID_PARAMETER, TRANSACTION_NOT_FOUND), before any slice.
   */
  readRecords(database: string, table: string, options: ReadOptions): ReadSlices<StoredValues[]>;
  countRecords(database: string, table: string): number;
  openCursor(database: string, table: string, options: ReadOptions): RecordCursor;

  // Transactions spanning several requests.
  beginTransaction(): string;
  commitTransaction(transactionId: string): Promise<void>;
  rollbackTransaction(transactionId: string): void;
  /** Marks where an open transaction stands (TRANSACTION_NOT_FOUND when it is not open). */
  savepointTransaction(transactionId: string): TransactionSavepoint;
  /** Undoes the transaction's writes made since `savepoint`; the transaction stays open. */
  rollbackTransactionTo(transactionId: string, savepoint: TransactionSavepoint): void;

  // Topics and their integration tables (docs/storage.md, "Integration tables").
  /**
   * The message log (./message-log-port.ts): one log of every topic's messages. A topic's
   * integration table is a read-only view over it, listed and read like any table.
   */
  readonly messageLog: MessageLogPort;

  /**
   * Writes a consistent, compacted copy of the store into `folder` (an empty or new folder) while
   * it keeps serving: the snapshot of the moment the copy starts, so every write acknowledged
   * before the call is in it. Resolves with the copy's size in bytes.
   */
  backup(folder: string, onProgress?: BackupProgress): Promise<number>;

  /** Checks every index against its table and every topic's index against the log. */
  checkIntegrity(): IntegrityReport;

  close(): Promise<void>;
}
