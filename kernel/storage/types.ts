/**
 * The data model every storage plugin and every protocol shares.
 *
 * Values cross the storage port in their *canonical* form (below). Protocols never hand wire
 * values to storage: `lib/values/` decodes wire values (REST dates, hex binary, ...) into the
 * canonical form and encodes them back.
 */

export const COLUMN_TYPES = [
  'bit', 'tinyint', 'smallint', 'integer', 'bigint', 'real', 'float', 'money', 'number',
  'date', 'time', 'timestamp', 'char', 'varchar', 'lvarchar', 'binary', 'varbinary',
  'lvarbinary', 'json', 'variant',
] as const;
export type ColumnType = typeof COLUMN_TYPES[number];

/** How a column fills itself in. */
export type AutoValue = 'none' | 'incrementOnInsert' | 'timestampOnInsert' | 'timestampOnUpdate' | 'timestampOnUpdateAndInsert';

/** A variant keeps its value together with the value's type. */
export type VariantValue =
  | { type: 'json'; value: string }      // JSON text, whitespace minimized
  | { type: 'string'; value: string }
  | { type: 'binary'; value: Uint8Array }
  | { type: 'boolean'; value: boolean };

/**
 * Canonical values by column type:
 * - bit: boolean
 * - tinyint, smallint, integer: number (integer)
 * - bigint: number when it is a safe integer, else bigint
 * - real, float, money, number: number
 * - date: 'YYYY-MM-DD'; time: 'HH:MM:SS.mmm'; timestamp: 'YYYY-MM-DDTHH:MM:SS.mmm' (no zone)
 * - char, varchar, lvarchar: string
 * - binary, varbinary, lvarbinary: Uint8Array (binary is padded with 0x00 to its length)
 * - json: any JSON value (object, array, string, number, boolean)
 * - variant: VariantValue
 * - null for every type when the column is nullable
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type CanonicalValue = null | boolean | number | bigint | string | Uint8Array | JsonValue | VariantValue;

/** A record in canonical form, keyed by column name. */
export type Row = Record<string, CanonicalValue>;

/** The record ID: a positive safe integer. */
export type RecordId = number;

export interface ColumnDefinition {
  name: string;                 // stored lower-case; names are case-insensitive
  type: ColumnType;
  length: number | null;        // chars/bytes for char/varchar/binary; precision for number
  scale: number | null;         // number/money only
  nullable: boolean;
  primaryKey: number;           // 1 for the key column, 0 otherwise
  defaultValue: CanonicalValue; // null when none
  autoValue: AutoValue;
}

/** One segment of an index key, in key order. */
export interface IndexSegment {
  name: string;                 // column name
  ascending: boolean;
  key?: string;                 // JSON columns: property within the value (dotted path)
  type?: ColumnType;            // JSON columns: the property's type
  size?: number;                // JSON columns: bytes of the key segment
}

export interface IndexDefinition {
  name: string;
  unique: boolean;
  fields: IndexSegment[];
  /** true for the automatic `id_pk` index; REST does not list it. */
  automatic: boolean;
}

export interface TableDefinition {
  database: string;
  name: string;
  /** All columns, the record-ID column `id` first. */
  columns: ColumnDefinition[];
  /** true when the creator declared `id` itself (REST then shows it as a declared column). */
  idDeclared: boolean;
  indexes: IndexDefinition[];
  /** Set for integration tables: the topic whose messages the table holds. Read-only to REST/db. */
  topic: string | null;
  createdAt: string;            // ISO timestamp
}

/** A new column as a creator describes it; omitted properties take their defaults. */
export interface ColumnInput {
  name: string;
  type: ColumnType;
  length?: number | null;
  scale?: number | null;
  nullable?: boolean;
  primaryKey?: number;
  defaultValue?: CanonicalValue;
  autoValue?: AutoValue;
}

export interface IndexInput {
  unique?: boolean;
  fields: IndexSegment[];
}
