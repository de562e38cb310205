/**
 * Records and their index entries.
 *
 * A record is stored in its table's records sub-database: key = record id (a number), value =
 * a msgpack array of the values of columns 1..n (the id column 0 is the key itself). A stored
 * array shorter than the column list (columns added later) reads as the default of the missing
 * columns.
 *
 * The `apply*` functions run inside a write transaction. Each validates everything first and
 * only then writes, so a throw leaves the transaction untouched (all-or-nothing per call).
 */
import { EngineError } from '../../kernel/errors';
import type { StoredRecord } from '../../kernel/storage/storage-port';
import { rowOf as storedRow } from '../../kernel/storage/stored-values';
import type { CanonicalValue, ColumnDefinition, RecordId, Row } from '../../kernel/storage/types';
import { EMPTY_VALUE } from './environment';
import { ID_COLUMN, ID_INDEX, type IndexState, type TableState } from './catalog';
import { appendRecordId, encodeIndexKey, keyHasNull, prefixSuccessor, readRecordId } from './index-keys';

/** A validated row ready to store: `id` null means "assign the next one". */
export interface PreparedRow {
  id: number | null;
  values: unknown[];
}

const INTEGER_TYPES = new Set(['tinyint', 'smallint', 'integer', 'bigint']);

/** `now` (a canonical timestamp) in the canonical form of a date, time or timestamp column. */
function nowFor(column: ColumnDefinition, now: string): string {
  if (column.type === 'date') return now.slice(0, 10);
  if (column.type === 'time') return now.slice(11, 23);
  return now;
}

function invalid(column: ColumnDefinition, reason: string): EngineError {
  return new EngineError('INVALID_COLUMN_VALUE', { column: column.name, reason });
}

/** Cheap canonical-type check; returns the value to store. */
export function checkValue(column: ColumnDefinition, value: CanonicalValue): unknown {
  if (value === null || value === undefined) {
    if (!column.nullable) throw invalid(column, 'the column is not nullable');
    return null;
  }
  switch (column.type) {
    case 'bit':
      if (typeof value !== 'boolean') throw invalid(column, 'a boolean is required');
      return value;
    case 'tinyint': case 'smallint': case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(column, 'an integer is required');
      return value;
    case 'bigint':
      if (typeof value === 'bigint') {
        return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
      }
      if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(column, 'an integer is required');
      return value;
    case 'real': case 'float': case 'money': case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(column, 'a finite number is required');
      return value;
    case 'date': case 'time': case 'timestamp':
    case 'char': case 'varchar': case 'lvarchar':
      if (typeof value !== 'string') throw invalid(column, 'a string is required');
      return value;
    case 'binary': case 'varbinary': case 'lvarbinary':
      if (!(value instanceof Uint8Array)) throw invalid(column, 'bytes are required');
      return value;
    case 'json':
      if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') throw invalid(column, 'a JSON value is required');
      return value;
    case 'variant': {
      const v = value as { type?: unknown; value?: unknown };
      if (typeof v !== 'object' || (v.type !== 'json' && v.type !== 'string' && v.type !== 'binary' && v.type !== 'boolean')) {
        throw invalid(column, 'a variant value { type, value } is required');
      }
      return value;
    }
    default:
      return value;
  }
}

/** Reads a supplied record id (declared `id` column): a positive safe integer. */
export function checkRecordId(value: unknown): number {
  let id: number;
  if (typeof value === 'bigint') id = Number(value);
  else if (typeof value === 'number') id = value;
  else throw new EngineError('INVALID_COLUMN_VALUE', { column: ID_COLUMN, reason: 'the record ID must be a positive integer' });
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new EngineError('INVALID_COLUMN_VALUE', { column: ID_COLUMN, reason: 'the record ID must be a positive safe integer' });
  }
  return id;
}

function autoOnInsert(column: ColumnDefinition): boolean {
  return column.autoValue === 'timestampOnInsert' || column.autoValue === 'timestampOnUpdateAndInsert';
}

function autoOnUpdate(column: ColumnDefinition): boolean {
  return column.autoValue === 'timestampOnUpdate' || column.autoValue === 'timestampOnUpdateAndInsert';
}

