/**
 * Index keys: fixed-width byte strings whose memcmp order is the index order.
 *
 * Layout per segment: one flag byte (0x00 null, 0x01 value) then `width` data bytes. A descending
 * segment has every byte (flag included) inverted, so nulls sort first in ascending segments and
 * last in descending ones. The user-visible layout (`find_set.length`) is the concatenated data
 * bytes without the flag bytes. Data encodings: see docs/queries.md.
 *
 * Pure module, no I/O.
 */
import { EngineError } from '../../kernel/errors';
import type {
  CanonicalValue, ColumnDefinition, ColumnType, IndexSegment, Row, TableDefinition,
} from '../../kernel/storage/types';
import { fixedKeyWidth, parseColumnType } from './values/column-types';
import { dateToDays, parseDate, parseTime, parseTimestamp, timeToMs, timestampToMs } from './values/wire-format';

/** Largest data width of one segment. */
export const MAX_SEGMENT_WIDTH = 1024;
/** Largest full key (flags + data); the 8-byte record ID suffix of non-unique indexes comes on top (LMDB allows 1978 bytes). */
export const MAX_KEY_LENGTH = 1900;

export interface KeySegmentSpec {
  /** The segment as defined, normalized: lower-case name, `ascending` set. */
  segment: IndexSegment;
  /** The table column the segment reads. */
  sourceColumn: ColumnDefinition;
  /** The effective typed column: the source column, or for a JSON property a synthetic column (type = segment.type, length = segment.size). */
  keyColumn: ColumnDefinition;
  /** Data bytes, excluding the flag byte. */
  width: number;
  /** Offset of this segment's flag byte in the full key. */
  offset: number;
  /** JSON property path (segment.key split at dots); undefined for plain columns. */
  path?: string[];
}

const NOT_INDEXABLE: ReadonlySet<ColumnType> = new Set<ColumnType>(['lvarbinary', 'variant', 'json']);
const SIZED_TYPES: ReadonlySet<ColumnType> = new Set<ColumnType>(['char', 'varchar', 'lvarchar', 'binary', 'varbinary']);

function badIndex(reason: string): EngineError {
  return new EngineError('INVALID_INDEX_DEFINITION', { reason });
}

function checkSize(size: unknown, what: string): number {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_SEGMENT_WIDTH) {
    throw badIndex(`${what}: "size" must be an integer from 1 to ${MAX_SEGMENT_WIDTH}`);
  }
  return size;
}

