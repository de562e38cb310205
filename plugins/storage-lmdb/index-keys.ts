/**
 * Index keys: fixed-width byte strings whose memcmp order is the index order.
 *
 * Layout per segment: one flag byte (0x00 null, 0x01 value), then `width` data bytes, then for
 * text and binary segments 2 length bytes (the value's byte count, big-endian: it orders a value
 * before the same value with trailing 0x00 bytes, which the padding alone could not tell apart).
 * A descending segment has every byte inverted, so nulls sort first in ascending segments and
 * last in descending ones. A key holds every value of its segment whole: a text or binary value
 * longer than its segment is refused, never cut. The user-visible layout (`find_set.length`) is
 * the concatenated data bytes, without flag and length bytes. See docs/queries.md.
 *
 * Pure module, no I/O.
 */
import { EngineError } from '../../kernel/errors';
import type {
  CanonicalValue, ColumnDefinition, ColumnType, IndexSegment, Row, TableDefinition,
} from '../../kernel/storage/types';
import type { IndexKeyLayout } from '../../kernel/storage/storage-port';
import { fixedKeyWidth, parseColumnType } from '../../lib/values/column-types';
import { dateToDays, parseDate, parseTime, parseTimestamp, timeToMs, timestampToMs } from '../../lib/values/timestamps';

/** Largest full key (flag, data and length bytes); the 8-byte record ID of non-unique indexes comes on top (LMDB allows 1978 bytes). */
export const MAX_KEY_LENGTH = 1900;
/** Length bytes after the data of a text or binary segment. */
const LENGTH_BYTES = 2;

export interface KeySegmentSpec {
  /** The segment as defined, normalized: lower-case name, `ascending` set. */
  segment: IndexSegment;
  /** The table column the segment reads. */
  sourceColumn: ColumnDefinition;
  /** The effective typed column: the source column, or for a JSON property a synthetic column (type = segment.type, no length). */
  keyColumn: ColumnDefinition;
  /** Data bytes, excluding the flag and length bytes. */
  width: number;
  /** Length bytes after the data: 2 for text and binary segments, else 0. */
  lengthBytes: number;
  /** Offset of this segment's flag byte in the full key. */
  offset: number;
  /** JSON property path (segment.key split at dots); undefined for plain columns. */
  path?: string[];
  /** The index's name, for error messages. */
  indexName?: string;
}

const NOT_INDEXABLE: ReadonlySet<ColumnType> = new Set<ColumnType>(['lvarbinary', 'variant', 'json']);
const SIZED_TYPES: ReadonlySet<ColumnType> = new Set<ColumnType>(['char', 'varchar', 'lvarchar', 'binary', 'varbinary']);

function badIndex(reason: string): EngineError {
  return new EngineError('INVALID_INDEX_DEFINITION', { reason });
}

function checkSize(size: unknown, what: string): number {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_KEY_LENGTH) {
    throw badIndex(`${what}: "size" must be an integer from 1 to ${MAX_KEY_LENGTH}`);
  }
  return size;
}

/**
 * Validates index segments against the table and computes their key layout. `indexName` only
 * names the index in the errors of values that do not fit.
 */
export function resolveKeySegments(table: TableDefinition, fields: IndexSegment[], indexName?: string): KeySegmentSpec[] {
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
      segment.key = raw.key;
      segment.type = type;
      if (SIZED_TYPES.has(type)) {
        if (raw.size === undefined || raw.size === null) throw badIndex(`${what}: a ${type} JSON property needs "size" (key bytes)`);
        width = checkSize(raw.size, what);
        segment.size = width;
      } else {
        width = fixedKeyWidth(type, null)!;
      }
      // No length: the segment's width (bytes) is what limits a property's value.
      keyColumn = {
        name: `${name}.${raw.key}`, type, length: null, scale: null, nullable: true, primaryKey: 0,
        defaultValue: null, autoValue: 'none',
      };
    } else {
      if (hasKey) throw badIndex(`${what}: "key" is only allowed on JSON columns, and "${name}" is ${column.type}`);
      if (NOT_INDEXABLE.has(column.type)) throw badIndex(`${what}: columns of type ${column.type} cannot be indexed`);
      if (SIZED_TYPES.has(column.type) && raw.size !== undefined && raw.size !== null) {
        // A size bounds the key bytes of the column's values: longer values are refused.
        width = checkSize(raw.size, what);
        segment.size = width;
      } else {
        const natural = fixedKeyWidth(column.type, column.length);
        if (natural === null) throw badIndex(`${what}: columns of type ${column.type} cannot be indexed`);
        width = natural;
        if (1 + width + lengthBytesOf(column.type) > MAX_KEY_LENGTH) {
          throw badIndex(`${what}: ${column.type}(${column.length}) needs ${width} key bytes to hold every value whole, and a key holds at most ${MAX_KEY_LENGTH}; give the segment a "size" (key bytes: longer values are then refused)`);
        }
      }
    }
    const lengthBytes = lengthBytesOf(keyColumn.type);
    specs.push({ segment, sourceColumn: column, keyColumn, width, lengthBytes, offset, ...(path ? { path } : {}), ...(indexName !== undefined ? { indexName } : {}) });
    offset += 1 + width + lengthBytes;
  }
  if (offset > MAX_KEY_LENGTH) throw badIndex(`the key is ${offset} bytes long; at most ${MAX_KEY_LENGTH} are allowed`);
  return specs;
}

