/**
 * Values between the engine's columns and SQLite (docs/sql.md, "Values"). Reads arrive as the
 * store keeps them (canonical values, kernel/storage/types.ts); SQLite sees integers, reals,
 * text and blobs: bits as 0/1, JSON as its text, a variant as its value, timestamps with a space
 * between date and time (the SQL form, what SQLite's date functions return). Writes go to the
 * data commands as wire values in the ISO format (timestamps with a `T`, binary in hex).
 */
import type { CanonicalValue, ColumnDefinition, ColumnType, VariantValue } from '../../kernel/storage/types';
import type { SqlValue } from './sql-protocol';

const INTEGER = new Set<ColumnType>(['tinyint', 'smallint', 'integer', 'bigint']);
const REAL = new Set<ColumnType>(['real', 'float', 'money', 'number']);
const TEXT = new Set<ColumnType>(['char', 'varchar', 'lvarchar']);
const BINARY = new Set<ColumnType>(['binary', 'varbinary', 'lvarbinary']);

/** A stored (canonical) value of a column as SQLite sees it. */
export function storedToSql(column: ColumnDefinition, value: CanonicalValue): SqlValue {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case 'bit': return value === true ? 1 : 0;
    case 'timestamp': return typeof value === 'string' ? value.replace('T', ' ') : null;
    case 'json': return JSON.stringify(value);
    case 'variant': {
      const variant = value as VariantValue;
      if (variant.type === 'boolean') return variant.value ? 1 : 0;
      return variant.value;
    }
    default:
      if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' || value instanceof Uint8Array) return value;
      return JSON.stringify(value);
  }
}

/** A value SQLite hands to a write, as the wire value (ISO format) the data commands decode. */
export function fromSql(column: ColumnDefinition, value: SqlValue): unknown {
  if (value === null) return null;
  const type = column.type;
  if (type === 'bit') return typeof value === 'string' ? value === '1' || value.toLowerCase() === 'true' : Number(value) !== 0;
  if (INTEGER.has(type)) {
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    return typeof value === 'string' && /^-?[0-9]+$/.test(value.trim()) ? Number(value) : value;
  }
  if (REAL.has(type)) return typeof value === 'bigint' ? Number(value) : typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  if (type === 'timestamp' && typeof value === 'string') return value.replace(' ', 'T');
  if (TEXT.has(type) || type === 'date' || type === 'time') return value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : String(value);
  if (BINARY.has(type)) return value instanceof Uint8Array ? Buffer.from(value).toString('hex') : value;
  if (type === 'json' || type === 'variant') {
    if (typeof value !== 'string') return typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? Buffer.from(value).toString('hex') : value;
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\.\d{3}$/;
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;
const TIME_TEXT = /^\d{2}:\d{2}:\d{2}\.\d{3}$/;

/**
 * A comparison value as an index bound on `column`, only when SQLite's own comparison of the
 * column with that value orders exactly as the index does (else undefined: the read is not
 * narrowed and SQLite filters, which is always correct).
 */
export function boundValue(column: ColumnDefinition, value: SqlValue): unknown {
  if (value === null) return undefined;
  const type = column.type;
  if (INTEGER.has(type)) {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value;
    return undefined;
  }
  if (type === 'real' || type === 'float') return typeof value === 'number' ? value : undefined;
  if (TEXT.has(type)) return typeof value === 'string' && column.type !== 'char' ? value : undefined;
  if (type === 'timestamp') return typeof value === 'string' && TIMESTAMP_TEXT.test(value) ? value.replace(' ', 'T') : undefined;
  if (type === 'date') return typeof value === 'string' && DATE_TEXT.test(value) ? value : undefined;
  if (type === 'time') return typeof value === 'string' && TIME_TEXT.test(value) ? value : undefined;
  return undefined;
}

/** The SQL type a column is declared with in its virtual table (SQLite reads the affinity from it). */
export function declaredType(column: ColumnDefinition): string {
  const name = column.type.toUpperCase();
  if (column.type === 'number' || column.type === 'money') {
    return column.length !== null ? `${name}(${column.length},${column.scale ?? 0})` : name;
  }
  if (column.length !== null && (TEXT.has(column.type) || BINARY.has(column.type))) return `${name}(${column.length})`;
  return name;
}

/** A SQL type name as an engine column type (CREATE TABLE), with length and scale. */
export function columnTypeOf(declared: string): { type: ColumnType; length?: number; scale?: number } | undefined {
  const match = /^\s*([A-Za-z ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*(?:IDENTITY.*)?$/i.exec(declared);
  if (!match) return undefined;
  const word = match[1].trim().toLowerCase().replace(/\s+/g, ' ');
  const length = match[2] !== undefined ? Number(match[2]) : undefined;
  const scale = match[3] !== undefined ? Number(match[3]) : undefined;
  const SYNONYMS: Record<string, ColumnType> = {
    bit: 'bit', boolean: 'bit', bool: 'bit',
    tinyint: 'tinyint', smallint: 'smallint', int: 'integer', integer: 'integer', bigint: 'bigint',
    real: 'real', float: 'float', double: 'float', 'double precision': 'float',
    money: 'money', number: 'number', numeric: 'number', decimal: 'number', dec: 'number',
    date: 'date', time: 'time', timestamp: 'timestamp', datetime: 'timestamp',
    char: 'char', character: 'char', nchar: 'char', varchar: 'varchar', 'character varying': 'varchar', nvarchar: 'varchar',
    lvarchar: 'lvarchar', text: 'lvarchar', clob: 'lvarchar', string: 'lvarchar',
    binary: 'binary', varbinary: 'varbinary', lvarbinary: 'lvarbinary', blob: 'lvarbinary',
    json: 'json', variant: 'variant',
  };
  const type = SYNONYMS[word];
  if (type === undefined) return undefined;
  const out: { type: ColumnType; length?: number; scale?: number } = { type };
  if (length !== undefined) out.length = length;
  if (scale !== undefined) out.scale = scale;
  if (type === 'number' && length === undefined) { out.length = 32; out.scale = scale ?? 0; }
  if ((type === 'varchar' || type === 'char' || type === 'binary' || type === 'varbinary') && length === undefined) {
    out.length = type === 'char' || type === 'binary' ? 1 : 255;
  }
  return out;
}
