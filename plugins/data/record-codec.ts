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
import { EngineError, isEngineError } from '../../kernel/errors';
import type { PositionalRows } from '../../kernel/storage/storage-port';
import type { CanonicalValue, ColumnDefinition, Row, TableDefinition } from '../../kernel/storage/types';
import { ISO_FORMAT, decodeValue, encodeValue, type ValueFormat } from '../../lib/values/wire-format';
import type { EncodedRecord, FormatParam, WireRecord } from '../../lib/data/command-types';

const FORMAT_KEYS = ['dateFormat', 'binaryFormat', 'variantFormat', 'numberFormat', 'stringFormat'] as const;

/** `param` merged over `base` (ISO_FORMAT unless told); undefined members keep the base value. */
// Protocols pass the same format object on every request (REST's REST_FORMAT): resolve it once.
const resolvedOverIso = new WeakMap<FormatParam, ValueFormat>();

export function resolveFormat(param: FormatParam | undefined, base: ValueFormat = ISO_FORMAT): ValueFormat {
  if (!param) return base;
  if (base === ISO_FORMAT) {
    const known = resolvedOverIso.get(param);
    if (known !== undefined) return known;
  }
  const format: Record<string, string> = { ...base };
  for (const key of FORMAT_KEYS) {
    const value = param[key];
    if (value !== undefined) format[key] = value;
  }
  if (base === ISO_FORMAT) resolvedOverIso.set(param, format as unknown as ValueFormat);
  return format as unknown as ValueFormat;
}

const formatKeys = new WeakMap<ValueFormat, string>();

/** A string naming a value format (the cache key part of decoders and encoders). */
function formatKey(format: ValueFormat): string {
  let key = formatKeys.get(format);
  if (key === undefined) {
    key = `${format.dateFormat}|${format.binaryFormat}|${format.variantFormat}|${format.numberFormat}|${format.stringFormat}`;
    formatKeys.set(format, key);
  }
  return key;
}

/** Largest number of decoders or encoders kept per table definition. */
const CACHE_PER_TABLE = 32;

/**
 * Codec instances per table definition (by identity: definitions are frozen and replaced when
 * the table changes, so a stale one is never found) and key; a table's entries are dropped all
 * at once when they exceed CACHE_PER_TABLE.
 */
class CodecCache<T> {
  private readonly byTable = new WeakMap<TableDefinition, Map<string, T>>();

  get(table: TableDefinition, key: string, make: () => T): T {
    let map = this.byTable.get(table);
    if (map === undefined) {
      map = new Map();
      this.byTable.set(table, map);
    }
    let value = map.get(key);
    if (value === undefined) {
      if (map.size >= CACHE_PER_TABLE) map.clear();
      value = make();
      map.set(key, value);
    }
    return value;
  }
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

const decoders = new CodecCache<RecordDecoder>();

export class RecordDecoder {
  private readonly byName: Map<string, ColumnDefinition>;
  /** Position in `table.columns` by column name (the record-ID column is 0). */
  private readonly slots: Map<string, number>;
  /** Columns that must be given a value on insert/replace. */
  private readonly required: ColumnDefinition[];
  /** Their positions in `table.columns`. */
  private readonly requiredSlots: number[];
  /** The record-ID column made nullable (null means "assign one" on insert). */
  private readonly idColumn: ColumnDefinition | undefined;
  private defaultOrder?: ColumnDefinition[];

  /** A shared decoder for this table definition, format and mode (they hold no per-request state). */
  static for(table: TableDefinition, format: ValueFormat, mode: DecodeMode): RecordDecoder {
    return decoders.get(table, `${mode}|${formatKey(format)}`, () => new RecordDecoder(table, format, mode));
  }

