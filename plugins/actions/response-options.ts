/**
 * `responseOptions`: validation, and resolution over the session's and the server's defaults.
 *
 * Per property the first level that sets it wins:
 *   1. the envelope's `responseOptions`
 *   2. the session's `defaultResponseOptions`
 *   3. the session's `defaultBinaryFormat` / `defaultVariantFormat` / `defaultNumberFormat`
 *   4. the setting `default_response_options`
 *   5. the settings `default_binary_format` / `default_number_format`
 *   6. built-in: binaryFormat hex, dataFormat arrays, numberFormat number, stringFormat json,
 *      variantFormat json, no field/path filters, nothing omitted.
 * `null` (and `dataFormat: "default"`) count as "not set here". includeFields/excludeFields are one
 * unit (the first level naming either wins), and so are includePaths/excludePaths.
 */
import { internFormat } from '../../lib/values/interned-formats';
import { describeValue } from '../../lib/values/wire-format';
import { EngineError } from '../../kernel/errors';
import type { BinaryFormat, NumberFormat, StringFormat, ValueFormat, VariantFormat } from '../../lib/values/wire-format';

export type DataFormat = 'arrays' | 'objects';

/** A validated (not yet merged) responseOptions object: only the properties that were set. */
export interface ResponseOptions {
  binaryFormat?: BinaryFormat;
  dataFormat?: DataFormat;
  numberFormat?: NumberFormat;
  stringFormat?: StringFormat;
  variantFormat?: VariantFormat;
  includeFields?: string[];
  excludeFields?: string[];
  includePaths?: string[];
  excludePaths?: string[];
  omit?: string[];
}

export interface ResolvedResponseOptions {
  binaryFormat: BinaryFormat;
  dataFormat: DataFormat;
  numberFormat: NumberFormat;
  stringFormat: StringFormat;
  variantFormat: VariantFormat;
  /** Lower-case field names; empty: every field. */
  includeFields: string[];
  excludeFields: string[];
  /** `field.property.path` (field lower-case); empty: every path. */
  includePaths: string[];
  excludePaths: string[];
  /** Top-level response properties to remove. */
  omit: string[];
}

/** The session's defaults that take part in resolution (a subset of ApiSessionSettings). */
export interface SessionDefaults {
  defaultResponseOptions?: Record<string, unknown>;
  defaultBinaryFormat?: BinaryFormat;
  defaultVariantFormat?: VariantFormat;
  defaultNumberFormat?: NumberFormat;
}

export interface ServerDefaults {
  default_response_options?: Record<string, unknown>;
  default_binary_format?: BinaryFormat;
  default_number_format?: NumberFormat;
}

const ENUMS = {
  binaryFormat: ['hex', 'base64', 'byteArray'],
  dataFormat: ['arrays', 'objects', 'default'],
  numberFormat: ['number', 'string'],
  stringFormat: ['json', 'hex'],
  variantFormat: ['json', 'binary', 'string', 'variantObject'],
} as const;

/** Case-insensitive match of an enum value, returning its canonical spelling. */
export function enumValue<T extends string>(value: unknown, allowed: readonly T[], param: string): T {
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    for (const candidate of allowed) if (candidate.toLowerCase() === lower) return candidate;
  }
  throw new EngineError('INVALID_PARAMETER', { param, reason: `expected one of ${allowed.map((a) => `"${a}"`).join(', ')}, not ${describeValue(value)}` });
}

function stringList(value: unknown, param: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item.length > 0)) {
    throw new EngineError('INVALID_PARAMETER', { param, reason: 'expected an array of non-empty strings' });
  }
  return value as string[];
}

/**
 * Validates one responseOptions object (from the envelope, a session default or the settings).
 * `where` prefixes parameter names in errors (`responseOptions`, `defaultResponseOptions`).
 */
