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

export function encodeRows(fields: ColumnDefinition[], rows: SqlValue[][], format: ValueFormat): EncodedRecord[] {
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    fields.forEach((field, i) => {
      const value = row[i];
      try {
        record[field.name] = value === null ? null : encodeValue(field, canonical(field.type, value), format);
      } catch {
        record[field.name] = plain(value, format);
      }
    });
    return record as EncodedRecord;
  });
}
