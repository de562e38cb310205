/**
 * The `db` api: databases, tables, indexes, records, cursors and transactions, each mapped to a
 * data command of plugins/data (command-types.ts). Values travel as wire values with a `format`;
 * the commands decode and encode them, these files only reshape params and results (db/).
 */
import type { ActionDefinition } from '../action-table';
import { queryActions } from './db/query-actions';
import { recordActions } from './db/record-actions';
import { schemaActions } from './db/schema-actions';
import { sqlActions } from './db/sql-actions';
import { transactionActions } from './db/transaction-actions';

export { DEFAULT_MAX_RECORDS, MAX_RECORDS_PER_CALL } from './db/db-call';

export const dbActions: readonly ActionDefinition[] = [...schemaActions, ...recordActions, ...queryActions, ...transactionActions, ...sqlActions];