function unknownColumns(ts: TableState, row: Row): void {
  for (const name of Object.keys(row)) {
    if (!ts.columnPos.has(name)) {
      throw new EngineError('COLUMN_NOT_FOUND', { column: name, table: ts.def.name });
    }
  }
}

/**
 * The value a caller's row gives a column; undefined when the row does not name the column.
 * Column names are data: a row without a `constructor` column must not read Object's.
 */
function ownValue(row: Row, name: string): CanonicalValue | undefined {
  return Object.hasOwn(row, name) ? row[name] : undefined;
}

/** Takes the `id` of a row (only meaningful when the table declares it). */
function suppliedId(ts: TableState, row: Row): number | null {
  const value = ownValue(row, ID_COLUMN);
  if (value === undefined || value === null) return null;
  if (!ts.def.idDeclared) {
    throw new EngineError('INVALID_COLUMN_VALUE', { column: ID_COLUMN, reason: 'the record ID is assigned by the server in this table' });
  }
  return checkRecordId(value);
}

/**
 * Validates an insert row (pure: no store access): its values in column order, `undefined` where
 * the row supplies none (completeInsertValues fills them in when the insert is applied).
 */
export function prepareInsertRow(ts: TableState, row: Row): PreparedRow {
  if (row === null || typeof row !== 'object') {
    throw new EngineError('INVALID_PARAMETER', { param: 'record', reason: 'a record must be an object' });
  }
  unknownColumns(ts, row);
  const columns = ts.def.columns;
  const values = new Array<unknown>(columns.length - 1);
  for (let i = 1; i < columns.length; i++) {
    const column = columns[i];
    const value = ownValue(row, column.name);
    if (value !== undefined) values[i - 1] = checkValue(column, value);
  }
  return { id: suppliedId(ts, row), values };
}

/** The stored array of a record → canonical row (with `id`): the port's one helper (kernel/storage/stored-values.ts). */
export function decodeRow(ts: TableState, id: number, stored: unknown[]): Row {
  return storedRow(ts.def, id, stored);
}

/** A row object from a prepared values array (for index keys). */
function rowOf(ts: TableState, id: number, values: unknown[]): Row {
  const columns = ts.def.columns;
  const row: Row = { id };
  for (let i = 1; i < columns.length; i++) row[columns[i].name] = (values[i - 1] ?? null) as CanonicalValue;
  return row;
}

/** true when a unique index already holds `key` for a record outside `ignore`. */
export function uniqueTaken(index: IndexState, key: Buffer, ignore: Set<number> | null): boolean {
  const end = prefixSuccessor(key);
  for (const k of index.db.getKeys(end ? { start: key, end } : { start: key })) {
    const id = readRecordId(k as Buffer);
    if (ignore !== null && ignore.has(id)) continue;
    return true;
  }
  return false;
}

function duplicate(ts: TableState, index: string): EngineError {
  return new EngineError('DUPLICATE_KEY', { index, table: ts.def.name });
}

