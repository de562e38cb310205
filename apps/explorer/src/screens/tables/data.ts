/**
 * The Data Explorer's server calls and value handling: table descriptions, a page of records in
 * index order (or an index range), typed conversion of what the user types, and CSV/JSON export
 * of fetched rows as a download made in the browser.
 */
import { call } from '../../api.js';

export interface FieldInfo {
  name: string;
  type: string;
  length: number | null;
  scale: number | null;
  nullable: boolean;
  primaryKey: number;
  autoValue: string;
  defaultValue: unknown;
}

export interface IndexSegment {
  name: string;
  ascending?: boolean;
  sortDescending?: boolean;
  key?: string;
  type?: string;
  size?: number;
}

export interface IndexInfo {
  indexName: string;
  unique: boolean;
  automatic: boolean;
  fields: IndexSegment[];
}

export interface TableInfo {
  databaseName: string;
  tableName: string;
  fields: FieldInfo[];
  indexes: IndexInfo[];
  integrationTable: boolean;
  topic: string | null;
  createdAt?: string;
}

export type Row = Record<string, unknown>;

export interface RecordPage {
  fields: string[];
  rows: Row[];
  more: boolean;
  /** Records in the table (not matches). */
  total: number;
}

/** The record-ID index every table has. */
export const ID_INDEX = 'id_pk';

/** The table's description (describeTables) and its indexes (listIndexes). */
export async function describeTable(databaseName: string, tableName: string, signal?: AbortSignal): Promise<TableInfo> {
  const [described, indexes] = await Promise.all([
    call<{ data: TableInfo[] }>('db', 'describeTables', { databaseName, tableNames: [tableName] }, signal),
    call<{ data: IndexInfo[] }>('db', 'listIndexes', { databaseName, tableName }, signal),
  ]);
  const info = described.data[0];
  if (!info) throw new Error(`no table "${tableName}" in database "${databaseName}"`);
  return { ...info, indexes: indexes.data };
}

export interface RecordQuery {
  databaseName: string;
  tableName: string;
  /** '' or id_pk: record-ID order. */
  indexName: string;
  page: number;
  size: number;
  /** Index range bounds (whole-key values), or undefined. */
  from?: unknown[];
  to?: unknown[];
  /** A filter expression (docs/queries.md), or undefined. */
  filter?: string;
}

/** One page of records, in the chosen index's order, optionally within a key range. */
export async function fetchRecords(query: RecordQuery, signal?: AbortSignal): Promise<RecordPage> {
  const params: Record<string, unknown> = {
    databaseName: query.databaseName,
    tableName: query.tableName,
    skipRecords: (query.page - 1) * query.size,
    maxRecords: query.size,
  };
  if (query.filter) params.tableFilter = query.filter;
  let action = 'getRecordsByTable';
  const indexName = query.indexName || ID_INDEX;
  if (query.from || query.to) {
    action = 'getRecordsInKeyRange';
    const range: Record<string, unknown[]> = {};
    if (query.from) range['>='] = query.from;
    if (query.to) range['<='] = query.to;
    Object.assign(params, { indexName, indexRange: range });
  } else if (indexName !== ID_INDEX) {
    action = 'getRecordsByIndex';
    params.indexName = indexName;
  }
  const result = await call<{ dataFormat: string; fields: Array<{ name: string }>; data: unknown[]; moreRecords: boolean; totalRecordCount: number }>('db', action, params, signal);
  const fields = result.fields.map((field) => field.name);
  const rows = result.dataFormat === 'arrays'
    ? (result.data as unknown[][]).map((values) => Object.fromEntries(fields.map((name, at) => [name, values[at]])))
    : result.data as Row[];
  return { fields, rows, more: result.moreRecords, total: result.totalRecordCount };
}

const NUMERIC = new Set(['tinyint', 'smallint', 'integer', 'int', 'bigint', 'real', 'float', 'double', 'money', 'number', 'decimal']);

