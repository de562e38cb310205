/**
 * Column types: turning a creator's raw JSON column object into a `ColumnDefinition`, and the
 * per-type facts other modules share (index key widths, integer ranges, default lengths).
 *
 * Pure module, no I/O. See docs/values.md.
 */
import { EngineError } from '../../kernel/errors';
import {
  COLUMN_TYPES, type AutoValue, type CanonicalValue, type ColumnDefinition, type ColumnType,
} from '../../kernel/storage/types';
import { decodeValue, ISO_FORMAT } from './wire-format';

/** Column (and table) names: a letter or `_`, then up to 63 letters, digits or `_`. */
export const COLUMN_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,63}$/i;

/** Names a column cannot take, and why. */
export const RESERVED_COLUMN_NAMES: ReadonlyMap<string, string> = new Map([
  ['_id', 'REST query results name the record ID `_id`'],
  ['__proto__', 'JSON bodies may not carry it'],
]);

/** Longest `length` of char/varchar/binary/varbinary (longer values belong in lvarchar/lvarbinary). */
export const MAX_FIXED_LENGTH = 65500;

/** Default `length` when the creator gives none. */
export const DEFAULT_LENGTH: Readonly<Partial<Record<ColumnType, number>>> = {
  char: 1,
  varchar: MAX_FIXED_LENGTH,
  binary: 1,
  varbinary: MAX_FIXED_LENGTH,
};

/** number/money: `length` is the precision (total significant decimal digits). */
export const MAX_PRECISION = 32;
export const DEFAULT_PRECISION = 32;
export const DEFAULT_SCALE: Readonly<Record<'money' | 'number', number>> = { money: 4, number: 0 };

/** Index key width of an lvarchar segment when the index does not give a `size`. */
export const LVARCHAR_KEY_WIDTH = 256;

/** UTF-8 takes at most 4 bytes per character (code point): a char/varchar key segment holds 4 × length bytes. */
export const MAX_UTF8_BYTES_PER_CHARACTER = 4;

/** Inclusive ranges of the integer types, as bigints (exact for bigint). */
export const INTEGER_RANGES: Readonly<Record<'tinyint' | 'smallint' | 'integer' | 'bigint', { min: bigint; max: bigint }>> = {
  tinyint: { min: -128n, max: 127n },
  smallint: { min: -32768n, max: 32767n },
  integer: { min: -2147483648n, max: 2147483647n },
  bigint: { min: -(2n ** 63n), max: 2n ** 63n - 1n },
};

const TYPE_BY_NAME: ReadonlyMap<string, ColumnType> = new Map<string, ColumnType>([
  ...COLUMN_TYPES.map((type): [string, ColumnType] => [type, type]),
  ['double', 'float'],
]);

const AUTO_VALUES: readonly AutoValue[] = [
  'none', 'incrementOnInsert', 'timestampOnInsert', 'timestampOnUpdate', 'timestampOnUpdateAndInsert',
];
/** The established product's `autoTimestamp` values, mapped to ours. */
const AUTO_TIMESTAMP: ReadonlyMap<string, AutoValue> = new Map<string, AutoValue>([
  ['none', 'none'],
  ['oninsert', 'timestampOnInsert'],
  ['onupdate', 'timestampOnUpdate'],
  ['onupdateandinsert', 'timestampOnUpdateAndInsert'],
]);

const INTEGER_TYPES: ReadonlySet<ColumnType> = new Set<ColumnType>(['tinyint', 'smallint', 'integer', 'bigint']);
const NUMERIC_TYPES: ReadonlySet<ColumnType> = new Set<ColumnType>([
  'tinyint', 'smallint', 'integer', 'bigint', 'real', 'float', 'money', 'number',
]);
const DATE_TYPES: ReadonlySet<ColumnType> = new Set<ColumnType>(['date', 'time', 'timestamp']);

export function isIntegerType(type: ColumnType): boolean { return INTEGER_TYPES.has(type); }
export function isNumericType(type: ColumnType): boolean { return NUMERIC_TYPES.has(type); }
export function isDateType(type: ColumnType): boolean { return DATE_TYPES.has(type); }
export function isStringType(type: ColumnType): boolean {
  return type === 'char' || type === 'varchar' || type === 'lvarchar';
}
export function isBinaryType(type: ColumnType): boolean {
  return type === 'binary' || type === 'varbinary' || type === 'lvarbinary';
}

/** A type name as creators write it (case-insensitive, `double` = `float`); null when unknown. */
export function parseColumnType(name: unknown): ColumnType | null {
  if (typeof name !== 'string') return null;
  return TYPE_BY_NAME.get(name.toLowerCase()) ?? null;
}

/**
 * Data bytes of an index key segment that holds every value of a column of this type whole
 * (flag and length bytes excluded), or null when the type cannot be indexed directly
 * (lvarbinary, json, variant). char/varchar: 4 bytes per character of `length` (UTF-8's
 * largest); binary/varbinary: `length` bytes; lvarchar, unbounded: 256 (longer values are
 * refused by such an index).
 */
export function fixedKeyWidth(type: ColumnType, length: number | null): number | null {
  switch (type) {
    case 'bit': case 'tinyint': return 1;
    case 'smallint': return 2;
    case 'integer': case 'real': case 'date': case 'time': return 4;
    case 'bigint': case 'float': case 'money': case 'number': case 'timestamp': return 8;
    case 'char': case 'varchar': return MAX_UTF8_BYTES_PER_CHARACTER * (length ?? DEFAULT_LENGTH[type]!);
    case 'binary': case 'varbinary': return length ?? DEFAULT_LENGTH[type]!;
    case 'lvarchar': return LVARCHAR_KEY_WIDTH;
    default: return null;
  }
}

