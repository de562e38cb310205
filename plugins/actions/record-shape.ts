/**
 * Shapes record results of the db actions: column metadata, includeFields/excludeFields,
 * includePaths/excludePaths, and `dataFormat` arrays or objects.
 */
import type { ColumnDefinition, IndexDefinition, TableDefinition } from '../../kernel/storage/types';
import { encodeValue, VARIANT_SCHEMA_ID, type ValueFormat } from '../../lib/values/wire-format';
import type { EncodedRecord } from '../../lib/data/command-types';
import type { ResolvedResponseOptions } from './response-options';

export interface FieldMeta {
  name: string;
  type: string;
  length: number | null;
  scale: number | null;
  autoTimestamp: string;
  defaultValue: unknown;
  nullable: boolean;
  primaryKey: number;
  autoValue: string;
}

const AUTO_TIMESTAMP: Record<string, string> = {
  timestampOnInsert: 'onInsert',
  timestampOnUpdate: 'onUpdate',
  timestampOnUpdateAndInsert: 'onUpdateAndInsert',
};

export function fieldMeta(column: ColumnDefinition, format: ValueFormat): FieldMeta {
  let defaultValue: unknown = null;
  if (column.defaultValue !== null && column.defaultValue !== undefined) {
    try {
      defaultValue = encodeValue(column, column.defaultValue, format);
    } catch {
      defaultValue = null;
    }
  }
  return {
    name: column.name,
    type: column.type,
    length: column.length ?? null,
    scale: column.scale ?? null,
    autoTimestamp: AUTO_TIMESTAMP[column.autoValue] ?? 'none',
    defaultValue,
    nullable: column.nullable,
    primaryKey: column.primaryKey,
    autoValue: column.autoValue,
  };
}

export function indexMeta(index: IndexDefinition): Record<string, unknown> {
  return {
    indexName: index.name,
    unique: index.unique,
    automatic: index.automatic,
    fields: index.fields.map((segment) => {
      const out: Record<string, unknown> = { name: segment.name, ascending: segment.ascending, sortDescending: !segment.ascending };
      if (segment.key !== undefined) out.key = segment.key;
      if (segment.type !== undefined) out.type = segment.type;
      if (segment.size !== undefined) out.size = segment.size;
      return out;
    }),
  };
}

export function tableMeta(table: TableDefinition, ownerName: string, format: ValueFormat): Record<string, unknown> {
  return {
    databaseName: table.database,
    ownerName,
    tableName: table.name,
    fields: table.columns.map((column) => fieldMeta(column, format)),
    indexes: table.indexes.map(indexMeta),
    primaryKeyFields: table.columns.filter((column) => column.primaryKey > 0).map((column) => column.name),
    integrationTable: table.topic !== null,
    topic: table.topic,
    createdAt: table.createdAt,
  };
}

// ------------------------------------------------------------------------------------- paths

type Json = unknown;

function isPlainObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Keeps only the given property paths (each a list of keys; an empty list keeps everything).
 * Arrays are projected element by element; scalars are kept as they are.
 */
function pickPaths(value: Json, paths: string[][]): Json {
  if (paths.some((path) => path.length === 0)) return value;
  if (Array.isArray(value)) return value.map((item) => pickPaths(item, paths));
  if (!isPlainObject(value)) return value; // a scalar has no properties to choose from: kept
  const byKey = new Map<string, string[][]>();
  for (const [key, ...rest] of paths) {
    const list = byKey.get(key) ?? [];
    list.push(rest);
    byKey.set(key, list);
  }
  const out: Record<string, Json> = {};
  for (const [key, rests] of byKey) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    out[key] = pickPaths(value[key], rests);
  }
  return out;
}

/** Removes one property path (a non-empty list of keys), copying what it changes. */
function removePath(value: Json, path: string[]): Json {
  if (Array.isArray(value)) return value.map((item) => removePath(item, path));
  if (!isPlainObject(value) || !Object.prototype.hasOwnProperty.call(value, path[0])) return value;
  const out: Record<string, Json> = { ...value };
  if (path.length === 1) delete out[path[0]];
  else out[path[0]] = removePath(value[path[0]], path.slice(1));
  return out;
}

/** Applies paths to a field value; a variant object's `value` is what the paths address. */
function onJson(value: Json, apply: (inner: Json) => Json): Json {
  if (isPlainObject(value) && value.schema === VARIANT_SCHEMA_ID && Object.hasOwn(value, 'value')) {
    return { ...value, value: apply(value.value) };
  }
  return apply(value);
}

interface PathPlan {
  include: Map<string, string[][]>;
  exclude: Map<string, string[][]>;
}

function planPaths(options: ResolvedResponseOptions): PathPlan {
  const group = (paths: string[]): Map<string, string[][]> => {
    const map = new Map<string, string[][]>();
    for (const path of paths) {
      const [field, ...rest] = path.split('.');
      const list = map.get(field) ?? [];
      list.push(rest.filter((part) => part.length > 0));
      map.set(field, list);
    }
    return map;
  };
  return { include: group(options.includePaths), exclude: group(options.excludePaths) };
}

// ------------------------------------------------------------------------------------- records

export interface ShapedRecords {
  fields: FieldMeta[];
  data: unknown[];
}

/** The visible columns after includeFields / excludeFields and bare-field excludePaths. */
function visibleColumns(columns: ColumnDefinition[], options: ResolvedResponseOptions, plan: PathPlan): ColumnDefinition[] {
  let visible = columns;
  if (options.includeFields.length > 0) {
    const wanted = new Set(options.includeFields);
    visible = visible.filter((column) => wanted.has(column.name));
  } else if (options.excludeFields.length > 0) {
    const unwanted = new Set(options.excludeFields);
    visible = visible.filter((column) => !unwanted.has(column.name));
  }
  const removed = [...plan.exclude].filter(([, paths]) => paths.some((path) => path.length === 0)).map(([field]) => field);
  if (removed.length > 0) visible = visible.filter((column) => !removed.includes(column.name));
  return visible;
}

export function shapeRecords(columns: ColumnDefinition[], records: EncodedRecord[], options: ResolvedResponseOptions, format: ValueFormat): ShapedRecords {
  const plan = planPaths(options);
  const visible = visibleColumns(columns, options, plan);
  const valueOf = (record: EncodedRecord, name: string): unknown => {
    let value: unknown = Object.hasOwn(record, name) ? record[name] ?? null : null;
    const include = plan.include.get(name);
    if (include && value !== null) value = onJson(value, (inner) => pickPaths(inner, include));
    const exclude = plan.exclude.get(name);
    if (exclude && value !== null) {
      for (const path of exclude) if (path.length > 0) value = onJson(value, (inner) => removePath(inner, path));
    }
    return value;
  };
  const data = options.dataFormat === 'objects'
    ? records.map((record) => {
      const out: Record<string, unknown> = {};
      for (const column of visible) out[column.name] = valueOf(record, column.name);
      return out;
    })
    : records.map((record) => visible.map((column) => valueOf(record, column.name)));
  return { fields: visible.map((column) => fieldMeta(column, format)), data };
}