/** A value typed as text, converted for a column (or JSON-property segment) of type `type`. */
export function convertInput(text: string, type: string, nullable = true): unknown {
  const kind = type.toLowerCase();
  const trimmed = text.trim();
  if (NUMERIC.has(kind)) {
    if (trimmed === '') {
      if (nullable) return null;
      throw new Error('a number is required');
    }
    if (/^-?\d+$/.test(trimmed) && trimmed.replace('-', '').length > 15) return trimmed;
    const number = Number(trimmed);
    if (!Number.isFinite(number)) throw new Error(`"${text}" is not a number`);
    return number;
  }
  if (kind === 'bit' || kind === 'boolean') {
    if (/^(true|1|yes)$/i.test(trimmed)) return true;
    if (/^(false|0|no)$/i.test(trimmed)) return false;
    if (trimmed === '' && nullable) return null;
    throw new Error(`"${text}" is not true or false`);
  }
  if (kind === 'json') {
    if (trimmed === '') return null;
    return JSON.parse(trimmed);
  }
  if (kind === 'variant') {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  if (trimmed === '' && nullable && /date|time|binary/.test(kind)) return null;
  return text;
}

/** The type of an index segment: its own (JSON property) or its column's. */
export function segmentType(segment: IndexSegment, fields: FieldInfo[]): string {
  return segment.type ?? fields.find((field) => field.name === segment.name)?.type ?? 'varchar';
}

/**
 * A range bound as typed: a JSON array bounds several leading segments (`["even", 10]`); anything
 * else is a value of the first segment, converted with its type. Empty: no bound.
 */
export function parseBound(text: string, index: IndexInfo | undefined, fields: FieldInfo[]): unknown[] | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (trimmed.startsWith('[')) {
    const value = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(value)) throw new Error('a bound in brackets must be a JSON array');
    return value;
  }
  const first = index?.fields[0];
  const type = first ? segmentType(first, fields) : 'bigint';
  // "line3" in quotes is the text line3 (the quotes are not part of it): quoted, the bound sorted
  // before every value, and the range silently held everything.
  if (/^".*"$/s.test(trimmed) && !NUMERIC.has(type.toLowerCase())) {
    const unquoted = JSON.parse(trimmed) as unknown;
    if (typeof unquoted === 'string') return [convertInput(unquoted, type, false)];
  }
  return [convertInput(text, type, false)];
}

/** Compares two bounds value by value (numbers as numbers, the rest as text); 0 when equal or not comparable. */
function compareBounds(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'number' && typeof y === 'number') {
      if (x !== y) return x < y ? -1 : 1;
    } else if (typeof x === 'string' && typeof y === 'string') {
      if (x !== y) return x < y ? -1 : 1;
    } else return 0;
  }
  return 0;
}

/**
 * The range's low and high bound, whichever order they were typed in: the server reads `>=` and
 * `<=` as values, so "from 40 to 20" on a descending index (its display order) finds the rows
 * between them instead of none.
 */
export function orderedBounds(from: unknown[] | undefined, to: unknown[] | undefined): { from?: unknown[]; to?: unknown[] } {
  if (from && to && compareBounds(from, to) > 0) return { from: to, to: from };
  return { from, to };
}

/** A cell's text for display and for its editor. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** RFC 4180 CSV: a header of field names, then one line per row; JSON values as JSON text. */
export function toCsv(fields: string[], rows: Row[]): string {
  const quote = (value: unknown): string => {
    const text = cellText(value);
    return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [fields.map(quote).join(','), ...rows.map((row) => fields.map((field) => quote(row[field])).join(','))].join('\r\n') + '\r\n';
}

/** Starts a download of `text` made in the browser (no request to the server). */
export function downloadText(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The JSON prefilled in the insert editor: every column a client sets, with a value of its type. */
export function insertTemplate(fields: FieldInfo[]): Row {
  const template: Row = {};
  for (const field of fields) {
    if (field.autoValue && field.autoValue !== 'none') continue;
    if (field.defaultValue !== null && field.defaultValue !== undefined) {
      template[field.name] = field.defaultValue;
      continue;
    }
    const kind = field.type.toLowerCase();
    if (NUMERIC.has(kind)) template[field.name] = 0;
    else if (kind === 'bit') template[field.name] = false;
    else if (kind === 'json') template[field.name] = {};
    else if (/char|variant/.test(kind)) template[field.name] = '';
    else template[field.name] = null;
  }
  return template;
}

