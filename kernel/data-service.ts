/**
 * The `data` service's port: what a protocol needs to shape a request before it runs its one data
 * command, without running a second one. The data plugin provides it (plugins/data/data-service.ts).
 * Reads are internal (no authorization): a caller uses them only to build the params of a command
 * the bus then authorizes, and on an error it checks authorization before answering (so a table's
 * existence or shape is never told to someone who may not read it). See plugins/rest/routes/query.ts.
 */
import type { TableDefinition } from './storage/types';

export interface DataService {
  /** The definition of a table; throws DATABASE_NOT_FOUND / TABLE_NOT_FOUND (or NOT_AVAILABLE without storage). */
  tableDefinition(database: string, table: string): TableDefinition;
}
