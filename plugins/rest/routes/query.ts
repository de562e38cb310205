/**
 * POST /query/{db}/{table}/{index}?top=&skip= : find records through an index (find-body.ts
 * turns the body into bounds). Results: `{_records: [{_id, ...columns}]}` in index order, then
 * `reverse`, `skip`, `top`.
 */
import type { FastifyInstance } from 'fastify';
import type { RecordFindParams, RecordFindResult } from '../../../lib/data/command-types';
import type { TableDefinition } from '../../../kernel/storage/types';
import { contextOf } from '../basic-auth';
import { boundsOf, type QueryBody } from '../find-body';
import { FORMAT, type RestCommands } from '../rest-commands';
import { restQueryRecord, showsId } from '../rest-values';
import { QUERY } from '../schemas/query';

interface IndexParams { db: string; table: string; index: string }
interface QueryString { top: number; skip: number }

export function queryRoutes(fastify: FastifyInstance, commands: RestCommands): void {
  fastify.post<{ Params: IndexParams; Querystring: QueryString; Body: QueryBody }>('/query/:db/:table/:index', { schema: QUERY }, async (request) => {
    const { db, table, index } = request.params;
    const ctx = contextOf(request);
    const body = request.body;
    let params: RecordFindParams;
    let definition: TableDefinition;
    try {
      definition = commands.table(db, table);
      const indexDefinition = commands.index(definition, index);
      params = {
        database: db,
        table,
        index: indexDefinition.name,
        ...boundsOf(body, indexDefinition),
        reverse: body.reverse ?? false,
        skip: request.query.skip ?? 0,
        limit: request.query.top,
        format: FORMAT,
      };
    } catch (error) {
      // Only someone who may query the table learns why its query cannot be built.
      commands.authorize(ctx, 'record.find', db, table);
      throw error;
    }
    if (body.filter !== undefined) params.filter = body.filter;
    if (body.select !== undefined) params.select = body.select;
    // The one command (and authorization) of a query.
    const result = await commands.run<RecordFindResult>('record.find', params, ctx);
    const showId = showsId(definition.idDeclared, body.select);
    return { _records: result.records.map((record) => restQueryRecord(record, result.fields, showId)) };
  });
}