  constructor(readonly table: TableDefinition, readonly format: ValueFormat, readonly mode: DecodeMode) {
    this.byName = columnMap(table);
    this.slots = new Map();
    table.columns.forEach((column, i) => this.slots.set(column.name, i));
    this.required = mode === 'patch' ? [] : table.columns.filter((c) =>
      c.name !== ID && !c.nullable && c.autoValue === 'none' && (c.defaultValue === null || c.defaultValue === undefined));
    this.requiredSlots = this.required.map((c) => this.slots.get(c.name)!);
    const id = this.byName.get(ID);
    this.idColumn = id === undefined ? undefined : { ...id, nullable: true };
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

  /**
   * Decodes every insert record straight into the stored column order (StoragePort.insertValues):
   * same checks and errors as decodeAll, without a row object per record.
   */
  decodeStored(records: readonly unknown[], fieldNames?: readonly string[]): PositionalRows {
    const named = fieldNames ? this.resolveFieldNames(fieldNames) : undefined;
    const n = records.length;
    const ids = new Array<number | null>(n);
    const values = new Array<unknown[]>(n);
    let arrayColumns: readonly ColumnDefinition[] | undefined;
    let arraySlots: number[] | undefined;
    const width = this.table.columns.length - 1;
    for (let i = 0; i < n; i++) {
      const record = records[i];
      const stored = new Array<unknown>(width);
      try {
        if (Array.isArray(record)) {
          if (arrayColumns === undefined) {
            arrayColumns = named ?? this.defaultColumns();
            arraySlots = arrayColumns.map((c) => this.slots.get(c.name)!);
          }
          ids[i] = this.decodeArrayInto(record, arrayColumns, arraySlots!, stored);
        } else if (named) {
          throw new EngineError('INVALID_PARAMETER', { param: `records[${i}]`, reason: 'with fieldNames every record must be an array of values' });
        } else if (record !== null && typeof record === 'object') {
          ids[i] = this.decodeObjectInto(record as WireRecord, stored);
        } else throw new EngineError('INVALID_PARAMETER', { param: `records[${i}]`, reason: 'expected an object or an array of values' });
        if (this.requiredSlots.length > 0) this.checkRequiredStored(stored);
      } catch (error) {
        throw atPosition(error, `record ${i}`, i);
      }
      values[i] = stored;
    }
    return { table: this.table, ids, values };
  }

  /** One array record into `stored` (positions `slots` of `columns`); returns the supplied id or null. */
  private decodeArrayInto(values: readonly unknown[], columns: readonly ColumnDefinition[], slots: readonly number[], stored: unknown[]): number | null {
    if (values.length !== columns.length) {
      throw new EngineError('INVALID_PARAMETER', {
        param: 'records', reason: `a record has ${values.length} values for ${columns.length} field names`,
      });
    }
    const format = this.format;
    let id: number | null = null;
    for (let i = 0; i < columns.length; i++) {
      const slot = slots[i];
      if (slot === 0) id = this.insertId(values[i]);
      else stored[slot - 1] = decodeValue(columns[i], values[i], format);
    }
    return id;
  }

  /** One object record into `stored`; returns the supplied id or null. */
  private decodeObjectInto(wire: WireRecord, stored: unknown[]): number | null {
    const columns = this.table.columns;
    const format = this.format;
    let id: number | null = null;
    for (const key in wire) {
      let slot = this.slots.get(key);
      if (slot === undefined) slot = this.slots.get(findColumn(this.table, this.byName, key).name)!;
      if (slot === 0) id = this.insertId(wire[key]);
      else stored[slot - 1] = decodeValue(columns[slot], wire[key], format);
    }
    return id;
  }

  /** A supplied record ID on insert: null (assign one) or a valid ID. */
  private insertId(wire: unknown): number | null {
    return this.idValue(wire, undefined);
  }

  private checkRequiredStored(stored: unknown[]): void {
    const slots = this.requiredSlots;
    for (let r = 0; r < slots.length; r++) {
      if (stored[slots[r] - 1] === undefined) {
        throw new EngineError('INVALID_COLUMN_VALUE', {
          column: this.required[r].name, reason: 'a value is required: the column is not nullable and has no default',
        });
      }
    }
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

  private decodeId(row: Row, _column: ColumnDefinition, wire: unknown, targetId: number | undefined): void {
    const value = this.idValue(wire, targetId);
    if (value !== null && this.mode === 'insert') row[ID] = value;
  }

  /** The record ID given on the wire: null on insert means "assign one"; on replace/patch it must repeat `targetId`. */
  private idValue(wire: unknown, targetId: number | undefined): number | null {
    if (!this.table.idDeclared || this.idColumn === undefined) throw idNotDeclared(this.table);
    const value: CanonicalValue = decodeValue(this.idColumn, wire, this.format);
    if (value === null) {
      if (this.mode === 'insert') return null; // the server assigns one
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID, reason: 'the record ID cannot be null' });
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID, reason: 'a record ID is an integer from 1 to 2^53-1' });
    }
    if (this.mode !== 'insert' && value !== targetId) {
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID, reason: `the record ID cannot be changed (record ${String(targetId)})` });
    }
    return value;
  }

  private checkRequired(row: Row): void {
    for (const column of this.required) {
      // Own properties only: column names are data (a missing `constructor` is missing).
      if (!Object.hasOwn(row, column.name) || row[column.name] === undefined) {
        throw new EngineError('INVALID_COLUMN_VALUE', {
          column: column.name, reason: 'a value is required: the column is not nullable and has no default',
        });
      }
    }
  }
}

