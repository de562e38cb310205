/**
 * plugins/sql: SQL over the engine's tables (docs/sql.md). SQLite compiled to WebAssembly runs in
 * worker threads (worker-pool.ts, sql-worker.ts); the engine's tables, integration tables
 * included, are its virtual tables (engine-tables.ts), read and written through the data
 * commands on the bus (table-requests.ts). The bus commands `sql.*` (sql-commands.ts) are what
 * the db actions getRecordsUsingSql and runSqlStatements run.
 */
import { definePlugin } from '../../kernel/plugin';
import { registerSqlCommands } from './sql-commands';
import { SqlWorkerPool } from './worker-pool';

export default definePlugin({
  name: 'sql',
  description: 'SQL over the engine tables (getRecordsUsingSql, runSqlStatements)',
  dependencies: ['data'],
  register(engine) {
    const pool = new SqlWorkerPool(engine, () => engine.need('storage'), engine.settings.sql_workers);
    registerSqlCommands(engine, pool);
    engine.onClose(() => pool.close());
  },
});
