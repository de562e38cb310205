/** record.insert / record.get / record.replace / record.patch / record.delete */
import { EngineError } from '../../kernel/errors';
import type { StoredRecord } from '../../kernel/storage/storage-port';
import type {
  EncodedRecord, RecordDeleteParams, RecordDeleteResult, RecordGetParams, RecordGetResult,
  RecordInsertParams, RecordInsertResult, RecordWriteParams,
} from '../../lib/data/command-types';
import { lower, tableCall, tableResource, type DataContext } from './data-context';
import { RecordDecoder, RecordEncoder, atPosition, resolveFormat, type DecodeMode } from './record-codec';
import {
  columnNamesSchema, formatSchema, idsSchema, inTable, recordIdSchema, transactionIdSchema,
} from './schemas';

export interface RecordWriteResult { updated: number }

const writeRecordsSchema = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    required: ['id', 'values'],
    properties: { id: recordIdSchema, values: { type: 'object' } },
  },
} as const;

export function registerRecordCommands(data: DataContext): void {
  const { bus } = data.engine;

  bus.register<RecordInsertParams, RecordInsertResult>({
    name: 'record.insert',
    summary: 'Insert records (objects, or arrays in fieldNames order): all or nothing.',
    params: inTable({
      records: { type: 'array', minItems: 1, items: { type: ['object', 'array'] } },
      fieldNames: columnNamesSchema,
      format: formatSchema,
      transactionId: transactionIdSchema,
    }, ['records']),
    resource: tableResource,
    handler: async (p, ctx) => {
      const { storage, database, table, transactionId } = tableCall(data, ctx, p, 'record.insert');
      const decoder = RecordDecoder.for(table, resolveFormat(p.format), 'insert');
      // Values decoded straight into the stored column order, checked once.
      const rows = decoder.decodeStored(p.records, p.fieldNames);
      return { ids: await storage.insertValues(database, table.name, rows, { transactionId }) };
    },
  });

  bus.register<RecordGetParams, RecordGetResult>({
    name: 'record.get',
    reads: true,
    summary: 'Records by ID, in the order asked; a missing one is null (RECORD_NOT_FOUND with mustExist).',
    params: inTable({
      ids: idsSchema,
      select: columnNamesSchema,
      mustExist: { type: 'boolean' },
      format: formatSchema,
      transactionId: transactionIdSchema,
    }, ['ids']),
    resource: tableResource,
    handler: (p, ctx) => {
      const { storage, database, table, transactionId } = tableCall(data, ctx, p);
      const encoder = RecordEncoder.for(table, p.select, resolveFormat(p.format));
      const stored = storage.getRecords(database, table.name, p.ids, transactionId);
      const encodeAt = (i: number): EncodedRecord | null => (stored[i] === undefined ? null : encoder.encodeStored(p.ids[i], stored[i]!));
      const records = new Array<EncodedRecord | null>(p.ids.length);
      for (let i = 0; i < records.length; i++) {
        records[i] = encodeAt(i);
        if (records[i] === null && p.mustExist) throw new EngineError('RECORD_NOT_FOUND', { id: p.ids[i], table: table.name });
      }
      return { fields: encoder.fields, records, idDeclared: table.idDeclared };
    },
  });

  const registerWrite = (name: 'record.replace' | 'record.patch', mode: DecodeMode, summary: string): void => {
    bus.register<RecordWriteParams, RecordWriteResult>({
      name,
      summary,
      params: inTable({ records: writeRecordsSchema, format: formatSchema, transactionId: transactionIdSchema }, ['records']),
      resource: tableResource,
      handler: async (p, ctx) => {
        const { storage, database, table, transactionId } = tableCall(data, ctx, p, name);
        const decoder = RecordDecoder.for(table, resolveFormat(p.format), mode);
        const records: StoredRecord[] = new Array<StoredRecord>(p.records.length);
        for (let i = 0; i < p.records.length; i++) {
          const { id, values } = p.records[i];
          try {
            records[i] = { id, row: decoder.decodeObject(values, id) };
          } catch (error) {
            throw atPosition(error, `record ${i}`, i);
          }
        }
        if (mode === 'replace') await storage.replaceRecords(database, table.name, records, { transactionId });
        else await storage.patchRecords(database, table.name, records, { transactionId });
        return { updated: records.length };
      },
    });
  };
  registerWrite('record.replace', 'replace', 'Replace whole records by ID (omitted columns become null or their default): all or nothing.');
  registerWrite('record.patch', 'patch', 'Change the supplied columns of records by ID: all or nothing.');

  bus.register<RecordDeleteParams, RecordDeleteResult>({
    name: 'record.delete',
    summary: 'Delete records by ID; mustExist makes a missing one RECORD_NOT_FOUND (and deletes nothing).',
    params: inTable({ ids: { ...idsSchema, minItems: 1 }, mustExist: { type: 'boolean' }, transactionId: transactionIdSchema }, ['ids']),
    resource: tableResource,
    handler: async (p, ctx) => {
      const transactionId = data.transactions.check(ctx, p.transactionId, { command: 'record.delete', resource: tableResource(p) });
      const deleted = await data.storage().deleteRecords(lower(p.database), lower(p.table), p.ids, { transactionId, mustExist: p.mustExist });
      return { deleted };
    },
  });
}