/** Validates index segments against the table and computes their key layout. */
export function resolveKeySegments(table: TableDefinition, fields: IndexSegment[]): KeySegmentSpec[] {
  if (!Array.isArray(fields) || fields.length === 0) throw badIndex('"fields" must list at least one segment');
  const specs: KeySegmentSpec[] = [];
  let offset = 0;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as unknown;
    if (field === null || typeof field !== 'object' || typeof (field as IndexSegment).name !== 'string') {
      throw badIndex(`segment ${i + 1} must be an object with a "name"`);
    }
    const raw = field as IndexSegment;
    const name = raw.name.toLowerCase();
    const what = `segment ${i + 1} ("${name}")`;
    const column = table.columns.find((c) => c.name === name);
    if (column === undefined) throw new EngineError('COLUMN_NOT_FOUND', { column: raw.name, table: table.name });
    if (raw.ascending !== undefined && raw.ascending !== null && typeof raw.ascending !== 'boolean') {
      throw badIndex(`${what}: "ascending" must be true or false`);
    }
    const ascending = raw.ascending !== false;
    const hasKey = raw.key !== undefined && raw.key !== null;
    const segment: IndexSegment = { name, ascending };
    let keyColumn: ColumnDefinition = column;
    let width: number;
    let path: string[] | undefined;

    if (column.type === 'json') {
      if (!hasKey || typeof raw.key !== 'string' || raw.key === '') {
        throw badIndex(`${what}: a segment on a JSON column needs "key" (the property path) and "type"`);
      }
      path = raw.key.split('.');
      if (path.some((part) => part === '')) throw badIndex(`${what}: invalid property path "${raw.key}"`);
      const type = parseColumnType(raw.type);
      if (type === null) throw badIndex(`${what}: a segment on a JSON column needs a valid "type"`);
      if (NOT_INDEXABLE.has(type)) throw badIndex(`${what}: a JSON property cannot be indexed as ${type}`);
      let length: number | null = null;
      if (SIZED_TYPES.has(type)) {
        if (raw.size === undefined || raw.size === null) throw badIndex(`${what}: a ${type} JSON property needs "size" (key bytes)`);
        length = checkSize(raw.size, what);
      }
      segment.key = raw.key;
      segment.type = type;
      if (length !== null) segment.size = length;
      keyColumn = {
        name: `${name}.${raw.key}`, type, length, scale: null, nullable: true, primaryKey: 0,
        defaultValue: null, autoValue: 'none',
      };
      width = fixedKeyWidth(type, length)!;
    } else {
      if (hasKey) throw badIndex(`${what}: "key" is only allowed on JSON columns, and "${name}" is ${column.type}`);
      if (NOT_INDEXABLE.has(column.type)) throw badIndex(`${what}: columns of type ${column.type} cannot be indexed`);
      let length = column.length;
      if (SIZED_TYPES.has(column.type) && raw.size !== undefined && raw.size !== null) {
        // A size on a string/binary column makes a prefix key of that many bytes.
        length = checkSize(raw.size, what);
        segment.size = length;
      }
      const natural = fixedKeyWidth(column.type, length);
      if (natural === null) throw badIndex(`${what}: columns of type ${column.type} cannot be indexed`);
      if (natural > MAX_SEGMENT_WIDTH) {
        throw badIndex(`${what}: ${column.type}(${natural}) is too long for an index key (at most ${MAX_SEGMENT_WIDTH} bytes); give the segment a "size"`);
      }
      width = natural;
      if (length !== column.length) keyColumn = { ...column, length };
    }
    specs.push({ segment, sourceColumn: column, keyColumn, width, offset, ...(path ? { path } : {}) });
    offset += 1 + width;
  }
  if (offset > MAX_KEY_LENGTH) throw badIndex(`the key is ${offset} bytes long; at most ${MAX_KEY_LENGTH} are allowed`);
  return specs;
}

/** Bytes of a full key (flags and data, no record ID). */
export function keyLength(specs: KeySegmentSpec[]): number {
  if (specs.length === 0) return 0;
  const last = specs[specs.length - 1];
  return last.offset + 1 + last.width;
}

// ---------------------------------------------------------------------------------------------
// Value encoders

let scratch = Buffer.allocUnsafe(4096);

function writeSignedBig(buf: Buffer, at: number, value: number | bigint): void {
  if (typeof value === 'bigint') {
    buf.writeBigInt64BE(value, at);
    buf[at] ^= 0x80;
    return;
  }
  const hi = Math.floor(value / 4294967296);
  const lo = value - hi * 4294967296;
  buf.writeUInt32BE(((hi | 0) ^ 0x80000000) >>> 0, at);
  buf.writeUInt32BE(lo >>> 0, at + 4);
}

function writeFloat(buf: Buffer, at: number, value: number, width: 4 | 8): void {
  if (value === 0 || Number.isNaN(value)) value = 0; // -0 and +0 are one key
  if (width === 4) buf.writeFloatBE(value, at);
  else buf.writeDoubleBE(value, at);
  if (buf[at] & 0x80) {
    for (let i = at; i < at + width; i++) buf[i] = ~buf[i] & 0xff;
  } else {
    buf[at] ^= 0x80;
  }
}

