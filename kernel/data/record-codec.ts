/**
 * Wire records ⇄ canonical rows for one table and one value format.
 *
 * A decoder or encoder is built once per request (column lookup and format resolved up front),
 * then applied to every record with plain loops: no closures or lookups per value beyond one Map
 * get per supplied column.
 *
 * Rules (docs/commands.md):
 * - Keys are column names, case-insensitive. An unknown name is COLUMN_NOT_FOUND {column, table}.
 * - `id` may be supplied only when the table declares it (`idDeclared`); otherwise it is
 *   INVALID_COLUMN_VALUE {column: 'id'} ("record IDs are assigned by the server"). A null `id`
 *   on insert means "assign one". On replace/patch `id` may only repeat the record's own ID.
 * - insert and replace: a non-nullable column without default or auto value must be supplied.
 * - Errors about one record are re-thrown with the same error id and "record N: " (0-based
 *   position in the request) in front of the message, and `record: N` in the details.
 */
import { EngineError, isEngineError } from '../errors';
import type { CanonicalValue, ColumnDefinition, Row, TableDefinition } from '../storage/types';
import { ISO_FORMAT, decodeValue, encodeValue, type ValueFormat } from '../values/wire-format';
import type { EncodedRecord, FormatParam, WireRecord } from './command-types';

const FORMAT_KEYS = ['dateFormat', 'binaryFormat', 'variantFormat', 'numberFormat', 'stringFormat'] as const;

/** `param` merged over `base` (ISO_FORMAT unless told); undefined members keep the base value. */
export function resolveFormat(param: FormatParam | undefined, base: ValueFormat = ISO_FORMAT): ValueFormat {
  if (!param) return base;
  const format: Record<string, string> = { ...base };
  for (const key of FORMAT_KEYS) {
    const value = param[key];
    if (value !== undefined) format[key] = value;
  }
  return format as unknown as ValueFormat;
}

/** The same error, its message prefixed with `label` (e.g. "record 4999") and `record` in details. */
export function atPosition(error: unknown, label: string, position?: number): unknown {
  if (!isEngineError(error)) return error;
  const details = position === undefined ? error.details : { ...error.details, record: position };
  const wrapped = new EngineError(error.id, details, { cause: error });
  wrapped.message = `${label}: ${error.message}`;
  return wrapped;
}

export const ID = 'id';

function idNotDeclared(table: TableDefinition): EngineError {
  return new EngineError('INVALID_COLUMN_VALUE', {
    column: ID, table: table.name,
    reason: `record IDs are assigned by the server: table "${table.name}" does not declare an "id" column`,
  });
}

/** Columns by lower-case name. */
function columnMap(table: TableDefinition): Map<string, ColumnDefinition> {
  const map = new Map<string, ColumnDefinition>();
  for (const column of table.columns) map.set(column.name, column);
  return map;
}

/** Resolves a column name case-insensitively; throws COLUMN_NOT_FOUND. */
export function findColumn(table: TableDefinition, byName: Map<string, ColumnDefinition>, name: string): ColumnDefinition {
  const column = byName.get(name) ?? byName.get(name.toLowerCase());
  if (!column) throw new EngineError('COLUMN_NOT_FOUND', { column: name, table: table.name });
  return column;
}

export type DecodeMode = 'insert' | 'replace' | 'patch';

export class RecordDecoder {
  private readonly byName: Map<string, ColumnDefinition>;
  /** Columns that must be given a value on insert/replace. */
  private readonly required: ColumnDefinition[];
  private defaultOrder?: ColumnDefinition[];

  constructor(readonly table: TableDefinition, readonly format: ValueFormat, readonly mode: DecodeMode) {
    this.byName = columnMap(table);
    this.required = mode === 'patch' ? [] : table.columns.filter((c) =>
      c.name !== ID && !c.nullable && c.autoValue === 'none' && (c.defaultValue === null || c.defaultValue === undefined));
  }

  /** Columns named by `fieldNames` (array records); unknown → COLUMN_NOT_FOUND, repeated → INVALID_PARAMETER. */
  resolveFieldNames(fieldNames: readonly string[]): ColumnDefinition[] {
    const columns: ColumnDefinition[] = [];
    const seen = new Set<string>();
    for (const name of fieldNames) {
      const column = findColumn(this.table, this.byName, name);
      if (column.name === ID && !this.table.idDeclared) throw idNotDeclared(this.table);
      if (seen.has(column.name)) {
        throw new EngineError('INVALID_PARAMETER', { param: 'fieldNames', reason: `column "${column.name}" is named twice` });
      }
      seen.add(column.name);
      columns.push(column);
    }
    return columns;
  }

