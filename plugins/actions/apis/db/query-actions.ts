/**
 * `db` actions that read records through an index or in id order (getRecordsBy*, key ranges),
 * and the cursors they can return.
 */
import { EngineError } from '../../../../kernel/errors';
import type { ActionDefinition } from '../../action-table';
import type { CursorFetchResult, CursorOpenResult, IndexResult, RecordFindResult, WireBound } from '../../../../lib/data/command-types';
import { addComparison, comparisonOperator, type ComparisonOperator, type ValueBounds } from '../../../../lib/query/query-plan';
import type { ActionCall } from '../../action-table';
import { readFormat } from '../../response-options';
import { shapeRecords } from '../../record-shape';
import { SQL_CURSOR_PREFIX, sqlOptions } from './sql-actions';
import {
  DEFAULT_MAX_RECORDS, exec, IN_TABLE, inTable, isPlainObject, MAX_RECORDS_PER_CALL, NAME, READ, recordsResult, schema, transaction,
  type Params,
} from './db-call';

/** getRecordsFromCursor `startFrom` (the established product's values) → cursor.fetch `from`. */
const CURSOR_START = { currentPosition: 'current', beforeFirstRecord: 'start', afterLastRecord: 'end' } as const;

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

export const queryActions: readonly ActionDefinition[] = [
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
      const command = String(p.cursorId).startsWith(SQL_CURSOR_PREFIX) ? 'sql.cursorFetch' : 'cursor.fetch';
      const options = command === 'sql.cursorFetch' ? sqlOptions(call) : call.options;
      const got = await exec<CursorFetchResult>(call, command, {
        cursorId: p.cursorId,
        count: Math.abs(fetch),
        direction: fetch < 0 ? 'backward' : 'forward',
        from,
        skip: p.skipRecords,
        format: readFormat(options),
      });
      return recordsResult({ ...call, options }, got.fields, got.records, { moreRecords: got.more, requestedRecordCount: Math.abs(fetch), totalRecordCount: -1 });
    },
  },
  {
    action: 'closeCursor',
    params: schema({ cursorId: { type: 'string', minLength: 1 } }, ['cursorId']),
    async handler(call) {
      const cursorId = String((call.params as Params).cursorId);
      await exec(call, cursorId.startsWith(SQL_CURSOR_PREFIX) ? 'sql.cursorClose' : 'cursor.close', { cursorId });
      return {};
    },
  },
];
