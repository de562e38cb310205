/** Finding an index of a table definition by name: the data commands and REST's request shaping. */
import { EngineError } from '../../kernel/errors';
import type { IndexDefinition, TableDefinition } from '../../kernel/storage/types';

/** The named index of a table (names are case-insensitive); INDEX_NOT_FOUND {index, table}. */
export function findIndex(table: TableDefinition, name: string): IndexDefinition {
  const wanted = name.toLowerCase();
  const index = table.indexes.find((i) => i.name === wanted);
  if (!index) throw new EngineError('INDEX_NOT_FOUND', { index: name, table: table.name });
  return index;
}
