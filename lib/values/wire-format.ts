/**
 * Wire values <-> canonical values.
 *
 * Protocols receive values as JSON (REST dates `MM/DD/CCYY`, ISO dates in actions, binary in
 * hex/base64/byte arrays, variants in one of four forms) and hand storage canonical values
 * (kernel/storage/types.ts). `decodeValue` validates and converts one value; `encodeValue` is the
 * reverse for responses. Pure module, no I/O. See docs/values.md.
 */
import { EngineError } from '../../kernel/errors';
import type { CanonicalValue, ColumnDefinition, JsonValue, VariantValue } from '../../kernel/storage/types';
import { jsonTextDepthExceeds, MAX_JSON_DEPTH } from './json-depth';
import { parseDate, parseTime, parseTimestamp } from './timestamps';

export type DateFormat = 'rest' | 'iso';
export type BinaryFormat = 'hex' | 'base64' | 'byteArray';
export type VariantFormat = 'json' | 'binary' | 'string' | 'variantObject';
export type NumberFormat = 'number' | 'string';
export type StringFormat = 'json' | 'hex';

export interface ValueFormat {
  dateFormat: DateFormat;
  binaryFormat: BinaryFormat;
  variantFormat: VariantFormat;
  numberFormat: NumberFormat;
  stringFormat: StringFormat;
}

/** REST: `MM/DD/CCYY hh:mm:ss.ttt` dates, hex binary, variants as JSON. */
export const REST_FORMAT: ValueFormat = Object.freeze({
  dateFormat: 'rest', binaryFormat: 'hex', variantFormat: 'json', numberFormat: 'number', stringFormat: 'json',
});
/** JSON actions (before session/response options): ISO 8601 dates, hex binary, variants as JSON. */
export const ISO_FORMAT: ValueFormat = Object.freeze({
  dateFormat: 'iso', binaryFormat: 'hex', variantFormat: 'json', numberFormat: 'number', stringFormat: 'json',
});

export const VARIANT_SCHEMA_ID = 'jsonaction.org/schemas/variantObject';
/** The `valueEncoding` of a json variant returned as its JSON text (nested too deeply to be a value). */
export const JSON_TEXT_ENCODING = 'jsonText';

/** A variant as given and returned with `variantFormat: variantObject`. */
export interface VariantObject {
  schema: typeof VARIANT_SCHEMA_ID;
  value: JsonValue;
  valueEncoding: string;
  type: VariantValue['type'];
}

// ---------------------------------------------------------------------------------------------
// Binary

const HEX_PATTERN = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

/** Bytes from a wire value, or a string saying what is wrong. Byte arrays are accepted in any format. */
function tryBytes(wire: unknown, format: BinaryFormat): Buffer | string {
  if (Array.isArray(wire)) {
    const bytes = Buffer.allocUnsafe(wire.length);
    for (let i = 0; i < wire.length; i++) {
      const b = wire[i];
      if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) {
        return `byte array element ${i} is ${JSON.stringify(b) ?? String(b)}, expected an integer from 0 to 255`;
      }
      bytes[i] = b;
    }
    return bytes;
  }
  if (typeof wire !== 'string') {
    return format === 'byteArray'
      ? 'expected an array of integers from 0 to 255'
      : `expected a ${format} string`;
  }
  switch (format) {
    case 'base64':
      if (!BASE64_PATTERN.test(wire)) return 'expected a base64 string (characters A-Z a-z 0-9 + / and = padding)';
      return Buffer.from(wire, 'base64');
    case 'byteArray':
      return 'expected an array of integers from 0 to 255';
    default:
      if (!HEX_PATTERN.test(wire)) return 'expected a hex string (an even number of characters 0-9 A-F)';
      return Buffer.from(wire, 'hex');
  }
}

/**
 * Decodes bytes written in `binaryFormat` (a byte array is accepted whatever the format).
 * Throws INVALID_PARAMETER naming `what` (e.g. "payload").
 */
