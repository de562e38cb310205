/**
 * What a runner (a worker's, or the main thread's) is told of a database's catalog: only what
 * changed since its last job there (table definitions are kept by identity: the store hands out
 * a new object when one changes).
 */
import { EngineError } from '../../kernel/errors';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { TableDefinition } from '../../kernel/storage/types';
import type { CatalogUpdate } from './sql-protocol';

/** What changed in a database's tables since `held` (updated to the current definitions). */
export function catalogUpdate(storage: StoragePort, database: string, held: Map<string, TableDefinition>): CatalogUpdate {
  if (!storage.hasDatabase(database)) throw new EngineError('DATABASE_NOT_FOUND', { database });
  const names = storage.listTables(database);
  const current = new Set(names);
  const changed: TableDefinition[] = [];
  for (const name of names) {
    const def = storage.getTable(database, name);
    if (held.get(name) !== def) {
      changed.push(def);
      held.set(name, def);
    }
  }
  const removed = [...held.keys()].filter((name) => !current.has(name));
  for (const name of removed) held.delete(name);
  return { changed, removed };
}