function assertLive(ts: TableState): void {
  if (ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
}

/**
 * Completes a stored values array whose supplied entries were already validated for their
 * columns (plugins/data's RecordDecoder, `StoragePort.insertValues`): fills in the automatic or
 * default value of every entry left `undefined` (checking it like prepareInsertRow does) and
 * checks the supplied id. Pure: no store access. Mutates and returns `values`.
 */
export function completeInsertValues(ts: TableState, id: number | null, values: unknown[], now: string): unknown[] {
  const columns = ts.def.columns;
  const width = columns.length - 1;
  if (!Array.isArray(values) || values.length > width) {
    throw new EngineError('INVALID_PARAMETER', { param: 'record', reason: `a record has at most ${width} stored values` });
  }
  for (let i = 1; i < columns.length; i++) {
    if (values[i - 1] !== undefined) continue;
    const column = columns[i];
    const value = column.autoValue !== 'none' && autoOnInsert(column) ? nowFor(column, now) : column.defaultValue;
    values[i - 1] = checkValue(column, value ?? null);
  }
  if (id !== null) {
    if (!ts.def.idDeclared) {
      throw new EngineError('INVALID_COLUMN_VALUE', { column: ID_COLUMN, reason: 'the record ID is assigned by the server in this table' });
    }
    checkRecordId(id);
  }
  return values;
}

/** true when the records sub-database holds a key in [lo, hi]. */
function anyRecordIn(ts: TableState, lo: number, hi: number): boolean {
  for (const _key of ts.records.getKeys({ start: lo, end: hi + 1, limit: 1 })) return true;
  return false;
}

/**
 * Throws DUPLICATE_KEY (id_pk) when a supplied id repeats within the batch or is already stored;
 * returns the largest supplied id (0 when none). Ascending ids (the usual case: no repeats
 * possible) are checked with one range read when they are consecutive, else by walking the
 * stored keys of their span alongside them; other batches with one lookup per id.
 */
function checkSuppliedIds(ts: TableState, ids: ReadonlyArray<number | null>): number {
  const n = ids.length;
  let count = 0;
  let min = 0;
  let max = 0;
  let prev = 0;
  let ascending = true;
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (id === null) continue;
    if (count === 0) min = id;
    else if (id <= prev) ascending = false;
    prev = id;
    if (id > max) max = id;
    count++;
  }
  if (count === 0) return 0;
  const records = ts.records;
  if (!ascending) {
    const seen = new Set<number>();
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      if (id === null) continue;
      if (seen.has(id) || records.doesExist(id)) throw duplicate(ts, ID_INDEX);
      seen.add(id);
    }
    return max;
  }
  if (max - min + 1 === count) {
    if (anyRecordIn(ts, min, max)) throw duplicate(ts, ID_INDEX);
    return max;
  }
  // Sparse ascending ids: merge with the stored keys of [min, max], up to a bound on the walk.
  let j = 0;
  let visited = 0;
  const limit = 2 * count + 16;
  let walked = true;
  for (const key of records.getKeys({ start: min, end: max + 1 })) {
    const k = key as number;
    while (j < n && (ids[j] === null || (ids[j] as number) < k)) j++;
    if (j === n) break;
    if (ids[j] === k) throw duplicate(ts, ID_INDEX);
    if (++visited > limit) {
      walked = false;
      break;
    }
  }
  if (!walked) {
    // Every stored key up to ids[j] was compared: look the remaining ids up one by one.
    for (let i = j; i < n; i++) {
      const id = ids[i];
      if (id !== null && records.doesExist(id)) throw duplicate(ts, ID_INDEX);
    }
  }
  return max;
}

/**
 * Inserts completed rows given as parallel arrays: `given[i]` the supplied id or null (assign
 * one), `values[i]` the stored values. Inside a write transaction; called only when an entry is
 * applied (apply-entry.ts), which is what numbers records. Returns the ids in order.
 */
export function applyInsertValues(ts: TableState, given: ReadonlyArray<number | null>, values: unknown[][]): RecordId[] {
  assertLive(ts);
  const n = given.length;
  // Phase 1: ids.
  const maxDeclared = checkSuppliedIds(ts, given);
  let next = ts.nextId > maxDeclared ? ts.nextId : maxDeclared + 1;
  const ids = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const id = given[i];
    ids[i] = id === null ? next++ : id;
  }
  // Phase 2: index keys (with the record id appended) and unique checks (against the store and
  // within the batch). One scratch row serves every record: the key encoder does not keep it.
  const indexes = ts.indexes;
  let keys: Buffer[][] | null = null;
  if (indexes.length > 0) {
    keys = new Array<Buffer[]>(indexes.length);
    for (let x = 0; x < indexes.length; x++) keys[x] = new Array<Buffer>(n);
    const inBatch: Array<Set<string> | null> = indexes.map((index) => (index.def.unique && n > 1 ? new Set<string>() : null));
    const columns = ts.def.columns;
    const row: Row = {};
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      const stored = values[i];
      row[ID_COLUMN] = id;
      for (let c = 1; c < columns.length; c++) row[columns[c].name] = (stored[c - 1] ?? null) as CanonicalValue;
      for (let x = 0; x < indexes.length; x++) {
        const index = indexes[x];
        const full = Buffer.allocUnsafe(index.keyLength + 8);
        const key = encodeIndexKey(index.specs, row, full);
        writeRecordId(full, index.keyLength, id);
        keys[x][i] = full;
        if (index.def.unique && !keyHasNull(index.specs, key)) {
          const batch = inBatch[x];
          if (batch !== null) {
            const s = key.toString('latin1');
            if (batch.has(s)) throw duplicate(ts, index.def.name);
            batch.add(s);
          }
          if (uniqueTaken(index, key, null)) throw duplicate(ts, index.def.name);
        }
      }
    }
  }
  // Phase 3: write.
  const records = ts.records;
  for (let i = 0; i < n; i++) records.put(ids[i], values[i]);
  if (keys !== null) {
    for (let x = 0; x < indexes.length; x++) {
      const db = indexes[x].db;
      const k = keys[x];
      for (let i = 0; i < n; i++) db.put(k[i], EMPTY_VALUE);
    }
  }
  if (next > ts.nextId) ts.nextId = next;
  if (maxDeclared >= ts.nextId) ts.nextId = maxDeclared + 1;
  return ids;
}