export function bytesFromWire(wire: unknown, binaryFormat: BinaryFormat, what: string): Buffer {
  const bytes = tryBytes(wire, binaryFormat);
  if (typeof bytes === 'string') throw new EngineError('INVALID_PARAMETER', { param: what, reason: bytes });
  return bytes;
}

/** Bytes in `binaryFormat`: upper-case hex, standard padded base64, or an array of 0-255. */
export function bytesToWire(bytes: Uint8Array, binaryFormat: BinaryFormat): string | number[] {
  if (binaryFormat === 'byteArray') return Array.from(bytes);
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return binaryFormat === 'base64' ? buffer.toString('base64') : buffer.toString('hex').toUpperCase();
}

/** A char value padded with spaces to the column length (in characters). */
function padChar(text: string, length: number | null): string {
  if (length === null) return text;
  let count = 0;
  for (const _ of text) count++;
  return count >= length ? text : text + ' '.repeat(length - count);
}

/** Upper-case hex of a string's UTF-8 bytes (stringFormat `hex`). */
export function stringToHex(text: string): string {
  return Buffer.from(text, 'utf8').toString('hex').toUpperCase();
}

// ---------------------------------------------------------------------------------------------
// Dates and times: canonical forms and parsing are ./timestamps.ts; here, their wire formats.

/** A canonical date in `format`: REST `MM/DD/CCYY`, ISO unchanged. */
export function formatDate(date: string, format: DateFormat): string {
  return format === 'rest' ? `${date.slice(5, 7)}/${date.slice(8, 10)}/${date.slice(0, 4)}` : date;
}

/** A canonical time in `format` (both `hh:mm:ss.ttt`). */
export function formatTime(time: string, _format: DateFormat): string {
  return time;
}

/** A canonical timestamp in `format`: REST `MM/DD/CCYY hh:mm:ss.ttt`, ISO unchanged. */
export function formatTimestamp(timestamp: string, format: DateFormat): string {
  return format === 'rest' ? `${formatDate(timestamp.slice(0, 10), 'rest')} ${timestamp.slice(11)}` : timestamp;
}

// ---------------------------------------------------------------------------------------------
// Numbers

const INTEGER_TEXT = /^[+-]?\d+$/;
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DECIMAL_TEXT = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

const INTEGER_LIMITS = {
  tinyint: { min: -128, max: 127 },
  smallint: { min: -32768, max: 32767 },
  integer: { min: -2147483648, max: 2147483647 },
} as const;
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;
const BIGINT_RANGE = `between ${BIGINT_MIN} and ${BIGINT_MAX}`;
const MAX_FLOAT32 = 3.4028234663852886e38;

/** Rounds a decimal to `scale` fraction digits (half away from zero); null when more than `precision` digits remain. */
export function roundDecimal(text: string, precision: number, scale: number): number | null {
  const match = DECIMAL_TEXT.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return null;
  const negative = match[1] === '-';
  let digits = match[2] + (match[3] ?? '');
  let point = match[2].length + (match[4] === undefined ? 0 : Number(match[4]));
  // Strip leading zeros (they move the point).
  let lead = 0;
  while (lead < digits.length && digits.charCodeAt(lead) === 48) lead++;
  digits = digits.slice(lead);
  point -= lead;
  if (digits === '') return 0;
  if (point > precision - scale) return null; // too many integer digits even before rounding
  const keep = point + scale; // digits kept before the rounding position
  let scaled: bigint;
  if (keep >= digits.length) {
    scaled = BigInt(digits) * 10n ** BigInt(keep - digits.length);
  } else if (keep < 0) {
    scaled = 0n;
  } else {
    scaled = keep === 0 ? 0n : BigInt(digits.slice(0, keep));
    if (digits.charCodeAt(keep) >= 53) scaled += 1n;
  }
  if (scaled >= 10n ** BigInt(precision)) return null;
  if (scaled === 0n) return 0;
  const s = scaled.toString().padStart(scale + 1, '0');
  const value = Number(scale === 0 ? s : `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`);
  return negative ? -value : value;
}

// ---------------------------------------------------------------------------------------------
// Decoding

