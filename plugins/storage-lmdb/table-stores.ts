/**
 * What reads (reads.ts, cursors.ts) need from a table: its definition, its records by id and in
 * id order, and its indexes' keys in a range. Two kinds of table provide it, both checked by the
 * compiler: an LMDB table (catalog.ts `TableState`, whose sub-databases `RecordsDb` and `IndexDb`
 * have these methods), and an integration table, a view over the message log
 * (topic-table-view.ts). Writes never reach a view: they need a `TableState`.
 *
 * Ranges follow lmdb-js's rules: `start` inclusive unless `exclusiveStart`, `end` exclusive,
 * `reverse` walks from `start` down towards `end`.
 */
import type { IndexDefinition, TableDefinition } from '../../kernel/storage/types';
import type { KeySegmentSpec } from './index-keys';

/** A range of record ids. */
export interface IdRangeOptions {
  start?: number;
  end?: number;
  reverse?: boolean;
  exclusiveStart?: boolean;
  limit?: number;
}

/** A range of index keys (encoded segments ‖ 8-byte record id). */
export interface KeyRangeOptions {
  start?: Buffer;
  end?: Buffer;
  reverse?: boolean;
  exclusiveStart?: boolean;
  limit?: number;
}

/** A table's records: key = record id, value = the stored values (StoredValues layout). */
export interface RecordReader {
  /** The record's stored values; undefined when absent. */
  get(id: number): unknown[] | undefined;
  /** Records in id order over a range. */
  getRange(options: IdRangeOptions): Iterable<{ key: number; value: unknown[] }>;
}

/** A secondary index's entries: keys only. */
export interface IndexReader {
  getKeys(options: KeyRangeOptions): Iterable<Buffer>;
}

export interface ReadableIndex {
  readonly def: IndexDefinition;
  readonly db: IndexReader;
  readonly specs: KeySegmentSpec[];
}

/** A table as reads see it. */
export interface ReadableTable {
  readonly def: TableDefinition;
  readonly records: RecordReader;
  /** Secondary indexes (`id_pk` is the records themselves). */
  readonly indexes: readonly ReadableIndex[];
  /** Deleted: reads of it throw TABLE_NOT_FOUND. */
  readonly dropped: boolean;
}