/** Writes `id` into the 8 bytes at `at` (as appendRecordId does after a key). */
function writeRecordId(out: Buffer, at: number, id: number): void {
  const hi = Math.floor(id / 4294967296);
  out.writeUInt32BE(hi >>> 0, at);
  out.writeUInt32BE((id - hi * 4294967296) >>> 0, at + 4);
}

/** Stored values padded to the full column list (defaults for columns added later). */
function fullValues(ts: TableState, stored: unknown[]): unknown[] {
  const columns = ts.def.columns;
  const values = stored.slice();
  for (let i = stored.length + 1; i < columns.length; i++) values.push(columns[i].defaultValue ?? null);
  return values;
}

/** New values for a replace (whole row) or a patch (supplied columns only). Pure. */
export function mergeRow(ts: TableState, id: number, old: unknown[], row: Row, mode: 'replace' | 'patch', now: string): unknown[] {
  if (row === null || typeof row !== 'object') {
    throw new EngineError('INVALID_PARAMETER', { param: 'record', reason: 'a record must be an object' });
  }
  unknownColumns(ts, row);
  const rowId = ownValue(row, ID_COLUMN);
  if (rowId !== undefined && rowId !== null && Number(rowId) !== id) {
    throw new EngineError('INVALID_COLUMN_VALUE', { column: ID_COLUMN, reason: 'the record ID cannot be changed' });
  }
  const columns = ts.def.columns;
  const values = fullValues(ts, old);
  for (let i = 1; i < columns.length; i++) {
    const column = columns[i];
    let value = ownValue(row, column.name);
    if (value === undefined) {
      if (column.autoValue !== 'none' && autoOnUpdate(column)) value = nowFor(column, now);
      else if (mode === 'patch') continue;
      else if (column.autoValue === 'timestampOnInsert') continue;
      else value = column.defaultValue;
    }
    values[i - 1] = checkValue(column, value ?? null);
  }
  return values;
}

/**
 * Replaces or patches records. Inside a write transaction. Throws RECORD_NOT_FOUND.
 * The same id may appear more than once: the changes apply in order.
 */
export function applyUpdate(ts: TableState, records: StoredRecord[], mode: 'replace' | 'patch', now: string): void {
  assertLive(ts);
  const db = ts.records;
  const olds = new Map<number, unknown[]>();
  const news = new Map<number, unknown[]>();
  for (const record of records) {
    const id = record.id;
    let current = news.get(id);
    if (current === undefined) {
      const stored = typeof id === 'number' ? db.get(id) : undefined;
      if (stored === undefined) throw new EngineError('RECORD_NOT_FOUND', { id: String(id), table: ts.def.name });
      olds.set(id, stored);
      current = stored;
    }
    news.set(id, mergeRow(ts, id, current, record.row, mode, now));
  }
  const changes = diffIndexes(ts, olds, news);
  for (const [id, values] of news) db.put(id, values);
  writeIndexChanges(changes);
}

