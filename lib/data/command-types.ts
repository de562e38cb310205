/**
 * Params and results of the data commands (registered by plugins/data over the storage port),
 * shared by that plugin and the protocols that run the commands (REST, the db actions).
 *
 * Protocols send *wire* values and say how they are written with `format`; the commands decode
 * them into canonical values (lib/values) and encode results back in the same format, so a
 * protocol only reshapes results into its envelope.
 */
import type { ValueFormat } from '../values/wire-format';
import type { ColumnDefinition, IndexDefinition, TableDefinition } from '../../kernel/storage/types';

export type WireValue = unknown;
export type WireRecord = Record<string, WireValue>;
export type FormatParam = Partial<ValueFormat>;

interface InTable { database: string; table: string }

// database.create / database.delete / database.list
export interface DatabaseParams { database: string }
export interface DatabaseListResult { databases: string[] }

// table.create: `fields` are raw column objects ({name, type, length, scale, nullable, primaryKey,
// defaultValue, autoValue}); defaultValue is a wire value in `format`.
export interface TableCreateParams extends InTable { fields: unknown[]; format?: FormatParam }
export interface TableResult { table: TableDefinition }
// table.list
export interface TableListParams { database: string }
export interface TableListResult { tables: string[] }
// table.describe
export interface TableDescribeParams { database: string; tables: string[] }
export interface TableDescribeResult { tables: TableDefinition[] }
// table.delete (all or none)
export interface TableDeleteParams { database: string; tables: string[] }
// table.alter
export interface TableAlterParams extends InTable { addFields: unknown[]; format?: FormatParam }

// index.create
export interface IndexCreateParams extends InTable { index: string; unique?: boolean; fields: unknown[] }
export interface IndexResult { index: IndexDefinition }
// index.list: every index, the automatic `id_pk` included (REST hides automatic ones)
export interface IndexListParams extends InTable {}
export interface IndexListResult { indexes: IndexDefinition[] }
// index.get
export interface IndexGetParams extends InTable { index: string }
// index.delete
export interface IndexDeleteParams extends InTable { indexes: string[] }

/**
 * record.insert: `records` are objects keyed by column name, or arrays in `fieldNames` order.
 * A record may carry `id` only when the table declares it. All or nothing.
 */
export interface RecordInsertParams extends InTable {
  records: WireRecord[] | WireValue[][];
  fieldNames?: string[];
  format?: FormatParam;
  transactionId?: string;
}
export interface RecordInsertResult { ids: number[] }

/** A record in results: encoded values keyed by column name, `id` included. */
export type EncodedRecord = Record<string, WireValue> & { id: number | string };

export interface RecordsResult {
  /** Columns of the returned values, in table order (after `select`). */
  fields: ColumnDefinition[];
  records: EncodedRecord[];
  /** Whether the table declares `id` itself (REST shows it as a column only then). */
  idDeclared: boolean;
}

// record.get: results in the order of `ids`; a missing id is `null` unless mustExist (RECORD_NOT_FOUND)
export interface RecordGetParams extends InTable {
  ids: number[];
  select?: string[];
  mustExist?: boolean;
  format?: FormatParam;
  transactionId?: string;
}
export interface RecordGetResult { fields: ColumnDefinition[]; records: Array<EncodedRecord | null>; idDeclared: boolean }

// record.replace (omitted columns → null/default) and record.patch (merge): by id
export interface RecordWriteParams extends InTable {
  records: Array<{ id: number; values: WireRecord }>;
  format?: FormatParam;
  transactionId?: string;
}

// record.delete
export interface RecordDeleteParams extends InTable { ids: number[]; mustExist?: boolean; transactionId?: string }
export interface RecordDeleteResult { deleted: number }

/** A bound on the leading segments of an index, values as wire values of the segment columns. */
export interface WireBound { values: WireValue[]; inclusive: boolean }

/**
 * record.find: read through an index (or record-ID order without `index`).
 * `lower`/`upper` bound the leading segments in value order, whatever the index's direction
 * (query-plan.ts); `prefix` is advanced_find find_set.
 */
export interface RecordFindParams extends InTable {
  index?: string;
  lower?: WireBound;
  upper?: WireBound;
  prefix?: { values: WireValue[]; byteLength?: number };
  filter?: string;
  reverse?: boolean;
  skip?: number;
  limit: number;
  select?: string[];
  format?: FormatParam;
  transactionId?: string;
  /** Also count every record of the table (actions' totalRecordCount). */
  countTotal?: boolean;
}
export interface RecordFindResult extends RecordsResult {
  /** true when more matching records follow the returned ones. */
  more: boolean;
  total?: number;
}

// cursor.open: like record.find without limit; cursor.fetch; cursor.close. Idle cursors expire.
export interface CursorOpenParams extends Omit<RecordFindParams, 'limit' | 'skip'> { skip?: number }
export interface CursorOpenResult { cursorId: string; fields: ColumnDefinition[] }
export interface CursorFetchParams {
  cursorId: string;
  count: number;
  direction?: 'forward' | 'backward';
  /** Move first: before the first record ('start'), after the last ('end'); default: stay. */
  from?: 'current' | 'start' | 'end';
  skip?: number;
  format?: FormatParam;
}
/** `more`: another record follows in the direction of the fetch. */
export interface CursorFetchResult extends RecordsResult { more: boolean }
export interface CursorCloseParams { cursorId: string }

// transaction.begin / commit / rollback (owned by the session or client that began it)
export interface TransactionResult { transactionId: string }
export interface TransactionParams { transactionId: string }
