/**
 * `db` actions that run SQL (plugins/sql's `sql.*` commands; docs/sql.md): getRecordsUsingSql
 * (one SELECT) and runSqlStatements (statements in one transaction), under the spellings the
 * product's clients use (action names match without regard to case anyway). getRecordsFromCursor
 * sends ids of SQL cursors here (sqlCursorFetch).
 *
 * The default result shape of these two actions is `objects`, not the general default `arrays`:
 * the product's SQL examples answer objects and the public clients (the SQLAlchemy dialect) send
 * no responseOptions and read each row by field name. An explicit `dataFormat` (in the request's
 * responseOptions or the session's defaultResponseOptions) is honoured.
 */
import type { ActionCall, ActionDefinition } from '../../action-table';
import { EngineError } from '../../../../kernel/errors';
import { readFormat } from '../../response-options';
import { shapeRecords } from '../../record-shape';
import { JsonText } from '../../json-text';
import type { ColumnDefinition } from '../../../../kernel/storage/types';
import type { EncodedRecord } from '../../../../lib/data/command-types';
import { exec, isPlainObject, LOCATION, recordsResult, schema, where, type Params } from './db-call';

/** SQL cursor ids (plugins/sql/sql-cursors.ts) start so; the data commands' ids are 24 characters of base64url. */
export const SQL_CURSOR_PREFIX = 'sql-';

interface QueryResult { fields: ColumnDefinition[]; records?: EncodedRecord[]; json?: string; count?: number; more: boolean; requested: number; total?: number }
interface CursorResult { cursorId: string; fields: ColumnDefinition[] }
interface RunResult {
  committed: boolean;
  statements: Array<{ sql: string; errorCode: number; errorMessage: string; affectedRows: number; fields?: ColumnDefinition[]; records?: EncodedRecord[]; more?: boolean }>;
}

/** `objects` unless the request or the session chose a dataFormat. */
export function sqlOptions(call: ActionCall): ActionCall['options'] {
  const requested = isPlainObject(call.envelope.responseOptions) && call.envelope.responseOptions.dataFormat !== undefined;
  const sessionDefault = call.session?.settings.defaultResponseOptions as Record<string, unknown> | undefined;
  const fromSession = sessionDefault !== undefined && sessionDefault.dataFormat !== undefined;
  return requested || fromSession ? call.options : { ...call.options, dataFormat: 'objects' };
}

/** sqlParams: positional values, or `{name, value}` objects for named parameters. */
const SQL_PARAMS = { type: 'array' } as const;

async function getRecordsUsingSql(call: ActionCall): Promise<Record<string, unknown>> {
  const p = call.params as Params;
  const { database, owner } = where(call);
  const options = sqlOptions(call);
  const sqlCall = { ...call, options };
  const format = readFormat(options);
  const common = {
    database, owner, sql: p.sql, params: p.sqlParams ?? [],
    ...(p.maxRecords !== undefined ? { maxRecords: p.maxRecords } : {}),
    ...(p.skipRecords !== undefined ? { skipRecords: p.skipRecords } : {}),
    format,
  };
  if (p.returnCursor) {
    const opened = await exec<CursorResult>(call, 'sql.query', { ...common, returnCursor: true });
    const shaped = shapeRecords(opened.fields, [], options, format);
    return { cursorId: opened.cursorId, dataFormat: options.dataFormat, binaryFormat: options.binaryFormat, fields: shaped.fields };
  }
  // Rows that need no shaping beyond their format are written as JSON text where they are made (the SQL worker).
  const plain = options.includeFields.length === 0 && options.excludeFields.length === 0 && options.includePaths.length === 0 && options.excludePaths.length === 0;
  const found = await exec<QueryResult>(call, 'sql.query', { ...common, countTotal: p.forceRecordCount === true, ...(plain ? { json: options.dataFormat } : {}) });
  const records = found.json !== undefined ? { json: new JsonText(found.json), count: found.count ?? 0 } : found.records ?? [];
  return recordsResult(sqlCall, found.fields, records, {
    moreRecords: found.more,
    requestedRecordCount: found.requested,
    totalRecordCount: found.total ?? -1,
  });
}

