/**
 * The `db` api: databases, tables, indexes, records, cursors and transactions, each mapped to a
 * data command of plugins/data (command-types.ts). Values travel as wire values with a `format`;
 * the commands decode and encode them, this file only reshapes params and results.
 */
import { internFormat } from '../../data/values/interned-formats';
import { EngineError } from '../../../kernel/errors';
import type { ParamsSchema } from '../../../kernel/bus/command';
import type {
  CursorFetchResult, CursorOpenResult, DatabaseListResult, FormatParam, IndexListResult, IndexResult,
  RecordDeleteResult, RecordFindResult, RecordGetResult, RecordInsertResult, TableDescribeResult,
  TableListResult, TableResult, TransactionResult, WireBound, EncodedRecord,
} from '../../data/command-types';
import { addComparison, comparisonOperator, type ComparisonOperator, type ValueBounds } from '../../data/query-plan';
import type { ColumnDefinition } from '../../../kernel/storage/types';
import type { ActionCall, ActionDefinition } from '../action-table';
import { enumValue, readFormat, RESPONSE_OPTION_ENUMS } from '../response-options';
import { indexMeta, shapeRecords, tableMeta } from '../record-shape';

/** Largest `maxRecords` / `fetchRecords` of one call (page through more with a cursor). */
export const MAX_RECORDS_PER_CALL = 100_000;
export const DEFAULT_MAX_RECORDS = 20;
/** getRecordsFromCursor `startFrom` (the established product's values) → cursor.fetch `from`. */
const CURSOR_START = { currentPosition: 'current', beforeFirstRecord: 'start', afterLastRecord: 'end' } as const;

// ------------------------------------------------------------------------------------- schemas