function lengthBytesOf(type: ColumnType): number {
  return SIZED_TYPES.has(type) ? LENGTH_BYTES : 0;
}

/** The layout callers of reads see (StoragePort.indexKeyLayout): each segment's typed column, and the data bytes without flag and length bytes. */
export function keyLayoutOf(specs: KeySegmentSpec[]): IndexKeyLayout {
  return { columns: specs.map((s) => s.keyColumn), byteLength: specs.reduce((sum, s) => sum + s.width, 0) };
}

/** Bytes of a full key (flag, data and length bytes; no record ID). */
export function keyLength(specs: KeySegmentSpec[]): number {
  if (specs.length === 0) return 0;
  return segmentEnd(specs[specs.length - 1]);
}

/** Offset just after a segment (its flag, data and length bytes). */
function segmentEnd(spec: KeySegmentSpec): number {
  return spec.offset + 1 + spec.width + spec.lengthBytes;
}

/** true when the key (full, or a prefix covering every segment) has a null in some segment. */
export function keyHasNull(specs: KeySegmentSpec[], key: Buffer): boolean {
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    if (key[spec.offset] === (spec.segment.ascending === false ? 0xff : 0x00)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Value encoders

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

function tooLong(spec: KeySegmentSpec, bytes: number): EngineError {
  const index = spec.indexName === undefined ? 'the index' : `index "${spec.indexName}"`;
  const what = spec.path === undefined ? 'the value' : `property "${spec.segment.key}"`;
  return new EngineError('INVALID_COLUMN_VALUE', {
    column: spec.sourceColumn.name,
    reason: `${what} is ${bytes} bytes long and ${index} holds at most ${spec.width} bytes of it (its segment "size")`,
  });
}

/** UTF-8 bytes padded with 0x00 to the width, then the byte count. */
function writeString(buf: Buffer, at: number, spec: KeySegmentSpec, text: string): void {
  const width = spec.width;
  let written: number;
  if (text.length * 3 <= width) {
    written = buf.write(text, at, width, 'utf8'); // at most 3 bytes per UTF-16 unit: it fits
  } else {
    written = Buffer.byteLength(text, 'utf8');
    if (written > width) throw tooLong(spec, written);
    buf.write(text, at, written, 'utf8');
  }
  if (written < width) buf.fill(0, at + written, at + width);
  buf.writeUInt16BE(written, at + width);
}

/** The bytes padded with 0x00 to the width, then the byte count. */
function writeBytes(buf: Buffer, at: number, spec: KeySegmentSpec, bytes: Uint8Array): void {
  const width = spec.width;
  const n = bytes.length;
  if (n > width) throw tooLong(spec, n);
  buf.set(bytes, at);
  if (n < width) buf.fill(0, at + n, at + width);
  buf.writeUInt16BE(n, at + width);
}

/**
 * Writes the data (and length) bytes of a non-null canonical value; false when the value does
 * not fit the type. Throws INVALID_COLUMN_VALUE for text or bytes longer than the segment.
 */
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
      writeString(buf, at, spec, value as string);
      return true;
    case 'binary': case 'varbinary':
      writeBytes(buf, at, spec, value as Uint8Array);
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
const INTEGER_TEXT = /^-?[0-9]{1,16}$/;

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
      // Only a value the type holds exactly is a key: a fraction or an out-of-range number is null
      // (never cut or clamped, which would make 3e9 equal 2147483647 in an integer segment).
      const n = typeof value === 'number' ? value : typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(n)) return null;
      const [min, max] = INT_BOUNDS[type]!;
      return n < min || n > max ? null : n;
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
    // Property names are data: `constructor` is a property only when the value has one.
    if (!Object.hasOwn(current, path[i])) return undefined;
    current = (current as Record<string, unknown>)[path[i]];
  }
  return current;
}

function writeSegment(buf: Buffer, spec: KeySegmentSpec, value: CanonicalValue): void {
  const at = spec.offset;
  const end = segmentEnd(spec);
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
  const buf = Buffer.allocUnsafe(segmentEnd(specs[values.length - 1]));
  for (let i = 0; i < values.length; i++) {
    const spec = specs[i];
    const value = spec.path !== undefined ? coerceJsonProperty(values[i], spec.keyColumn.type) : values[i];
    writeSegment(buf, spec, value ?? null);
  }
  return buf;
}

/**
 * Maps a user byte count (find_set.length: segment data bytes, no flag or length bytes) to the
 * internal key prefix length: it also counts the flag byte of every segment it touches and the
 * length bytes of every segment it covers whole (so a whole text segment matches one value, not
 * the values that extend it with 0x00 bytes). Clamped to 0..keyLength.
 */
export function userBytesToKeyBytes(specs: KeySegmentSpec[], userLength: number): number {
  let remaining = userLength;
  let bytes = 0;
  for (let i = 0; i < specs.length && remaining > 0; i++) {
    const spec = specs[i];
    const take = remaining < spec.width ? remaining : spec.width;
    bytes += 1 + take;
    if (take === spec.width) bytes += spec.lengthBytes;
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
