/**
 * POST /record/{db}/{table}; GET, PUT, PATCH and DELETE /record/{db}/{table}/{id}.
 *
 * - POST: one object or an array of objects, all or nothing → `{_ids}` in creation order.
 * - GET: the declared columns (`id` only when the table declares it).
 * - PUT: replaces the record; omitted columns become null (or their default).
 * - PATCH: changes only the supplied columns. The body may be an array of such objects, each
 *   naming its record with `_id` (default: the record of the path); all or nothing.
 * - An `_id` in a PUT/PATCH object must be the path's id (round-tripped query results) and is dropped.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  RecordDeleteParams, RecordGetParams, RecordGetResult, RecordInsertParams, RecordInsertResult,
  RecordWriteParams, WireRecord,
} from '../../../lib/data/command-types';
import { EngineError } from '../../../kernel/errors';
import { describeValue } from '../../../lib/values/wire-format';
import { contextOf } from '../basic-auth';
import { FORMAT, type RestCommands } from '../rest-commands';
import { restRecord, showsId } from '../rest-values';
import { CREATE_RECORDS, DELETE_RECORD, GET_RECORD, PATCH_RECORD, REPLACE_RECORD } from '../schemas/records';

interface TableParams { db: string; table: string }
interface RecordParams extends TableParams { id: number }

/** The columns of a PUT/PATCH object, without `_id` (which must be `id` when given). */
function columnsOf(body: WireRecord, id: number, where: string): WireRecord {
  if (!('_id' in body)) return body;
  const { _id: given, ...columns } = body;
  if (given !== id) {
    throw new EngineError('INVALID_PARAMETER', { param: `${where}_id`, reason: `${describeValue(given)} is not the record ID of the path (${id})` });
  }
  return columns;
}

/** Record ids in paths are plain decimal digits: `0x1`, `1e0` or ` 1` are not ids (ajv would coerce them). */
const DECIMAL_ID = /^[0-9]{1,16}$/;

/** preValidation of the routes with an `{id}`: runs before ajv coerces the text to a number. */
function decimalId(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const raw = (request.params as { id?: unknown }).id;
  if (typeof raw === 'string' && !DECIMAL_ID.test(raw)) {
    done(new EngineError('INVALID_PARAMETER', { param: 'id', reason: 'a record ID is a positive integer written in decimal digits' }));
    return;
  }
  done();
}

export function recordRoutes(fastify: FastifyInstance, commands: RestCommands): void {
  fastify.post<{ Params: TableParams; Body: WireRecord | WireRecord[] }>('/record/:db/:table', { schema: CREATE_RECORDS }, async (request) => {
    const params: RecordInsertParams = {
      database: request.params.db,
      table: request.params.table,
      records: Array.isArray(request.body) ? request.body : [request.body],
      format: FORMAT,
    };
    const result = await commands.run<RecordInsertResult>('record.insert', params, contextOf(request));
    return { _ids: result.ids };
  });

  fastify.get<{ Params: RecordParams }>('/record/:db/:table/:id', { schema: GET_RECORD, preValidation: decimalId }, async (request) => {
    const { db, table, id } = request.params;
    const params: RecordGetParams = { database: db, table, ids: [id], mustExist: true, format: FORMAT };
    const result = await commands.run<RecordGetResult>('record.get', params, contextOf(request));
    const record = result.records[0];
    if (!record) throw new EngineError('RECORD_NOT_FOUND', { id, table });
    return restRecord(record, result.fields, showsId(result.idDeclared));
  });

  fastify.put<{ Params: RecordParams; Body: WireRecord }>('/record/:db/:table/:id', { schema: REPLACE_RECORD, preValidation: decimalId }, async (request) => {
    const { db, table, id } = request.params;
    const params: RecordWriteParams = {
      database: db, table, records: [{ id, values: columnsOf(request.body, id, '') }], format: FORMAT,
    };
    await commands.run('record.replace', params, contextOf(request));
    return {};
  });

  fastify.patch<{ Params: RecordParams; Body: WireRecord | WireRecord[] }>('/record/:db/:table/:id', { schema: PATCH_RECORD, preValidation: decimalId }, async (request) => {
    const { db, table, id } = request.params;
    const records = Array.isArray(request.body)
      ? request.body.map((element, i) => {
        const target = typeof element._id === 'number' ? element._id : id;
        return { id: target, values: columnsOf(element, target, `[${i}].`) };
      })
      : [{ id, values: columnsOf(request.body, id, '') }];
    const params: RecordWriteParams = { database: db, table, records, format: FORMAT };
    await commands.run('record.patch', params, contextOf(request));
    return {};
  });

  fastify.delete<{ Params: RecordParams }>('/record/:db/:table/:id', { schema: DELETE_RECORD, preValidation: decimalId }, async (request) => {
    const { db, table, id } = request.params;
    const params: RecordDeleteParams = { database: db, table, ids: [id], mustExist: true };
    await commands.run('record.delete', params, contextOf(request));
    return {};
  });
}