interface IndexChange {
  index: IndexState;
  remove: Buffer[];
  add: Buffer[];
}

/** Index entries to remove and add for changed records, with unique checks. Pure reads. */
function diffIndexes(ts: TableState, olds: Map<number, unknown[]>, news: Map<number, unknown[] | null>): IndexChange[] {
  const changes: IndexChange[] = [];
  if (ts.indexes.length === 0) return changes;
  const changing = new Set<number>(olds.keys());
  const oldRows = new Map<number, Row>();
  const newRows = new Map<number, Row>();
  for (const [id, values] of olds) oldRows.set(id, rowOf(ts, id, values));
  for (const [id, values] of news) if (values !== null) newRows.set(id, rowOf(ts, id, values));
  for (const index of ts.indexes) {
    const change: IndexChange = { index, remove: [], add: [] };
    const inBatch = new Set<string>();
    for (const [id, oldRow] of oldRows) {
      const oldKey = encodeIndexKey(index.specs, oldRow);
      const newRow = newRows.get(id);
      const newKey = newRow === undefined ? null : encodeIndexKey(index.specs, newRow);
      if (newKey !== null && index.def.unique && !keyHasNull(index.specs, newKey)) {
        const k = newKey.toString('latin1');
        if (inBatch.has(k) || uniqueTaken(index, newKey, changing)) throw duplicate(ts, index.def.name);
        inBatch.add(k);
      }
      if (newKey !== null && newKey.equals(oldKey)) continue;
      change.remove.push(appendRecordId(oldKey, id));
      if (newKey !== null) change.add.push(appendRecordId(newKey, id));
    }
    changes.push(change);
  }
  return changes;
}

function writeIndexChanges(changes: IndexChange[]): void {
  for (const change of changes) {
    const db = change.index.db;
    for (const key of change.remove) db.remove(key);
    for (const key of change.add) db.put(key, EMPTY_VALUE);
  }
}

/** Deletes records. Inside a write transaction. Returns how many existed. */
export function applyDelete(ts: TableState, ids: RecordId[], mustExist: boolean): number {
  assertLive(ts);
  const db = ts.records;
  const olds = new Map<number, unknown[]>();
  const news = new Map<number, unknown[] | null>();
  for (const id of ids) {
    if (olds.has(id)) continue;
    const stored = typeof id === 'number' ? db.get(id) : undefined;
    if (stored === undefined) {
      if (mustExist) throw new EngineError('RECORD_NOT_FOUND', { id: String(id), table: ts.def.name });
      continue;
    }
    olds.set(id, stored);
    news.set(id, null);
  }
  const changes = diffIndexes(ts, olds, news);
  for (const id of olds.keys()) db.remove(id);
  writeIndexChanges(changes);
  return olds.size;
}

/**
 * Writes the entries of a new index from the table's rows. Inside a write transaction. Returns
 * the error (after writing some entries) when a unique index meets a duplicate or a record's
 * value does not fit the key: the caller then drops the index sub-database in the same
 * transaction, so nothing is left behind. null when the index is complete.
 */
export function buildIndex(ts: TableState, index: IndexState): EngineError | null {
  const unique = index.def.unique;
  const db = index.db;
  for (const { key, value } of ts.records.getRange({})) {
    const id = key as number;
    let k: Buffer;
    try {
      k = encodeIndexKey(index.specs, decodeRow(ts, id, value as unknown[]));
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      return new EngineError(error.id, { ...error.details, reason: `record ${id}: ${String(error.details.reason)}` }, { cause: error });
    }
    if (unique && !keyHasNull(index.specs, k) && uniqueTaken(index, k, null)) return duplicate(ts, index.def.name);
    db.put(appendRecordId(k, id), EMPTY_VALUE);
  }
  return null;
}

/** Throws INVALID_COLUMN_VALUE when a value of the row does not fit the key of one of the table's indexes. */
export function checkIndexKeys(ts: TableState, id: number, values: unknown[]): void {
  if (ts.indexes.length === 0) return;
  const row = rowOf(ts, id, values);
  for (const index of ts.indexes) encodeIndexKey(index.specs, row);
}

export { INTEGER_TYPES };