function writeString(buf: Buffer, at: number, width: number, text: string): void {
  let written: number;
  if (text.length * 3 <= width || Buffer.byteLength(text, 'utf8') <= width) {
    written = buf.write(text, at, width, 'utf8');
  } else {
    // Longer than the key: cut at exactly `width` bytes (even inside a character), which keeps order.
    const needed = text.length * 3;
    if (scratch.length < needed) scratch = Buffer.allocUnsafe(Math.max(needed, scratch.length * 2));
    scratch.write(text, 0, 'utf8');
    scratch.copy(buf, at, 0, width);
    written = width;
  }
  if (written < width) buf.fill(0, at + written, at + width);
}

function writeBytes(buf: Buffer, at: number, width: number, bytes: Uint8Array): void {
  const n = bytes.length < width ? bytes.length : width;
  buf.set(n === bytes.length ? bytes : bytes.subarray(0, n), at);
  if (n < width) buf.fill(0, at + n, at + width);
}

/** Writes the data bytes of a non-null canonical value; false when the value does not fit the type. */
function writeData(buf: Buffer, at: number, spec: KeySegmentSpec, value: CanonicalValue): boolean {
  switch (spec.keyColumn.type) {
    case 'bit':
      buf[at] = value === true || value === 1 ? 1 : 0;
      return true;
    case 'tinyint':
      buf[at] = ((value as number) ^ 0x80) & 0xff;
      return true;
    case 'smallint':
      buf.writeUInt16BE(((value as number) ^ 0x8000) & 0xffff, at);
      return true;
    case 'integer':
      buf.writeUInt32BE(((value as number) ^ 0x80000000) >>> 0, at);
      return true;
    case 'bigint':
      writeSignedBig(buf, at, value as number | bigint);
      return true;
    case 'real':
      writeFloat(buf, at, Number(value), 4);
      return true;
    case 'float': case 'money': case 'number':
      writeFloat(buf, at, Number(value), 8);
      return true;
    case 'date':
      buf.writeUInt32BE((dateToDays(value as string) ^ 0x80000000) >>> 0, at);
      return true;
    case 'time':
      buf.writeUInt32BE(timeToMs(value as string), at);
      return true;
    case 'timestamp':
      writeSignedBig(buf, at, timestampToMs(value as string));
      return true;
    case 'char': case 'varchar': case 'lvarchar':
      writeString(buf, at, spec.width, value as string);
      return true;
    case 'binary': case 'varbinary':
      writeBytes(buf, at, spec.width, value as Uint8Array);
      return true;
    default:
      return false;
  }
}

const INT_BOUNDS: Partial<Record<ColumnType, [number, number]>> = {
  tinyint: [-128, 127], smallint: [-32768, 32767], integer: [-2147483648, 2147483647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** A JSON property value converted to the segment's type; null when it cannot be. */
export function coerceJsonProperty(value: unknown, type: ColumnType): CanonicalValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'bit':
      if (typeof value === 'boolean') return value;
      if (value === 0 || value === 1) return value === 1;
      return null;
    case 'tinyint': case 'smallint': case 'integer': case 'bigint': {
      if (type === 'bigint' && typeof value === 'bigint') return value;
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(n)) return null;
      const [min, max] = INT_BOUNDS[type]!;
      const t = Math.trunc(n);
      return t < min ? min : t > max ? max : t;
    }
    case 'real': case 'float': case 'money': case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      return Number.isFinite(n) ? n : null;
    }
    case 'date': return typeof value === 'string' ? parseDate(value) : null;
    case 'time': return typeof value === 'string' ? parseTime(value) : null;
    case 'timestamp': return typeof value === 'string' ? parseTimestamp(value) : null;
    case 'char': case 'varchar': case 'lvarchar':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return null;
    case 'binary': case 'varbinary':
      if (value instanceof Uint8Array) return value;
      return typeof value === 'string' && HEX.test(value) ? Buffer.from(value, 'hex') : null;
    default:
      return null;
  }
}