export function parseResponseOptions(raw: unknown, where = 'responseOptions'): ResponseOptions {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new EngineError('INVALID_PARAMETER', { param: where, reason: 'expected an object' });
  }
  const input = raw as Record<string, unknown>;
  const options: ResponseOptions = {};
  const set = (key: string): boolean => input[key] !== undefined && input[key] !== null;
  if (set('binaryFormat')) options.binaryFormat = enumValue(input.binaryFormat, ENUMS.binaryFormat, `${where}.binaryFormat`);
  if (set('dataFormat')) {
    const format = enumValue(input.dataFormat, ENUMS.dataFormat, `${where}.dataFormat`);
    if (format !== 'default') options.dataFormat = format;
  }
  if (set('numberFormat')) options.numberFormat = enumValue(input.numberFormat, ENUMS.numberFormat, `${where}.numberFormat`);
  if (set('stringFormat')) options.stringFormat = enumValue(input.stringFormat, ENUMS.stringFormat, `${where}.stringFormat`);
  if (set('variantFormat')) options.variantFormat = enumValue(input.variantFormat, ENUMS.variantFormat, `${where}.variantFormat`);
  for (const key of ['includeFields', 'excludeFields', 'includePaths', 'excludePaths'] as const) {
    if (set(key)) {
      const list = stringList(input[key], `${where}.${key}`);
      options[key] = key.endsWith('Fields') ? list.map((name) => name.toLowerCase()) : list.map(normalizePath);
    }
  }
  if ((options.includeFields?.length ?? 0) > 0 && (options.excludeFields?.length ?? 0) > 0) {
    throw new EngineError('INVALID_PARAMETER', { param: `${where}.includeFields`, reason: 'includeFields and excludeFields are mutually exclusive' });
  }
  if ((options.includePaths?.length ?? 0) > 0 && (options.excludePaths?.length ?? 0) > 0) {
    throw new EngineError('INVALID_PARAMETER', { param: `${where}.includePaths`, reason: 'includePaths and excludePaths are mutually exclusive' });
  }
  if (set('omit')) options.omit = parseOmit(input.omit, `${where}.omit`);
  return options;
}

/** `omit` is an array of property names or an object whose keys (with a value other than false) are the names. */
function parseOmit(value: unknown, param: string): string[] {
  if (Array.isArray(value)) return stringList(value, param);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as Record<string, unknown>).filter(([, flag]) => flag !== false).map(([key]) => key);
  }
  throw new EngineError('INVALID_PARAMETER', { param, reason: 'expected an array of property names or an object' });
}

/** `Doc.a.b` → `doc.a.b`: the field part is case-insensitive, the property path is not. */
function normalizePath(path: string): string {
  const dot = path.indexOf('.');
  return dot < 0 ? path.toLowerCase() : `${path.slice(0, dot).toLowerCase()}${path.slice(dot)}`;
}

function first<T>(...candidates: Array<T | undefined>): T | undefined {
  for (const candidate of candidates) if (candidate !== undefined) return candidate;
  return undefined;
}

function firstPair(levels: ResponseOptions[], include: 'includeFields' | 'includePaths', exclude: 'excludeFields' | 'excludePaths'): [string[], string[]] {
  for (const level of levels) {
    const inc = level[include] ?? [];
    const exc = level[exclude] ?? [];
    if (inc.length > 0 || exc.length > 0) return [inc, exc];
  }
  return [[], []];
}

/**
 * Resolves the options a response uses. `request` is the envelope's (already validated) options;
 * session and server defaults are validated here too (they were checked when set, so errors are rare).
 */
export function resolveResponseOptions(request: ResponseOptions, session: SessionDefaults | undefined, server: ServerDefaults): ResolvedResponseOptions {
  const sessionOptions = session ? parseResponseOptions(session.defaultResponseOptions, 'defaultResponseOptions') : {};
  const serverOptions = parseResponseOptions(server.default_response_options, 'default_response_options');
  const levels = [request, sessionOptions, serverOptions];
  const [includeFields, excludeFields] = firstPair(levels, 'includeFields', 'excludeFields');
  const [includePaths, excludePaths] = firstPair(levels, 'includePaths', 'excludePaths');
  return {
    binaryFormat: first(request.binaryFormat, sessionOptions.binaryFormat, session?.defaultBinaryFormat, serverOptions.binaryFormat, server.default_binary_format) ?? 'hex',
    dataFormat: first(request.dataFormat, sessionOptions.dataFormat, serverOptions.dataFormat) ?? 'arrays',
    numberFormat: first(request.numberFormat, sessionOptions.numberFormat, session?.defaultNumberFormat, serverOptions.numberFormat, server.default_number_format) ?? 'number',
    stringFormat: first(request.stringFormat, sessionOptions.stringFormat, serverOptions.stringFormat) ?? 'json',
    variantFormat: first(request.variantFormat, sessionOptions.variantFormat, session?.defaultVariantFormat, serverOptions.variantFormat) ?? 'json',
    includeFields,
    excludeFields,
    includePaths,
    excludePaths,
    omit: first(request.omit, sessionOptions.omit, serverOptions.omit) ?? [],
  };
}

/** The value format record reads use (actions write and read ISO 8601 dates). */
/** The value format results are written in (one shared object per combination: codec caches key on it). */
export function readFormat(options: ResolvedResponseOptions): ValueFormat {
  return internFormat({
    dateFormat: 'iso',
    binaryFormat: options.binaryFormat,
    variantFormat: options.variantFormat,
    numberFormat: options.numberFormat,
    stringFormat: options.stringFormat,
  });
}

export const RESPONSE_OPTION_ENUMS = ENUMS;