const NAME = { type: 'string', minLength: 1, maxLength: 64 } as const;
const NAMES = { type: 'array', minItems: 1, items: NAME } as const;
const LOCATION = { databaseName: NAME, ownerName: NAME } as const;
const IN_TABLE = { ...LOCATION, tableName: NAME } as const;
const ID = { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^[0-9]{1,16}$' }] } as const;
const TRANSACTION = { transactionId: { type: 'string', minLength: 1 } } as const;
const READ = {
  tableFilter: { type: 'string' },
  reverseOrder: { type: 'boolean', default: false },
  skipRecords: { type: 'integer', minimum: 0, default: 0 },
  maxRecords: { type: 'integer', minimum: 1, maximum: MAX_RECORDS_PER_CALL, default: DEFAULT_MAX_RECORDS },
  returnCursor: { type: 'boolean', default: false },
  ...TRANSACTION,
} as const;
const WRITE = {
  ...IN_TABLE,
  dataFormat: { type: 'string' },
  fieldNames: { type: 'array', items: { type: 'string', minLength: 1 } },
  sourceData: { type: 'array', minItems: 1 },
  binaryFormat: { type: 'string' },
  variantFormat: { type: 'string' },
  ...TRANSACTION,
} as const;

function schema(properties: Record<string, unknown>, required: string[] = []): ParamsSchema {
  return { type: 'object', properties, required };
}

// ------------------------------------------------------------------------------------- helpers

type Params = Record<string, any>;

function exec<R>(call: ActionCall, command: string, params: Record<string, unknown>): Promise<R> {
  const bus = call.engine.bus;
  if (!bus.has(command)) {
    return Promise.reject(new EngineError('NOT_AVAILABLE', { feature: 'the db api', reason: `no loaded plugin registers the command ${command} (load a storage plugin)` }));
  }
  return bus.execute<R>(command, params, call.ctx!);
}

function bytesCheck(value: string, param: string): string {
  if (Buffer.byteLength(value) > 64) throw new EngineError('INVALID_PARAMETER', { param, reason: 'at most 64 bytes' });
  return value;
}

/** databaseName and ownerName, defaulting to the session's. */
function where(call: ActionCall): { database: string; owner: string } {
  const p = call.params as Params;
  const database = bytesCheck(p.databaseName ?? call.session!.settings.defaultDatabaseName, 'databaseName');
  const owner = bytesCheck(p.ownerName ?? call.session!.settings.defaultOwnerName, 'ownerName');
  return { database, owner };
}

function inTable(call: ActionCall): { database: string; table: string; owner: string } {
  const { database, owner } = where(call);
  return { database, owner, table: bytesCheck((call.params as Params).tableName, 'tableName') };
}

/** How the request writes values: params.binaryFormat / variantFormat over the session's defaults. */
/** The value format of the request's values (one shared object per combination: codec caches key on it). */
function writeFormat(call: ActionCall): FormatParam {
  const p = call.params as Params;
  const settings = call.session!.settings;
  return internFormat({
    dateFormat: 'iso',
    binaryFormat: p.binaryFormat !== undefined ? enumValue(p.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, 'binaryFormat') : settings.defaultBinaryFormat,
    variantFormat: p.variantFormat !== undefined ? enumValue(p.variantFormat, RESPONSE_OPTION_ENUMS.variantFormat, 'variantFormat') : settings.defaultVariantFormat,
    numberFormat: 'number',
    stringFormat: 'json',
  });
}

function transaction(call: ActionCall): { transactionId?: string } {
  const id = (call.params as Params).transactionId as string | undefined;
  return id === undefined ? {} : { transactionId: id };
}

function parseId(value: unknown, param: string): number {
  const id = typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) {
    throw new EngineError('INVALID_PARAMETER', { param, reason: 'a record id is a positive integer' });
  }
  return id;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type SourceFormat = 'objects' | 'arrays';

/** Validates sourceData against dataFormat (objects | arrays | autoDetect) and fieldNames. */
function sourceRecords(call: ActionCall): { dataFormat: SourceFormat; records: unknown[]; fieldNames?: string[] } {
  const p = call.params as Params;
  const requested = p.dataFormat === undefined ? 'autoDetect' : enumValue(p.dataFormat, ['objects', 'arrays', 'autoDetect'] as const, 'dataFormat');
  const source = p.sourceData as unknown[];
  const dataFormat: SourceFormat = requested === 'autoDetect' ? (Array.isArray(source[0]) ? 'arrays' : 'objects') : requested;
  if (dataFormat === 'objects') {
    for (let i = 0; i < source.length; i++) {
      if (!isPlainObject(source[i])) throw new EngineError('INVALID_PARAMETER', { param: `sourceData[${i}]`, reason: 'expected an object (dataFormat objects)' });
    }
    return { dataFormat, records: source };
  }
  const fieldNames = p.fieldNames as string[] | undefined;
  if (!fieldNames) throw new EngineError('MISSING_PARAMETER', { param: 'fieldNames' });
  const width = fieldNames.length;
  for (let i = 0; i < source.length; i++) {
    const record = source[i];
    if (!Array.isArray(record)) throw new EngineError('INVALID_PARAMETER', { param: `sourceData[${i}]`, reason: 'expected an array (dataFormat arrays)' });
    if (record.length !== width) {
      throw new EngineError('INVALID_PARAMETER', { param: `sourceData[${i}]`, reason: `has ${record.length} values for ${width} fieldNames` });
    }
  }
  return { dataFormat, records: source, fieldNames };
}

interface Counts {
  moreRecords: boolean;
  requestedRecordCount: number;
  totalRecordCount: number;
}

function recordsResult(call: ActionCall, fields: ColumnDefinition[], records: EncodedRecord[], counts: Counts): Record<string, unknown> {
  const format = readFormat(call.options);
  const shaped = shapeRecords(fields, records, call.options, format);
  return {
    dataFormat: call.options.dataFormat,
    binaryFormat: call.options.binaryFormat,
    numberFormat: call.options.numberFormat,
    fields: shaped.fields,
    data: shaped.data,
    moreRecords: counts.moreRecords,
    requestedRecordCount: counts.requestedRecordCount,
    returnedRecordCount: records.length,
    totalRecordCount: counts.totalRecordCount,
  };
}

function andFilters(...filters: Array<string | undefined>): string | undefined {
  const present = filters.filter((filter): filter is string => filter !== undefined && filter.trim() !== '');
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return present.map((filter) => `(${filter})`).join(' && ');
}

interface FindBase {
  index?: string;
  lower?: WireBound;
  upper?: WireBound;
  filter?: string;
}

/** The getRecords* family: record.find, or cursor.open with returnCursor. */
async function find(call: ActionCall, base: FindBase): Promise<Record<string, unknown>> {
  const p = call.params as Params;
  const { database, table } = inTable(call);
  const format = readFormat(call.options);
  const common = {
    database,
    table,
    ...(base.index !== undefined ? { index: base.index } : {}),
    ...(base.lower ? { lower: base.lower } : {}),
    ...(base.upper ? { upper: base.upper } : {}),
    ...(andFilters(p.tableFilter, base.filter) !== undefined ? { filter: andFilters(p.tableFilter, base.filter) } : {}),
    reverse: p.reverseOrder as boolean,
    format,
    ...transaction(call),
  };
  if (p.returnCursor) {
    const opened = await exec<CursorOpenResult>(call, 'cursor.open', { ...common, skip: p.skipRecords as number });
    const shaped = shapeRecords(opened.fields, [], call.options, format);
    return { cursorId: opened.cursorId, dataFormat: call.options.dataFormat, binaryFormat: call.options.binaryFormat, fields: shaped.fields };
  }
  const found = await exec<RecordFindResult>(call, 'record.find', { ...common, skip: p.skipRecords as number, limit: p.maxRecords as number, countTotal: true });
  return recordsResult(call, found.fields, found.records, {
    moreRecords: found.more,
    requestedRecordCount: p.maxRecords as number,
    totalRecordCount: found.total ?? -1,
  });
}

// ------------------------------------------------------------------------------------- key ranges

/** A literal of the filter language for a comparison value (strings double-quoted and escaped). */
function filterLiteral(value: unknown, param: string): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  throw new EngineError('INVALID_PARAMETER', { param, reason: 'a key value on a later index segment must be a string, number, boolean or null' });
}