function invalid(column: ColumnDefinition, reason: string): EngineError {
  return new EngineError('INVALID_COLUMN_VALUE', { column: column.name, reason });
}

/** A short description of a client's value for error messages (never the whole value). */
export function describeValue(wire: unknown): string {
  if (wire === null) return 'null';
  if (Array.isArray(wire)) return 'an array';
  if (typeof wire === 'string') return wire.length > 40 ? `the string "${wire.slice(0, 40)}…"` : `the string "${wire}"`;
  if (typeof wire === 'object') return 'an object';
  return `${typeof wire} ${String(wire)}`;
}

function codePointLength(text: string, limit: number): number {
  // Fast path: UTF-16 length is an upper bound of the code point count.
  if (text.length <= limit) return text.length;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function decodeInteger(column: ColumnDefinition, wire: unknown): number | bigint {
  const type = column.type as 'tinyint' | 'smallint' | 'integer' | 'bigint';
  if (type !== 'bigint') {
    const { min, max } = INTEGER_LIMITS[type];
    let value: number;
    if (typeof wire === 'number') value = wire;
    else if (typeof wire === 'string' && INTEGER_TEXT.test(wire)) value = Number(wire);
    else throw invalid(column, `expected an integer between ${min} and ${max}, not ${describeValue(wire)}`);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalid(column, `expected an integer between ${min} and ${max}, not ${describeValue(wire)}`);
    }
    return value === 0 ? 0 : value;
  }
  const range = BIGINT_RANGE;
  if (typeof wire === 'number') {
    if (!Number.isInteger(wire)) throw invalid(column, `expected an integer ${range}, not ${describeValue(wire)}`);
    if (!Number.isSafeInteger(wire)) {
      throw invalid(column, `${wire} is beyond the exact range of JSON numbers (±9007199254740991); send it as a string`);
    }
    return wire === 0 ? 0 : wire;
  }
  if (typeof wire === 'bigint') {
    if (wire < BIGINT_MIN || wire > BIGINT_MAX) throw invalid(column, `expected an integer ${range}, not ${wire}`);
    return Number.isSafeInteger(Number(wire)) && BigInt(Number(wire)) === wire ? Number(wire) : wire;
  }
  if (typeof wire === 'string' && INTEGER_TEXT.test(wire)) {
    const value = BigInt(wire);
    if (value < BIGINT_MIN || value > BIGINT_MAX) throw invalid(column, `expected an integer ${range}, not ${describeValue(wire)}`);
    const small = Number(value);
    return Number.isSafeInteger(small) ? (small === 0 ? 0 : small) : value;
  }
  throw invalid(column, `expected an integer ${range}, not ${describeValue(wire)}`);
}

function decodeFloat(column: ColumnDefinition, wire: unknown): number {
  let value: number;
  if (typeof wire === 'number') value = wire;
  else if (typeof wire === 'string' && FLOAT_TEXT.test(wire)) value = Number(wire);
  else throw invalid(column, `expected a number, not ${describeValue(wire)}`);
  if (!Number.isFinite(value)) throw invalid(column, `expected a finite number, not ${describeValue(wire)}`);
  if (column.type === 'real' && Math.abs(value) > MAX_FLOAT32) {
    throw invalid(column, `${value} is outside the range of real (±3.4028235e38)`);
  }
  return value === 0 ? 0 : value;
}

function decodeDecimal(column: ColumnDefinition, wire: unknown): number {
  const precision = column.length ?? 32;
  const scale = column.scale ?? 0;
  let text: string;
  if (typeof wire === 'number') {
    if (!Number.isFinite(wire)) throw invalid(column, `expected a finite number, not ${describeValue(wire)}`);
    if (Number.isInteger(wire) && Math.abs(wire) < 10 ** Math.min(15, precision - scale)) return wire === 0 ? 0 : wire;
    text = String(wire);
  } else if (typeof wire === 'string' && FLOAT_TEXT.test(wire)) {
    text = wire;
  } else {
    throw invalid(column, `expected a number, not ${describeValue(wire)}`);
  }
  const value = roundDecimal(text, precision, scale);
  if (value === null) {
    throw invalid(column, `${text} does not fit ${column.type}(${precision},${scale}): at most ${precision - scale} digits before the decimal point`);
  }
  return value;
}

