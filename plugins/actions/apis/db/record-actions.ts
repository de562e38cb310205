/** `db` actions that write records or read them by id. */
import { EngineError } from '../../../../kernel/errors';
import type { ActionDefinition } from '../../action-table';
import type { EncodedRecord, RecordDeleteResult, RecordGetResult, RecordInsertResult } from '../../../../lib/data/command-types';
import type { ActionCall } from '../../action-table';
import { enumValue, readFormat } from '../../response-options';
import {
  exec, ID, IN_TABLE, inTable, isPlainObject, MAX_RECORDS_PER_CALL, parseId, recordsResult, schema, transaction, TRANSACTION,
  WRITE, writeFormat, type Params,
} from './db-call';

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

export const recordActions: readonly ActionDefinition[] = [
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
];