interface Range extends ValueBounds { filter?: string }

function comparison(operator: unknown, param: string): ComparisonOperator {
  const known = typeof operator === 'string' ? comparisonOperator(operator) : undefined;
  if (known === undefined || operator === '==') throw new EngineError('INVALID_PARAMETER', { param, reason: 'operators are =, >, >=, <, <=' });
  return known;
}

/**
 * `indexRange` (ours): `{">=": [v1, v2], "<": [v1]}` — bounds on the leading segments of the
 * index compared as whole keys; `"="` sets both bounds. Scalars count as one-value arrays.
 */
function rangeFromIndexRange(raw: unknown): Range {
  if (!isPlainObject(raw)) throw new EngineError('INVALID_PARAMETER', { param: 'indexRange', reason: 'expected an object like {">=": [value], "<": [value]}' });
  const range: Range = {};
  for (const [op, given] of Object.entries(raw)) {
    const operator = comparison(op, `indexRange.${op}`);
    const values = Array.isArray(given) ? given : [given];
    if (values.length === 0) throw new EngineError('INVALID_PARAMETER', { param: `indexRange.${op}`, reason: 'give at least one key value' });
    if (addComparison(range, operator, values) !== undefined) {
      throw new EngineError('INVALID_PARAMETER', { param: `indexRange.${op}`, reason: 'at most one lower and one upper bound' });
    }
  }
  return range;
}

/**
 * `indexFilter.indexFieldFilters` (the established product): `[{fieldName, operator, value}]`, a
 * range per index field. Filters on the index's first field become key bounds; filters on later
 * fields are exact per-field conditions added to the table filter.
 */