/**
 * Throws unless `text` is valid Unicode: an unpaired surrogate has no UTF-8 form, so storage
 * and index keys would turn every one of them into U+FFFD and tell different values apart no more.
 */
function checkUnicode(column: ColumnDefinition, text: string): void {
  if (!text.isWellFormed()) {
    throw invalid(column, 'the text holds an unpaired surrogate (\\ud800–\\udfff without its pair), which is not valid Unicode');
  }
}

function decodeString(column: ColumnDefinition, wire: unknown): string {
  if (typeof wire !== 'string') throw invalid(column, `expected a string, not ${describeValue(wire)}`);
  checkUnicode(column, wire);
  if (column.type !== 'lvarchar' && column.length !== null) {
    const length = codePointLength(wire, column.length);
    if (length > column.length) {
      throw invalid(column, `string of ${length} characters exceeds length ${column.length}`);
    }
  }
  return wire;
}

function decodeBinary(column: ColumnDefinition, wire: unknown, format: ValueFormat): Buffer {
  const bytes = tryBytes(wire, format.binaryFormat);
  if (typeof bytes === 'string') throw invalid(column, bytes);
  if (column.type === 'lvarbinary' || column.length === null) return bytes;
  if (bytes.length > column.length) {
    throw invalid(column, `${bytes.length} bytes exceed length ${column.length}`);
  }
  if (column.type === 'binary' && bytes.length < column.length) {
    const padded = Buffer.alloc(column.length);
    bytes.copy(padded);
    return padded;
  }
  return bytes;
}

function expectedDate(type: ColumnDefinition['type']): string {
  return type === 'date'
    ? 'a date MM/DD/CCYY or CCYY-MM-DD'
    : type === 'time'
      ? 'a time hh:mm:ss.ttt'
      : 'a timestamp MM/DD/CCYY hh:mm:ss.ttt or CCYY-MM-DDThh:mm:ss.ttt';
}

function decodeDateValue(column: ColumnDefinition, wire: unknown): string {
  const type = column.type;
  if (typeof wire !== 'string') throw invalid(column, `expected ${expectedDate(type)}, not ${describeValue(wire)}`);
  const value = type === 'date' ? parseDate(wire) : type === 'time' ? parseTime(wire) : parseTimestamp(wire);
  if (value === null) throw invalid(column, `expected ${expectedDate(type)}, not ${describeValue(wire)} (or it is not a real date/time)`);
  return value;
}

function decodeBit(column: ColumnDefinition, wire: unknown): boolean {
  if (typeof wire === 'boolean') return wire;
  if (wire === 1 || wire === '1' || wire === 'true') return true;
  if (wire === 0 || wire === '0' || wire === 'false') return false;
  throw invalid(column, `expected true or false (or 1/0), not ${describeValue(wire)}`);
}