  /** Array records without fieldNames: the declared columns in table order (`id` only when declared). */
  defaultColumns(): ColumnDefinition[] {
    this.defaultOrder ??= this.table.columns.filter((c) => c.name !== ID || this.table.idDeclared);
    return this.defaultOrder;
  }

  /** Decodes every record (all before any write); errors carry the record's position. */
  decodeAll(records: readonly unknown[], fieldNames?: readonly string[]): Row[] {
    const named = fieldNames ? this.resolveFieldNames(fieldNames) : undefined;
    const rows = new Array<Row>(records.length);
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      try {
        if (Array.isArray(record)) rows[i] = this.decodeArray(record, named ?? this.defaultColumns());
        else if (named) {
          throw new EngineError('INVALID_PARAMETER', { param: `records[${i}]`, reason: 'with fieldNames every record must be an array of values' });
        } else if (record !== null && typeof record === 'object') rows[i] = this.decodeObject(record as WireRecord);
        else throw new EngineError('INVALID_PARAMETER', { param: `records[${i}]`, reason: 'expected an object or an array of values' });
      } catch (error) {
        throw atPosition(error, `record ${i}`, i);
      }
    }
    return rows;
  }

  /** One object record; `targetId` is the record being replaced or patched. */
  decodeObject(wire: WireRecord, targetId?: number): Row {
    const row: Row = {};
    for (const key in wire) {
      const column = this.byName.get(key) ?? findColumn(this.table, this.byName, key);
      if (column.name === ID) {
        this.decodeId(row, column, wire[key], targetId);
        continue;
      }
      row[column.name] = decodeValue(column, wire[key], this.format);
    }
    if (this.required.length > 0) this.checkRequired(row);
    return row;
  }

  /** One array record in the order of `columns`. */
  decodeArray(values: readonly unknown[], columns: readonly ColumnDefinition[]): Row {
    if (values.length !== columns.length) {
      throw new EngineError('INVALID_PARAMETER', {
        param: 'records', reason: `a record has ${values.length} values for ${columns.length} field names`,
      });
    }
    const row: Row = {};
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i];
      if (column.name === ID) this.decodeId(row, column, values[i], undefined);
      else row[column.name] = decodeValue(column, values[i], this.format);
    }
    if (this.required.length > 0) this.checkRequired(row);
    return row;
  }

  private decodeId(row: Row, column: ColumnDefinition, wire: unknown, targetId: number | undefined): void {
    if (!this.table.idDeclared) throw idNotDeclared(this.table);
    const value: CanonicalValue = decodeValue({ ...column, nullable: true }, wire, this.format);
    if (value === null) {
      if (this.mode === 'insert') return; // the server assigns one
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID, reason: 'the record ID cannot be null' });
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID, reason: 'a record ID is an integer from 1 to 2^53-1' });
    }
    if (this.mode === 'insert') {
      row[ID] = value;
      return;
    }
    if (value !== targetId) {
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID, reason: `the record ID cannot be changed (record ${String(targetId)})` });
    }
  }

  private checkRequired(row: Row): void {
    for (const column of this.required) {
      if (row[column.name] === undefined) {
        throw new EngineError('INVALID_COLUMN_VALUE', {
          column: column.name, reason: 'a value is required: the column is not nullable and has no default',
        });
      }
    }
  }
}

export class RecordEncoder {
  /** Columns of the returned values, table order (after `select`). */
  readonly fields: ColumnDefinition[];
  private readonly columns: ColumnDefinition[];
  private readonly names: string[];
  private readonly idAsString: boolean;

  constructor(readonly table: TableDefinition, select: readonly string[] | undefined, readonly format: ValueFormat) {
    if (select && select.length > 0) {
      const byName = columnMap(table);
      const wanted = new Set<string>();
      for (const name of select) wanted.add(findColumn(table, byName, name).name);
      this.fields = table.columns.filter((c) => wanted.has(c.name));
    } else {
      this.fields = table.columns.slice();
    }
    this.columns = this.fields.filter((c) => c.name !== ID);
    this.names = this.columns.map((c) => c.name);
    this.idAsString = format.numberFormat === 'string';
  }

  /** A record with `id` first, then the selected columns (null when unset). */
  encode(id: number, row: Row): EncodedRecord {
    const record: EncodedRecord = { id: this.idAsString ? String(id) : id };
    const { columns, names, format } = this;
    for (let i = 0; i < columns.length; i++) {
      const value = row[names[i]];
      record[names[i]] = value === undefined || value === null ? null : encodeValue(columns[i], value, format);
    }
    return record;
  }
}