/**
 * Validates one raw column object of a create-table request and returns its definition.
 * `index` is the column's 0-based position, used in error messages.
 */
export function normalizeColumn(input: unknown, index: number): ColumnDefinition {
  let label = `column ${index + 1}`;
  const fail = (problem: string): never => {
    throw new EngineError('INVALID_TABLE_DEFINITION', { reason: `${label}: ${problem}` });
  };
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    fail('expected an object with "name" and "type"');
  }
  const raw = input as Record<string, unknown>;

  if (typeof raw.name !== 'string') fail('"name" must be a string');
  const rawName = raw.name as string;
  if (!COLUMN_NAME_PATTERN.test(rawName)) {
    fail(`invalid name "${rawName}": use 1 to 64 letters, digits or "_", not starting with a digit`);
  }
  const name = rawName.toLowerCase();
  if (RESERVED_COLUMN_NAMES.has(name)) {
    fail(`"${rawName}" is reserved (${RESERVED_COLUMN_NAMES.get(name)})`);
  }
  label = `column "${name}"`;

  if (raw.type === undefined || raw.type === null) fail('"type" is required');
  const type = parseColumnType(raw.type);
  if (type === null) {
    fail(`unknown type ${JSON.stringify(raw.type)}; expected one of ${COLUMN_TYPES.join(', ')} (or double)`);
  }
  const columnType = type as ColumnType;

  let length: number | null = null;
  let scale: number | null = null;
  const rawLength = raw.length ?? null;
  const rawScale = raw.scale ?? null;
  const checkInteger = (value: unknown, what: string, min: number, max: number): number => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      fail(`"${what}" must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`);
    }
    return value as number;
  };
  switch (columnType) {
    case 'char': case 'varchar': case 'binary': case 'varbinary':
      length = rawLength === null ? DEFAULT_LENGTH[columnType]! : checkInteger(rawLength, 'length', 1, MAX_FIXED_LENGTH);
      break;
    case 'number': case 'money': {
      length = rawLength === null ? DEFAULT_PRECISION : checkInteger(rawLength, 'length', 1, MAX_PRECISION);
      const defaultScale = Math.min(DEFAULT_SCALE[columnType], length);
      scale = rawScale === null ? defaultScale : checkInteger(rawScale, 'scale', 0, length);
      break;
    }
    case 'tinyint': case 'smallint': case 'integer': case 'bigint': case 'real': case 'float':
      // REST creators send e.g. length 4 for INTEGER: accepted and kept, otherwise null.
      length = rawLength === null ? null : checkInteger(rawLength, 'length', 1, MAX_FIXED_LENGTH);
      break;
    default:
      // bit, dates, lvarchar, lvarbinary, json, variant: length has no meaning and is ignored.
      break;
  }

  let nullable = true;
  if (raw.nullable !== undefined && raw.nullable !== null) {
    if (typeof raw.nullable !== 'boolean') fail('"nullable" must be true or false');
    nullable = raw.nullable as boolean;
  }

  let primaryKey = 0;
  if (raw.primaryKey !== undefined && raw.primaryKey !== null) {
    if (raw.primaryKey === true) primaryKey = 1;
    else if (raw.primaryKey === false) primaryKey = 0;
    else primaryKey = checkInteger(raw.primaryKey, 'primaryKey', 0, 64);
  }

  let autoValue: AutoValue = 'none';
  if (raw.autoValue !== undefined && raw.autoValue !== null) {
    if (typeof raw.autoValue !== 'string' || !AUTO_VALUES.includes(raw.autoValue as AutoValue)) {
      fail(`"autoValue" must be one of ${AUTO_VALUES.join(', ')}`);
    }
    autoValue = raw.autoValue as AutoValue;
  } else if (raw.autoTimestamp !== undefined && raw.autoTimestamp !== null) {
    const mapped = typeof raw.autoTimestamp === 'string' ? AUTO_TIMESTAMP.get(raw.autoTimestamp.toLowerCase()) : undefined;
    if (mapped === undefined) fail('"autoTimestamp" must be one of none, onInsert, onUpdate, onUpdateAndInsert');
    autoValue = mapped as AutoValue;
  }
  if (autoValue === 'incrementOnInsert' && !INTEGER_TYPES.has(columnType)) {
    fail(`autoValue incrementOnInsert needs an integer type, not ${columnType}`);
  }
  if (autoValue.startsWith('timestamp') && !DATE_TYPES.has(columnType)) {
    fail(`autoValue ${autoValue} needs a date, time or timestamp type, not ${columnType}`);
  }

  const column: ColumnDefinition = {
    name, type: columnType, length, scale, nullable, primaryKey, defaultValue: null, autoValue,
  };
  if (raw.defaultValue !== undefined && raw.defaultValue !== null) {
    // Defaults are written like values (dates in REST or ISO form, binary in hex).
    let value: CanonicalValue = null;
    try {
      value = decodeValue({ ...column, nullable: true }, raw.defaultValue, ISO_FORMAT);
    } catch (error) {
      const reason = error instanceof EngineError ? String(error.details.reason ?? error.message) : String(error);
      fail(`invalid defaultValue: ${reason}`);
    }
    column.defaultValue = value;
  }
  return column;
}