function decodeVariantObject(column: ColumnDefinition, wire: unknown, format: ValueFormat): VariantValue | null {
  if (wire === null || typeof wire !== 'object' || Array.isArray(wire)) {
    throw invalid(column, `expected a variant object {"schema": "${VARIANT_SCHEMA_ID}", "type", "value"}, not ${describeValue(wire)}`);
  }
  const object = wire as Record<string, unknown>;
  if (object.schema !== undefined && object.schema !== VARIANT_SCHEMA_ID) {
    throw invalid(column, `variant object "schema" must be "${VARIANT_SCHEMA_ID}"`);
  }
  const value = object.value;
  const encoding = object.valueEncoding;
  if (encoding !== undefined && encoding !== null && typeof encoding !== 'string') {
    throw invalid(column, 'variant object "valueEncoding" must be a string');
  }
  switch (object.type) {
    case 'json':
    case 'number':
      if (value === undefined) throw invalid(column, 'variant object has no "value"');
      if (value === null) return null;
      if (object.type === 'number' && typeof value !== 'number') throw invalid(column, `variant number expected, not ${describeValue(value)}`);
      checkJson(column, value, 0);
      return { type: 'json', value: JSON.stringify(value) };
    case 'string': {
      if (typeof value !== 'string') throw invalid(column, `variant string expected, not ${describeValue(value)}`);
      if (encoding === 'hex' || encoding === 'base64') {
        const bytes = tryBytes(value, encoding);
        if (typeof bytes === 'string') throw invalid(column, bytes);
        return { type: 'string', value: bytes.toString('utf8') };
      }
      checkUnicode(column, value);
      return { type: 'string', value };
    }
    case 'binary': {
      const binaryFormat = encoding === 'hex' || encoding === 'base64' || encoding === 'byteArray'
        ? encoding : format.binaryFormat;
      const bytes = tryBytes(value, binaryFormat);
      if (typeof bytes === 'string') throw invalid(column, bytes);
      return { type: 'binary', value: bytes };
    }
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid(column, `variant boolean expected, not ${describeValue(value)}`);
      return { type: 'boolean', value };
    default:
      throw invalid(column, 'variant object "type" must be json, string, binary or boolean');
  }
}

function decodeVariant(column: ColumnDefinition, wire: unknown, format: ValueFormat): VariantValue | null {
  switch (format.variantFormat) {
    case 'string':
      if (typeof wire !== 'string') throw invalid(column, `expected a string (variantFormat string), not ${describeValue(wire)}`);
      checkUnicode(column, wire);
      return { type: 'string', value: wire };
    case 'binary': {
      const bytes = tryBytes(wire, format.binaryFormat);
      if (typeof bytes === 'string') throw invalid(column, bytes);
      return { type: 'binary', value: bytes };
    }
    case 'variantObject':
      return decodeVariantObject(column, wire, format);
    default:
      checkJson(column, wire, 0);
      return { type: 'json', value: JSON.stringify(wire) };
  }
}

/** Checks a JSON value; `depth` counts the arrays/objects around it. */
function checkJson(column: ColumnDefinition, value: unknown, depth: number): void {
  switch (typeof value) {
    case 'string':
      checkUnicode(column, value);
      return;
    case 'boolean': return;
    case 'number':
      if (!Number.isFinite(value)) throw invalid(column, 'JSON numbers must be finite');
      return;
    case 'object':
      if (value === null) return;
      if (depth >= MAX_JSON_DEPTH) throw invalid(column, `JSON value is nested too deeply (more than ${MAX_JSON_DEPTH} arrays/objects)`);
      if (Array.isArray(value)) {
        for (const item of value) checkJson(column, item, depth + 1);
      } else {
        for (const key in value) {
          checkUnicode(column, key);
          checkJson(column, (value as Record<string, unknown>)[key], depth + 1);
        }
      }
      return;
    default:
      throw invalid(column, `expected a JSON value, not ${typeof value}`);
  }
}

/**
 * Validates a wire value for `column` and returns its canonical form. `undefined` counts as null.
 * Throws INVALID_COLUMN_VALUE {column, reason}.
 */