function readPath(value: CanonicalValue, path: string[]): unknown {
  let current: unknown = value;
  for (let i = 0; i < path.length; i++) {
    if (current === null || typeof current !== 'object' || current instanceof Uint8Array) return undefined;
    current = (current as Record<string, unknown>)[path[i]];
  }
  return current;
}

function writeSegment(buf: Buffer, spec: KeySegmentSpec, value: CanonicalValue): void {
  const at = spec.offset;
  const end = at + 1 + spec.width;
  if (value === null || value === undefined || !writeData(buf, at + 1, spec, value)) {
    buf.fill(0, at, end);
  } else {
    buf[at] = 1;
  }
  if (spec.segment.ascending === false) {
    for (let i = at; i < end; i++) buf[i] = ~buf[i] & 0xff;
  }
}

/**
 * The full key of a row (all segments). JSON segments read `row[column]` along the property
 * path; a missing property is null. With `target` (at least keyLength bytes) the key is written
 * there and a view of it returned.
 */
export function encodeIndexKey(specs: KeySegmentSpec[], row: Row, target?: Buffer): Buffer {
  const length = keyLength(specs);
  const buf = target === undefined ? Buffer.allocUnsafe(length) : target;
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    let value = row[spec.sourceColumn.name];
    if (spec.path !== undefined) value = coerceJsonProperty(readPath(value ?? null, spec.path), spec.keyColumn.type);
    writeSegment(buf, spec, value ?? null);
  }
  return buf.length === length ? buf : buf.subarray(0, length);
}

/** The key bytes of the first `values.length` segments (values canonical for each keyColumn). */
export function encodeKeyPrefix(specs: KeySegmentSpec[], values: CanonicalValue[]): Buffer {
  if (values.length > specs.length) {
    throw new EngineError('INVALID_QUERY', { reason: `${values.length} values given for an index of ${specs.length} segments` });
  }
  if (values.length === 0) return Buffer.alloc(0);
  const last = specs[values.length - 1];
  const buf = Buffer.allocUnsafe(last.offset + 1 + last.width);
  for (let i = 0; i < values.length; i++) {
    const spec = specs[i];
    const value = spec.path !== undefined ? coerceJsonProperty(values[i], spec.keyColumn.type) : values[i];
    writeSegment(buf, spec, value ?? null);
  }
  return buf;
}

/**
 * Maps a user byte count (find_set.length: segment data bytes, no flag bytes) to the internal
 * key prefix length, which also counts the flag byte of every segment it touches. Clamped to
 * 0..keyLength.
 */
export function userBytesToKeyBytes(specs: KeySegmentSpec[], userLength: number): number {
  let remaining = userLength;
  let bytes = 0;
  for (let i = 0; i < specs.length && remaining > 0; i++) {
    const take = remaining < specs[i].width ? remaining : specs[i].width;
    bytes += 1 + take;
    remaining -= take;
  }
  return bytes;
}

/** The smallest byte string greater than every string that starts with `prefix`; null when there is none (all 0xFF or empty). */
export function prefixSuccessor(prefix: Buffer): Buffer | null {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return null;
  const next = Buffer.allocUnsafe(end);
  prefix.copy(next, 0, 0, end);
  next[end - 1]++;
  return next;
}

/** `key` followed by the record ID as 8 bytes big-endian (keys of non-unique indexes). */
export function appendRecordId(key: Buffer, id: number): Buffer {
  const out = Buffer.allocUnsafe(key.length + 8);
  key.copy(out, 0);
  const hi = Math.floor(id / 4294967296);
  out.writeUInt32BE(hi >>> 0, key.length);
  out.writeUInt32BE((id - hi * 4294967296) >>> 0, key.length + 4);
  return out;
}

/** The record ID in the last 8 bytes of a key made by appendRecordId. */
export function readRecordId(keyWithId: Buffer): number {
  const at = keyWithId.length - 8;
  return keyWithId.readUInt32BE(at) * 4294967296 + keyWithId.readUInt32BE(at + 4);
}
