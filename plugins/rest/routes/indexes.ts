/** POST, DELETE and GET /index/{db}/{table}/{index}; GET /index/{db}/{table}. */
import type { FastifyInstance } from 'fastify';
import type {
  IndexCreateParams, IndexDeleteParams, IndexGetParams, IndexListParams, IndexListResult, IndexResult,
} from '../../../lib/data/command-types';
import type { IndexSegment } from '../../../kernel/storage/types';
import { contextOf } from '../basic-auth';
import type { RestCommands } from '../rest-commands';
import { restIndex } from '../rest-values';
import { CREATE_INDEX, DELETE_INDEX, GET_INDEX, LIST_INDEXES } from '../schemas/indexes';

interface TableParams { db: string; table: string }
interface IndexParams extends TableParams { index: string }
interface IndexBody { fields: Array<Partial<IndexSegment> & { name: string }>; unique?: boolean }

export function indexRoutes(fastify: FastifyInstance, commands: RestCommands): void {
  fastify.post<{ Params: IndexParams; Body: IndexBody }>('/index/:db/:table/:index', { schema: CREATE_INDEX }, async (request) => {
    const { db, table, index } = request.params;
    const params: IndexCreateParams = {
      database: db, table, index, unique: request.body.unique ?? false, fields: request.body.fields,
    };
    await commands.run('index.create', params, contextOf(request));
    return {};
  });

  fastify.delete<{ Params: IndexParams }>('/index/:db/:table/:index', { schema: DELETE_INDEX }, async (request) => {
    const { db, table, index } = request.params;
    const params: IndexDeleteParams = { database: db, table, indexes: [index] };
    await commands.run('index.delete', params, contextOf(request));
    return {};
  });

  fastify.get<{ Params: IndexParams }>('/index/:db/:table/:index', { schema: GET_INDEX }, async (request) => {
    const { db, table, index } = request.params;
    const params: IndexGetParams = { database: db, table, index };
    const result = await commands.run<IndexResult>('index.get', params, contextOf(request));
    return restIndex(result.index);
  });

  fastify.get<{ Params: TableParams }>('/index/:db/:table', { schema: LIST_INDEXES }, async (request) => {
    const params: IndexListParams = { database: request.params.db, table: request.params.table };
    const result = await commands.run<IndexListResult>('index.list', params, contextOf(request));
    return { _indexes: result.indexes.filter((index) => !index.automatic).map((index) => index.name) };
  });
}