export function decodeValue(column: ColumnDefinition, wire: unknown, format: ValueFormat): CanonicalValue {
  if (wire === null || wire === undefined) {
    if (!column.nullable) throw invalid(column, 'null is not allowed: the column is not nullable');
    return null;
  }
  let value: CanonicalValue;
  switch (column.type) {
    case 'bit': return decodeBit(column, wire);
    case 'tinyint': case 'smallint': case 'integer': case 'bigint': return decodeInteger(column, wire);
    case 'real': case 'float': return decodeFloat(column, wire);
    case 'money': case 'number': return decodeDecimal(column, wire);
    case 'date': case 'time': case 'timestamp': return decodeDateValue(column, wire);
    case 'char': case 'varchar': case 'lvarchar': return decodeString(column, wire);
    case 'binary': case 'varbinary': case 'lvarbinary': return decodeBinary(column, wire, format);
    case 'json':
      checkJson(column, wire, 0);
      return wire as JsonValue;
    case 'variant':
      value = decodeVariant(column, wire, format);
      if (value === null && !column.nullable) throw invalid(column, 'null is not allowed: the column is not nullable');
      return value;
    default:
      throw invalid(column, `unsupported column type ${String(column.type)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

function numberOut(value: number | bigint, format: ValueFormat): JsonValue {
  if (typeof value === 'bigint') return value.toString();
  return format.numberFormat === 'string' ? String(value) : value;
}

function variantBytes(variant: VariantValue): Buffer {
  switch (variant.type) {
    case 'binary': return Buffer.from(variant.value.buffer, variant.value.byteOffset, variant.value.byteLength);
    case 'boolean': return Buffer.from(variant.value ? 'true' : 'false', 'utf8');
    default: return Buffer.from(variant.value, 'utf8');
  }
}

/** The variant's value as `variantFormat: json` returns it. */
function variantJson(variant: VariantValue, format: ValueFormat): JsonValue {
  switch (variant.type) {
    case 'json': return JSON.parse(variant.value) as JsonValue;
    case 'string': return format.stringFormat === 'hex' ? stringToHex(variant.value) : variant.value;
    case 'binary': return bytesToWire(variant.value, format.binaryFormat);
    default: return variant.value;
  }
}

/**
 * Stored JSON text nested too deeply to be returned as a JSON value (an MQTT payload can be):
 * its text, in a variant object whose `valueEncoding` says so (docs/values.md).
 */
function jsonTextVariant(text: string): VariantObject {
  return { schema: VARIANT_SCHEMA_ID, type: 'json', value: text, valueEncoding: JSON_TEXT_ENCODING };
}

function encodeVariant(variant: VariantValue, format: ValueFormat): JsonValue {
  if (variant.type === 'json' && (format.variantFormat === 'json' || format.variantFormat === 'variantObject')
    && jsonTextDepthExceeds(variant.value)) {
    return jsonTextVariant(variant.value) as unknown as JsonValue;
  }
  switch (format.variantFormat) {
    case 'variantObject': {
      const valueEncoding = variant.type === 'binary'
        ? format.binaryFormat
        : variant.type === 'string' ? (format.stringFormat === 'hex' ? 'hex' : 'utf8') : 'json';
      return { schema: VARIANT_SCHEMA_ID, value: variantJson(variant, format), valueEncoding, type: variant.type };
    }
    case 'string':
      switch (variant.type) {
        case 'json': case 'string': return variant.value;
        case 'boolean': return variant.value ? 'true' : 'false';
        default: {
          const wire = bytesToWire(variant.value, format.binaryFormat === 'byteArray' ? 'hex' : format.binaryFormat);
          return wire as string;
        }
      }
    case 'binary':
      return bytesToWire(variantBytes(variant), format.binaryFormat);
    default:
      return variantJson(variant, format);
  }
}

/** The wire form of a canonical value of `column` in `format`. */
export function encodeValue(column: ColumnDefinition, value: CanonicalValue, format: ValueFormat): JsonValue {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case 'bit':
      return value === true || value === 1;
    case 'tinyint': case 'smallint': case 'integer': case 'bigint':
    case 'real': case 'float': case 'money': case 'number':
      return numberOut(value as number | bigint, format);
    case 'date': return formatDate(value as string, format.dateFormat);
    case 'time': return value as string;
    case 'timestamp': return formatTimestamp(value as string, format.dateFormat);
    case 'char':
      // A fixed-length char is space-padded on disk in the established product: its raw bytes in
      // hex include the pad (spec: "pad characters included").
      return format.stringFormat === 'hex' ? stringToHex(padChar(value as string, column.length)) : value as string;
    case 'varchar': case 'lvarchar':
      return format.stringFormat === 'hex' ? stringToHex(value as string) : value as string;
    case 'binary': case 'varbinary': case 'lvarbinary':
      return bytesToWire(value as Uint8Array, format.binaryFormat);
    case 'json':
      return value as JsonValue;
    case 'variant':
      return encodeVariant(value as VariantValue, format);
    default:
      return value as JsonValue;
  }
}
