/** database.create / database.list / database.delete */
import type { DatabaseListResult, DatabaseParams } from '../../lib/data/command-types';
import { lower, type DataContext } from './data-context';
import { checkNewDatabaseName } from './database-name';
import { databaseParams } from './schemas';

export interface DatabaseResult { database: string }

export function registerDatabaseCommands(data: DataContext): void {
  const { bus } = data.engine;

  bus.register<DatabaseParams, DatabaseResult>({
    name: 'database.create',
    summary: 'Create a database.',
    params: databaseParams,
    resource: (p) => ({ kind: 'database', database: lower(p.database) }),
    handler: async ({ database }) => {
      checkNewDatabaseName(database);
      const name = lower(database);
      await data.storage().createDatabase(name);
      return { database: name };
    },
  });

  bus.register<Record<string, unknown>, DatabaseListResult>({
    name: 'database.list',
    reads: true,
    summary: 'List the databases.',
    params: { type: 'object', properties: {} },
    resource: () => ({ kind: 'system' }),
    handler: () => ({ databases: data.storage().listDatabases() }),
  });

  bus.register<DatabaseParams, DatabaseResult>({
    name: 'database.delete',
    summary: 'Delete a database with all its tables.',
    params: databaseParams,
    resource: (p) => ({ kind: 'database', database: lower(p.database) }),
    handler: async ({ database }) => {
      const name = lower(database);
      await data.storage().deleteDatabase(name);
      data.cursors.closeTable(name);
      return { database: name };
    },
  });
}
