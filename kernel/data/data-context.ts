/** What the data command handlers share: the engine, storage (resolved lazily), cursors, transactions. */
import type { CommandContext } from '../bus/command';
import type { Engine } from '../engine';
import type { StoragePort } from '../storage/storage-port';
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

/**
 * Who owns a cursor or transaction: the authToken session when there is one, else the account.
 * `ctx.sessionId` is the session's authToken (ApiSessions.onEnd hands us `session.authToken`).
 */
/** Owner names of cursors and transactions: an api session, or an account without one. */
export const SESSION_OWNER = 'session:';

export function ownerOf(ctx: CommandContext): string {
  return ctx.sessionId !== undefined ? `${SESSION_OWNER}${ctx.sessionId}` : `account:${ctx.principal.account}`;
}

export function sessionOwner(authToken: string): string {
  return `${SESSION_OWNER}${authToken}`;
}
