/**
 * What the `db` actions share: parameter schemas, where a call points (database, owner, table),
 * its value formats and transaction, running a data command, and the shape of a records result.
 */
import { EngineError } from '../../../../kernel/errors';
import type { ParamsSchema } from '../../../../kernel/bus/command';
import type { ColumnDefinition } from '../../../../kernel/storage/types';
import type { EncodedRecord, FormatParam } from '../../../../lib/data/command-types';
import { internFormat } from '../../../../lib/values/interned-formats';
import type { ActionCall } from '../../action-table';
import { enumValue, readFormat, RESPONSE_OPTION_ENUMS } from '../../response-options';
import { shapeRecords } from '../../record-shape';
import type { JsonText } from '../../json-text';

/** Largest `maxRecords` / `fetchRecords` of one call (page through more with a cursor). */
export const MAX_RECORDS_PER_CALL = 100_000;
export const DEFAULT_MAX_RECORDS = 20;

// ------------------------------------------------------------------------------------- schemas

export const NAME = { type: 'string', minLength: 1, maxLength: 64 } as const;
export const NAMES = { type: 'array', minItems: 1, items: NAME } as const;
export const LOCATION = { databaseName: NAME, ownerName: NAME } as const;
export const IN_TABLE = { ...LOCATION, tableName: NAME } as const;
export const ID = { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^[0-9]{1,16}$' }] } as const;
export const TRANSACTION = { transactionId: { type: 'string', minLength: 1 } } as const;
export const READ = {
  tableFilter: { type: 'string' },
  reverseOrder: { type: 'boolean', default: false },
  skipRecords: { type: 'integer', minimum: 0, default: 0 },
  maxRecords: { type: 'integer', minimum: 1, maximum: MAX_RECORDS_PER_CALL, default: DEFAULT_MAX_RECORDS },
  returnCursor: { type: 'boolean', default: false },
  ...TRANSACTION,
} as const;
export const WRITE = {
  ...IN_TABLE,
  dataFormat: { type: 'string' },
  fieldNames: { type: 'array', items: { type: 'string', minLength: 1 } },
  sourceData: { type: 'array', minItems: 1 },
  binaryFormat: { type: 'string' },
  variantFormat: { type: 'string' },
  ...TRANSACTION,
} as const;

export function schema(properties: Record<string, unknown>, required: string[] = []): ParamsSchema {
  return { type: 'object', properties, required };
}

// ------------------------------------------------------------------------------------- helpers

export type Params = Record<string, any>;

export function exec<R>(call: ActionCall, command: string, params: Record<string, unknown>): Promise<R> {
  const bus = call.engine.bus;
  if (!bus.has(command)) {
    return Promise.reject(new EngineError('NOT_AVAILABLE', { feature: 'the db api', reason: `no loaded plugin registers the command ${command} (load a storage plugin)` }));
  }
  return bus.execute<R>(command, params, call.ctx!);
}

export function bytesCheck(value: string, param: string): string {
  if (Buffer.byteLength(value) > 64) throw new EngineError('INVALID_PARAMETER', { param, reason: 'at most 64 bytes' });
  return value;
}

/** databaseName and ownerName, defaulting to the session's. */
export function where(call: ActionCall): { database: string; owner: string } {
  const p = call.params as Params;
  const database = bytesCheck(p.databaseName ?? call.session!.settings.defaultDatabaseName, 'databaseName');
  const owner = bytesCheck(p.ownerName ?? call.session!.settings.defaultOwnerName, 'ownerName');
  return { database, owner };
}

export function inTable(call: ActionCall): { database: string; table: string; owner: string } {
  const { database, owner } = where(call);
  return { database, owner, table: bytesCheck((call.params as Params).tableName, 'tableName') };
}

/** How the request writes values: params.binaryFormat / variantFormat over the session's defaults. */
/** The value format of the request's values (one shared object per combination: codec caches key on it). */
export function writeFormat(call: ActionCall): FormatParam {
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

export function transaction(call: ActionCall): { transactionId?: string } {
  const id = (call.params as Params).transactionId as string | undefined;
  return id === undefined ? {} : { transactionId: id };
}

export function parseId(value: unknown, param: string): number {
  const id = typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) {
    throw new EngineError('INVALID_PARAMETER', { param, reason: 'a record id is a positive integer' });
  }
  return id;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface Counts {
  moreRecords: boolean;
  requestedRecordCount: number;
  totalRecordCount: number;
}

/** Records whose `data` array is already JSON text, shaped as the call's options ask (`count` of them). */
export interface ShapedJson {
  json: JsonText;
  count: number;
}

export function recordsResult(call: ActionCall, fields: ColumnDefinition[], records: EncodedRecord[] | ShapedJson, counts: Counts): Record<string, unknown> {
  const format = readFormat(call.options);
  const written = !Array.isArray(records);
  const shaped = shapeRecords(fields, written ? [] : records, call.options, format);
  return {
    dataFormat: call.options.dataFormat,
    binaryFormat: call.options.binaryFormat,
    numberFormat: call.options.numberFormat,
    fields: shaped.fields,
    data: written ? records.json : shaped.data,
    moreRecords: counts.moreRecords,
    requestedRecordCount: counts.requestedRecordCount,
    returnedRecordCount: written ? records.count : records.length,
    totalRecordCount: counts.totalRecordCount,
  };
}
