/** index.create / index.list / index.get / index.delete */
import type { IndexSegment } from '../../kernel/storage/types';
import type {
  IndexCreateParams, IndexDeleteParams, IndexGetParams, IndexListParams, IndexListResult, IndexResult,
} from '../../lib/data/command-types';
import { findIndex } from '../../lib/data/find-index';
import { lower, tableResource, type DataContext } from './data-context';
import { inTable, nameSchema, namesSchema } from './schemas';

export interface IndexDeleteResult { indexes: string[] }

const segmentSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    ascending: { type: 'boolean' },
    key: { type: 'string', minLength: 1 },
    type: { type: 'string', minLength: 1 },
    size: { type: 'integer', minimum: 1 },
  },
} as const;

export function registerIndexCommands(data: DataContext): void {
  const { bus } = data.engine;

  bus.register<IndexCreateParams, IndexResult>({
    name: 'index.create',
    summary: 'Create an index (segments in key order); a unique index on duplicate rows fails cleanly.',
    params: inTable({ index: nameSchema, unique: { type: 'boolean' }, fields: { type: 'array', minItems: 1, items: segmentSchema } }, ['index', 'fields']),
    resource: tableResource,
    handler: async (p) => {
      const index = await data.storage().createIndex(lower(p.database), lower(p.table), lower(p.index), {
        unique: p.unique ?? false,
        fields: p.fields as IndexSegment[],
      });
      return { index };
    },
  });

  bus.register<IndexListParams, IndexListResult>({
    name: 'index.list',
    reads: true,
    summary: 'Every index of a table, the automatic `id_pk` included.',
    params: inTable(),
    resource: tableResource,
    handler: (p) => ({ indexes: data.storage().getTable(lower(p.database), lower(p.table)).indexes.slice() }),
  });

  bus.register<IndexGetParams, IndexResult>({
    name: 'index.get',
    reads: true,
    summary: 'One index definition.',
    params: inTable({ index: nameSchema }, ['index']),
    resource: tableResource,
    handler: (p) => ({ index: findIndex(data.storage().getTable(lower(p.database), lower(p.table)), p.index) }),
  });

  bus.register<IndexDeleteParams, IndexDeleteResult>({
    name: 'index.delete',
    summary: 'Delete indexes of a table: all or none.',
    params: inTable({ indexes: namesSchema }, ['indexes']),
    resource: tableResource,
    handler: async (p) => {
      const database = lower(p.database);
      const table = lower(p.table);
      const names = [...new Set(p.indexes.map(lower))];
      await data.storage().deleteIndexes(database, table, names);
      data.cursors.closeTable(database, table, names);
      return { indexes: names };
    },
  });
}