function rangeFromFieldFilters(raw: unknown, segments: string[]): Range {
  if (!Array.isArray(raw)) throw new EngineError('INVALID_PARAMETER', { param: 'indexFilter.indexFieldFilters', reason: 'expected an array of {fieldName, operator, value}' });
  const range: Range = {};
  const conditions: string[] = [];
  raw.forEach((item, i) => {
    const param = `indexFilter.indexFieldFilters[${i}]`;
    if (!isPlainObject(item)) throw new EngineError('INVALID_PARAMETER', { param, reason: 'expected {fieldName, operator, value}' });
    if (typeof item.fieldName !== 'string') throw new EngineError('MISSING_PARAMETER', { param: `${param}.fieldName` });
    if (typeof item.operator !== 'string') throw new EngineError('MISSING_PARAMETER', { param: `${param}.operator` });
    if (!Object.hasOwn(item, 'value')) throw new EngineError('MISSING_PARAMETER', { param: `${param}.value` });
    const operator = comparison(item.operator, `${param}.operator`);
    const field = item.fieldName.toLowerCase();
    const position = segments.indexOf(field);
    if (position < 0) throw new EngineError('INVALID_PARAMETER', { param: `${param}.fieldName`, reason: `"${item.fieldName}" is not a field of the index` });
    if (position > 0) {
      conditions.push(`${field} ${operator === '=' ? '==' : operator} ${filterLiteral(item.value, `${param}.value`)}`);
      return;
    }
    if (addComparison(range, operator, [item.value]) !== undefined) {
      throw new EngineError('INVALID_PARAMETER', { param, reason: 'at most one lower and one upper bound per field' });
    }
  });
  if (conditions.length > 0) range.filter = conditions.join(' && ');
  return range;
}

async function keyRange(call: ActionCall): Promise<FindBase> {
  const p = call.params as Params;
  const indexFilter = p.indexFilter as Params | undefined;
  const indexName = (indexFilter?.indexName ?? p.indexName) as string | undefined;
  if (indexName === undefined) throw new EngineError('MISSING_PARAMETER', { param: 'indexName' });
  if (indexFilter?.indexFieldFilters !== undefined) {
    const { database, table } = inTable(call);
    const { index } = await exec<IndexResult>(call, 'index.get', { database, table, index: indexName });
    return { index: indexName, ...rangeFromFieldFilters(indexFilter.indexFieldFilters, index.fields.map((segment) => segment.name.toLowerCase())) };
  }
  if (p.indexRange !== undefined) return { index: indexName, ...rangeFromIndexRange(p.indexRange) };
  return { index: indexName };
}

// ------------------------------------------------------------------------------------- actions

const NOT_SUPPORTED_ALTERATIONS = ['alterFields', 'deleteFields', 'renameFields', 'addIndexes', 'deleteIndexes'];