/**
 * runSqlStatements' sqlParams (also `inParams`, as the MCP server sends them): one list per
 * statement, by its place in sqlStatements (`null` for none); with one statement, that
 * statement's own list (values and `{name, value}` objects) is accepted as well.
 */
function statementParams(given: unknown, statements: number): unknown[][] | undefined {
  if (given === undefined || given === null) return undefined;
  const lists = given as unknown[];
  if (lists.every((entry) => entry === null || Array.isArray(entry))) return lists.map((entry) => (entry ?? []) as unknown[]);
  if (statements === 1) return [lists];
  throw new EngineError('INVALID_PARAMETER', { param: 'sqlParams', reason: 'expected one list of values per statement (null for none)' });
}

async function runSqlStatements(call: ActionCall): Promise<Record<string, unknown>> {
  const p = call.params as Params;
  const { database, owner } = where(call);
  const options = sqlOptions(call);
  const format = readFormat(options);
  const statements = (p.sqlStatements ?? p.sql) as string[] | string;
  const list = Array.isArray(statements) ? statements : [statements];
  const params = statementParams(p.sqlParams ?? p.inParams, list.length);
  const ran = await exec<RunResult>(call, 'sql.run', {
    database, owner, statements: list, ...(params ? { params } : {}),
    ...(p.onError !== undefined ? { onError: p.onError } : {}),
    ...(p.atEnd !== undefined ? { atEnd: p.atEnd } : {}),
    ...(p.maxRecords !== undefined ? { maxRecords: p.maxRecords } : {}),
    format,
  });
  const data = ran.statements.map((statement) => {
    const out: Record<string, unknown> = {
      sqlStatement: statement.sql,
      errorCode: statement.errorCode,
      errorMessage: statement.errorMessage,
      affectedRows: statement.affectedRows,
    };
    if (statement.fields) {
      const shaped = shapeRecords(statement.fields, statement.records ?? [], options, format);
      out.fields = shaped.fields;
      out.data = shaped.data;
      out.moreRecords = statement.more === true;
      out.returnedRecordCount = shaped.data.length;
    }
    return out;
  });
  return {
    dataFormat: options.dataFormat,
    data,
    // Public scripts (the postgres-faircom-fdw's init) read each statement's errorCode/errorMessage
    // from `reactions`: the same list as `data`, without the rows (they are in `data` once).
    reactions: ran.statements.map((statement) => ({
      sqlStatement: statement.sql, errorCode: statement.errorCode, errorMessage: statement.errorMessage, affectedRows: statement.affectedRows,
    })),
    // What the public clients read back: the rows changed in all, and whether the transaction was kept.
    affectedRecordCount: ran.statements.reduce((sum, statement) => sum + statement.affectedRows, 0),
    committed: ran.committed,
  };
}

const QUERY_PARAMS = schema({
  ...LOCATION,
  sql: { type: 'string', minLength: 1 },
  sqlParams: SQL_PARAMS,
  maxRecords: { type: 'integer', minimum: 1 },
  skipRecords: { type: 'integer', minimum: 0 },
  returnCursor: { type: 'boolean' },
  forceRecordCount: { type: 'boolean' },
}, ['sql']);

const RUN_PARAMS = {
  ...schema({
    ...LOCATION,
    sqlStatements: { anyOf: [{ type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }, { type: 'string', minLength: 1 }] },
    sql: { type: 'string', minLength: 1 },
    sqlParams: SQL_PARAMS,
    inParams: SQL_PARAMS,
    onError: { enum: ['continue', 'stop'] },
    atEnd: { enum: ['commit', 'rollback', 'rollbackOnError'] },
    maxRecords: { type: 'integer', minimum: 1 },
  }),
  anyOf: [{ required: ['sqlStatements'] }, { required: ['sql'] }],
};

export const sqlActions: readonly ActionDefinition[] = [
  { action: 'getRecordsUsingSql', params: QUERY_PARAMS, handler: getRecordsUsingSql },
  { action: 'runSqlStatements', params: RUN_PARAMS, handler: runSqlStatements },
];
