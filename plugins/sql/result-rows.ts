/**
 * A SQL result as the records of the getRecords actions: columns as ColumnDefinitions (fields
 * metadata), rows as encoded records in the caller's value format (lib/values/wire-format.ts).
 */
import type { CanonicalValue, ColumnDefinition, ColumnType } from '../../kernel/storage/types';
import type { EncodedRecord } from '../../lib/data/command-types';
import { bytesToWire, encodeValue, type ValueFormat } from '../../lib/values/wire-format';
import type { ResultColumn, SqlValue } from './sql-protocol';

/** Result columns as column definitions; repeated names get `_2`, `_3`… so objects keep every value. */
export function resultFields(columns: ResultColumn[]): ColumnDefinition[] {
  const seen = new Map<string, number>();
  return columns.map((column) => {
    const count = (seen.get(column.name) ?? 0) + 1;
    seen.set(column.name, count);
    return {
      name: count === 1 ? column.name : `${column.name}_${count}`,
      type: column.type as ColumnType,
      length: column.length,
      scale: column.scale,
      nullable: column.nullable,
      primaryKey: 0,
      defaultValue: null,
      autoValue: 'none',
    };
  });
}

function canonical(type: ColumnType, value: SqlValue): CanonicalValue {
  if (value === null) return null;
  switch (type) {
    case 'bit': return Number(value) !== 0;
    case 'timestamp': return typeof value === 'string' ? value.replace(' ', 'T') : value;
    case 'json':
      return typeof value === 'string' ? JSON.parse(value) : value;
    case 'variant':
      if (typeof value === 'string') {
        try {
          JSON.parse(value);
          return { type: 'json', value };
        } catch {
          return { type: 'string', value };
        }
      }
      if (value instanceof Uint8Array) return { type: 'binary', value };
      return { type: 'json', value: String(value) };
    default:
      return value;
  }
}

/** A value as it is, when it does not fit its column's type (an expression whose rows differ in type). */
function plain(value: SqlValue, format: ValueFormat): unknown {
  if (value === null) return null;
  if (value instanceof Uint8Array) return bytesToWire(value, format.binaryFormat);
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number' && format.numberFormat === 'string') return String(value);
  return value;
}

/**
 * Rows encoded as the caller's format, each an array of values in field order: a worker sends
 * these (an array crosses to the main thread in about half the time an object with its keys does).
 * `inPlace`: the rows are the caller's own and are encoded where they are (no second array per row).
 */
export function encodeRowValues(fields: ColumnDefinition[], rows: SqlValue[][], format: ValueFormat, inPlace = false): unknown[][] {
  // Arrays grown by push (or filled in order) stay packed: V8 clones a holey one (new Array(n)) about three times slower.
  const count = fields.length;
  const encoded: unknown[][] = inPlace ? rows : [];
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const values: unknown[] = inPlace ? row : [];
    for (let i = 0; i < count; i++) {
      const value = row[i];
      let out: unknown = null;
      if (value !== null && value !== undefined) {
        const field = fields[i];
        try {
          out = encodeValue(field, canonical(field.type, value), format);
        } catch {
          out = plain(value, format);
        }
      }
      values[i] = out;
    }
    if (!inPlace) encoded.push(values);
  }
  return encoded;
}

/** Encoded value arrays (encodeRowValues) as records keyed by field name. */
export function recordsOf(fields: ColumnDefinition[], encoded: unknown[][]): EncodedRecord[] {
  const names = fields.map((field) => field.name);
  const records = new Array<EncodedRecord>(encoded.length);
  for (let r = 0; r < encoded.length; r++) {
    const values = encoded[r];
    const record: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) record[names[i]] = values[i];
    records[r] = record as EncodedRecord;
  }
  return records;
}

export function encodeRows(fields: ColumnDefinition[], rows: SqlValue[][], format: ValueFormat): EncodedRecord[] {
  return recordsOf(fields, encodeRowValues(fields, rows, format));
}
