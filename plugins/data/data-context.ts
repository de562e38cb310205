/** What the data command handlers share: the engine, storage (resolved lazily), cursors, transactions. */
import type { CommandContext, Resource } from '../../kernel/bus/command';
import type { TableDefinition } from '../../kernel/storage/types';
import type { Engine } from '../../kernel/engine';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { CursorRegistry } from './cursor-registry';
import type { TransactionRegistry } from './transaction-commands';

export interface DataContext {
  readonly engine: Engine;
  /** The storage port; resolved on first use (throws NOT_AVAILABLE when no plugin provides it). */
  storage(): StoragePort;
  readonly cursors: CursorRegistry;
  readonly transactions: TransactionRegistry;
}

/** Names of databases, tables, indexes and columns are case-insensitive; storage gets lower case. */
export function lower(name: string): string {
  return name.toLowerCase();
}

/** The resource of a command on one table (what roles are checked against). */
export function tableResource(p: { database: string; table: string }): Resource {
  return { kind: 'table', database: lower(p.database), table: lower(p.table) };
}

/** What every handler on one table starts from. */
export interface TableCall {
  storage: StoragePort;
  database: string;
  table: TableDefinition;
  /** The caller's own open transaction, when the params name one (checked). */
  transactionId: string | undefined;
}

/** `write`: the command's name when it writes, so a transaction's commit can authorize it again. */
export function tableCall(data: DataContext, ctx: CommandContext, p: { database: string; table: string; transactionId?: string }, write?: string): TableCall {
  const transactionId = data.transactions.check(ctx, p.transactionId, write === undefined ? undefined : { command: write, resource: tableResource(p) });
  const storage = data.storage();
  const database = lower(p.database);
  return { storage, database, table: storage.getTable(database, lower(p.table)), transactionId };
}

/**
 * Who owns a cursor or transaction: the authToken session when there is one (`ctx.sessionId`, the
 * session's non-secret id), else the account.
 */
export const SESSION_OWNER = 'session:';

export function ownerOf(ctx: CommandContext): string {
  return ctx.sessionId !== undefined ? `${SESSION_OWNER}${ctx.sessionId}` : `account:${ctx.principal.account}`;
}

export function sessionOwner(sessionId: string): string {
  return `${SESSION_OWNER}${sessionId}`;
}