export const dbActions: readonly ActionDefinition[] = [
  // databases
  {
    action: 'createDatabase',
    params: schema({ databaseName: NAME }, ['databaseName']),
    async handler(call) {
      const database = bytesCheck((call.params as Params).databaseName, 'databaseName');
      await exec(call, 'database.create', { database });
      return { databaseName: database.toLowerCase() };
    },
  },
  {
    action: 'listDatabases',
    params: schema({}),
    async handler(call) {
      const { databases } = await exec<DatabaseListResult>(call, 'database.list', {});
      return { dataFormat: 'objects', data: databases.map((databaseName) => ({ databaseName })), totalRecordCount: databases.length };
    },
  },
  {
    action: 'deleteDatabase',
    params: schema({ databaseName: NAME }, ['databaseName']),
    async handler(call) {
      await exec(call, 'database.delete', { database: bytesCheck((call.params as Params).databaseName, 'databaseName') });
      return {};
    },
  },

  // tables
  {
    action: 'createTable',
    params: schema({ ...IN_TABLE, fields: { type: 'array', items: { type: 'object' } } }, ['tableName', 'fields']),
    async handler(call) {
      const { database, table, owner } = inTable(call);
      const created = await exec<TableResult>(call, 'table.create', { database, table, fields: (call.params as Params).fields, format: writeFormat(call) });
      return tableMeta(created.table, owner, readFormat(call.options));
    },
  },
  {
    action: 'listTables',
    params: schema({
      ...LOCATION,
      partialTableName: { type: 'string' },
      tableNames: { type: 'array', items: { type: 'string' } },
      skipRecords: { type: 'integer', minimum: 0, default: 0 },
      maxRecords: { type: 'integer', minimum: 1 },
    }),
    async handler(call) {
      const p = call.params as Params;
      const { database, owner } = where(call);
      const { tables } = await exec<TableListResult>(call, 'table.list', { database });
      let names = tables;
      if (typeof p.partialTableName === 'string' && p.partialTableName !== '') {
        const prefix = p.partialTableName.toLowerCase();
        names = names.filter((name) => name.toLowerCase().startsWith(prefix));
      }
      if (Array.isArray(p.tableNames)) {
        const wanted = new Set((p.tableNames as string[]).map((name) => name.toLowerCase()));
        names = names.filter((name) => wanted.has(name.toLowerCase()));
      }
      const total = names.length;
      names = names.slice(p.skipRecords as number, p.maxRecords === undefined ? undefined : (p.skipRecords as number) + (p.maxRecords as number));
      return { dataFormat: 'objects', data: names.map((tableName) => ({ databaseName: database, ownerName: owner, tableName })), totalRecordCount: total };
    },
  },
  {
    action: 'describeTables',
    // No tableNames (or []): every table of the database the caller may describe.
    params: schema({ ...LOCATION, tableNames: { type: 'array', items: NAME } }),
    async handler(call) {
      const { database, owner } = where(call);
      const { tables } = await exec<TableDescribeResult>(call, 'table.describe', { database, tables: (call.params as Params).tableNames ?? [] });
      const format = readFormat(call.options);
      return { dataFormat: 'objects', data: tables.map((table) => tableMeta(table, owner, format)) };
    },
  },
  {
    action: 'deleteTables',
    params: schema({ ...LOCATION, tableNames: NAMES }, ['tableNames']),
    async handler(call) {
      const { database } = where(call);
      await exec(call, 'table.delete', { database, tables: (call.params as Params).tableNames });
      return {};
    },
  },
  {
    action: 'alterTable',
    params: schema({ ...IN_TABLE, addFields: { type: 'array', minItems: 1, items: { type: 'object' } } }, ['tableName', 'addFields']),
    async handler(call) {
      const p = call.params as Params;
      for (const name of NOT_SUPPORTED_ALTERATIONS) {
        if (p[name] !== undefined && !(Array.isArray(p[name]) && p[name].length === 0)) {
          throw new EngineError('INVALID_PARAMETER', { param: name, reason: 'not supported: alterTable can only addFields' });
        }
      }
      const { database, table, owner } = inTable(call);
      const altered = await exec<TableResult>(call, 'table.alter', { database, table, addFields: p.addFields, format: writeFormat(call) });
      return tableMeta(altered.table, owner, readFormat(call.options));
    },
  },

  // indexes
  {
    action: 'createIndex',
    params: schema({
      ...IN_TABLE,
      indexName: NAME,
      unique: { type: 'boolean', default: false },
      fields: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['name'],
          properties: {
            name: NAME,
            ascending: { type: 'boolean' },
            sortDescending: { type: 'boolean' },
            key: { type: 'string' },
            type: { type: 'string' },
            size: { type: 'integer', minimum: 1 },
          },
        },
      },
    }, ['tableName', 'indexName', 'fields']),
    async handler(call) {
      const p = call.params as Params;
      const { database, table } = inTable(call);
      const fields = (p.fields as Params[]).map((segment) => ({
        name: segment.name,
        ascending: segment.ascending ?? (segment.sortDescending === undefined ? true : !segment.sortDescending),
        ...(segment.key !== undefined ? { key: segment.key } : {}),
        ...(segment.type !== undefined ? { type: segment.type } : {}),
        ...(segment.size !== undefined ? { size: segment.size } : {}),
      }));
      const created = await exec<IndexResult>(call, 'index.create', { database, table, index: bytesCheck(p.indexName, 'indexName'), unique: p.unique, fields });
      return { databaseName: database, tableName: table, ...indexMeta(created.index) };
    },
  },
  {
    action: 'listIndexes',
    params: schema(IN_TABLE, ['tableName']),
    async handler(call) {
      const { database, table } = inTable(call);
      const { indexes } = await exec<IndexListResult>(call, 'index.list', { database, table });
      return { dataFormat: 'objects', data: indexes.map((index) => ({ databaseName: database, tableName: table, ...indexMeta(index) })) };
    },
  },
  {
    action: 'deleteIndexes',
    params: schema({ ...IN_TABLE, indexNames: NAMES }, ['tableName', 'indexNames']),
    async handler(call) {
      const { database, table } = inTable(call);
      await exec(call, 'index.delete', { database, table, indexes: (call.params as Params).indexNames });
      return {};
    },
  },

  // records
  {
    action: 'insertRecords',
    params: schema(WRITE, ['tableName', 'sourceData']),
    async handler(call) {
      const { database, table } = inTable(call);
      const { dataFormat, records, fieldNames } = sourceRecords(call);
      const { ids } = await exec<RecordInsertResult>(call, 'record.insert', {
        database, table, records, ...(fieldNames ? { fieldNames } : {}), format: writeFormat(call), ...transaction(call),
      });
      return { dataFormat, ids, insertedRecordCount: ids.length };
    },
  },
  {
    action: 'updateRecords',
    params: schema(WRITE, ['tableName', 'sourceData']),
    async handler(call) {
      const { database, table } = inTable(call);
      const { dataFormat, records, fieldNames } = sourceRecords(call);
      const updates = records.map((record, i) => {
        const values: Record<string, unknown> = {};
        if (fieldNames) fieldNames.forEach((name, j) => { values[name] = (record as unknown[])[j]; });
        else for (const [name, value] of Object.entries(record as Record<string, unknown>)) values[name] = value;
        const idKey = Object.keys(values).find((name) => name.toLowerCase() === 'id');
        if (idKey === undefined || values[idKey] === null || values[idKey] === undefined) {
          throw new EngineError('MISSING_PARAMETER', { param: `sourceData[${i}].id` });
        }
        const id = parseId(values[idKey], `sourceData[${i}].id`);
        delete values[idKey];
        return { id, values };
      });
      await exec(call, 'record.patch', { database, table, records: updates, format: writeFormat(call), ...transaction(call) });
      return { dataFormat, updatedRecordCount: updates.length };
    },
  },
  {
    action: 'deleteRecords',
    params: schema({ ...IN_TABLE, ids: { type: 'array', minItems: 1, items: ID }, ...TRANSACTION }, ['tableName', 'ids']),
    async handler(call) {
      const { database, table } = inTable(call);
      const ids = ((call.params as Params).ids as unknown[]).map((id, i) => parseId(id, `ids[${i}]`));
      const { deleted } = await exec<RecordDeleteResult>(call, 'record.delete', { database, table, ids, ...transaction(call) });
      return { deletedRecordCount: deleted, requestedRecordCount: ids.length };
    },
  },
  {
    action: 'getRecordsByIds',
    params: schema({ ...IN_TABLE, ids: { type: 'array', minItems: 1, maxItems: MAX_RECORDS_PER_CALL, items: ID }, ...TRANSACTION }, ['tableName', 'ids']),
    async handler(call) {
      const { database, table } = inTable(call);
      const ids = ((call.params as Params).ids as unknown[]).map((id, i) => parseId(id, `ids[${i}]`));
      const got = await exec<RecordGetResult>(call, 'record.get', { database, table, ids, format: readFormat(call.options), ...transaction(call) });
      const records = got.records.filter((record): record is EncodedRecord => record !== null);
      return recordsResult(call, got.fields, records, { moreRecords: false, requestedRecordCount: ids.length, totalRecordCount: records.length });
    },
  },
  {
    action: 'getRecordsByTable',
    params: schema({ ...IN_TABLE, ...READ }, ['tableName']),
    handler: (call) => find(call, {}),
  },
  {
    action: 'getRecordsByIndex',
    params: schema({ ...IN_TABLE, ...READ, indexName: NAME }, ['tableName', 'indexName']),
    handler: (call) => find(call, { index: (call.params as Params).indexName }),
  },
  {
    action: 'getRecordsInKeyRange',
    params: schema({
      ...IN_TABLE,
      ...READ,
      indexName: NAME,
      indexRange: { type: 'object' },
      indexFilter: { type: 'object', properties: { indexName: NAME, indexFieldFilters: { type: 'array' } } },
    }, ['tableName']),
    async handler(call) {
      return find(call, await keyRange(call));
    },
  },

  // cursors
  {
    action: 'getRecordsFromCursor',
    params: schema({
      cursorId: { type: 'string', minLength: 1 },
      fetchRecords: { type: 'integer', minimum: -MAX_RECORDS_PER_CALL, maximum: MAX_RECORDS_PER_CALL, default: DEFAULT_MAX_RECORDS },
      skipRecords: { type: 'integer', minimum: 0, default: 0 },
      startFrom: { enum: ['currentPosition', 'beforeFirstRecord', 'afterLastRecord'], default: 'currentPosition' },
    }, ['cursorId']),
    async handler(call) {
      const p = call.params as Params;
      const fetch = p.fetchRecords as number;
      const from = CURSOR_START[p.startFrom as keyof typeof CURSOR_START];
      if (fetch === 0) throw new EngineError('INVALID_PARAMETER', { param: 'fetchRecords', reason: 'fetch at least one record (negative numbers fetch backward)' });
      const got = await exec<CursorFetchResult>(call, 'cursor.fetch', {
        cursorId: p.cursorId,
        count: Math.abs(fetch),
        direction: fetch < 0 ? 'backward' : 'forward',
        from,
        skip: p.skipRecords,
        format: readFormat(call.options),
      });
      return recordsResult(call, got.fields, got.records, { moreRecords: got.more, requestedRecordCount: Math.abs(fetch), totalRecordCount: -1 });
    },
  },
  {
    action: 'closeCursor',
    params: schema({ cursorId: { type: 'string', minLength: 1 } }, ['cursorId']),
    async handler(call) {
      await exec(call, 'cursor.close', { cursorId: (call.params as Params).cursorId });
      return {};
    },
  },

  // transactions
  {
    action: 'createTransaction',
    params: schema({}),
    async handler(call) {
      const { transactionId } = await exec<TransactionResult>(call, 'transaction.begin', {});
      return { transactionId };
    },
  },
  {
    action: 'commitTransaction',
    params: schema({ transactionId: { type: 'string', minLength: 1 } }, ['transactionId']),
    async handler(call) {
      await exec(call, 'transaction.commit', { transactionId: (call.params as Params).transactionId });
      return {};
    },
  },
  {
    action: 'rollbackTransaction',
    params: schema({ transactionId: { type: 'string', minLength: 1 } }, ['transactionId']),
    async handler(call) {
      await exec(call, 'transaction.rollback', { transactionId: (call.params as Params).transactionId });
      return {};
    },
  },
];
