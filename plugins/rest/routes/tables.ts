/** GET /table/{db}, POST and DELETE /table/{db}/{table}. */
import type { FastifyInstance } from 'fastify';
import type { TableCreateParams, TableDeleteParams, TableListParams, TableListResult } from '../../../lib/data/command-types';
import { contextOf } from '../basic-auth';
import { FORMAT, type RestCommands } from '../rest-commands';
import { CREATE_TABLE, DELETE_TABLE, LIST_TABLES } from '../schemas/tables';

interface DbParams { db: string }
interface TableParams extends DbParams { table: string }

export function tableRoutes(fastify: FastifyInstance, commands: RestCommands): void {
  fastify.get<{ Params: DbParams }>('/table/:db', { schema: LIST_TABLES }, async (request) => {
    const params: TableListParams = { database: request.params.db };
    const result = await commands.run<TableListResult>('table.list', params, contextOf(request));
    return { _tables: result.tables };
  });

  fastify.post<{ Params: TableParams; Body: { fields: unknown[] } }>('/table/:db/:table', { schema: CREATE_TABLE }, async (request) => {
    const params: TableCreateParams = {
      database: request.params.db, table: request.params.table, fields: request.body.fields, format: FORMAT,
    };
    await commands.run('table.create', params, contextOf(request));
    return {};
  });

  fastify.delete<{ Params: TableParams }>('/table/:db/:table', { schema: DELETE_TABLE }, async (request) => {
    const params: TableDeleteParams = { database: request.params.db, tables: [request.params.table] };
    await commands.run('table.delete', params, contextOf(request));
    return {};
  });
}