/** What an encoder needs of a table and a `select`, computed once per (definition, select). */
interface EncoderLayout {
  fields: ColumnDefinition[];
  columns: ColumnDefinition[];
  names: string[];
  /** Position in `table.columns` of each of `columns` (for stored values arrays). */
  slots: number[];
}

const layouts = new CodecCache<EncoderLayout>();
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const encoders = new CodecCache<RecordEncoder>();

function selectKey(select: readonly string[] | undefined): string {
  return select && select.length > 0 ? select.join('\u0000') : '';
}

function encoderLayout(table: TableDefinition, select: readonly string[] | undefined): EncoderLayout {
  return layouts.get(table, selectKey(select), () => {
    let fields: ColumnDefinition[];
    if (select && select.length > 0) {
      const byName = columnMap(table);
      const wanted = new Set<string>();
      for (const name of select) wanted.add(findColumn(table, byName, name).name);
      fields = table.columns.filter((c) => wanted.has(c.name));
    } else {
      fields = table.columns.slice();
    }
    const columns = fields.filter((c) => c.name !== ID);
    return { fields, columns, names: columns.map((c) => c.name), slots: columns.map((c) => table.columns.indexOf(c)) };
  });
}

export class RecordEncoder {
  /** Columns of the returned values, table order (after `select`). Shared: do not modify. */
  readonly fields: ColumnDefinition[];
  private readonly columns: ColumnDefinition[];
  private readonly names: string[];
  private readonly slots: number[];
  private readonly idAsString: boolean;

  /** A shared encoder for this table definition, select and format (they hold no per-request state). */
  static for(table: TableDefinition, select: readonly string[] | undefined, format: ValueFormat): RecordEncoder {
    return encoders.get(table, `${selectKey(select)}|${formatKey(format)}`, () => new RecordEncoder(table, select, format));
  }

  constructor(readonly table: TableDefinition, select: readonly string[] | undefined, readonly format: ValueFormat) {
    const layout = encoderLayout(table, select);
    this.fields = layout.fields;
    this.columns = layout.columns;
    this.names = layout.names;
    this.slots = layout.slots;
    this.idAsString = format.numberFormat === 'string';
  }

  /**
   * A record with `id` first, then the selected columns (null when unset), from the values a
   * store keeps (StoredValues, kernel/storage/storage-port.ts: entry c - 1 is column c of
   * `table.columns`; entries beyond the array's end read as the column default).
   */
  encodeStored(id: number, stored: readonly unknown[]): EncodedRecord {
    const record: EncodedRecord = { id: this.idAsString ? String(id) : id };
    const { columns, names, slots, format } = this;
    const n = stored.length;
    for (let i = 0; i < columns.length; i++) {
      const at = slots[i] - 1;
      let value = (at < n ? stored[at] : columns[i].defaultValue) as CanonicalValue | undefined;
      if (typeof value === 'bigint' && value >= MIN_SAFE && value <= MAX_SAFE) value = Number(value);
      record[names[i]] = value === undefined || value === null ? null : encodeValue(columns[i], value, format);
    }
    return record;
  }
}
