/**
 * transaction.begin / commit / rollback over the storage port's multi-request transactions.
 *
 * A transaction belongs to whoever began it (the authToken session, else the account). Any other
 * caller naming it, here or as `transactionId` of a record command, gets TRANSACTION_NOT_FOUND.
 * A session's open transactions are rolled back when the session ends.
 */
import type { CommandContext } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { TransactionParams, TransactionResult } from './command-types';
import { ownerOf, type DataContext } from './data-context';
import { transactionIdSchema } from './schemas';

/** A transaction unused this long is rolled back and forgotten (storage-lmdb expires its own after 10 minutes). */
export const TRANSACTION_FORGET_MS = 15 * 60 * 1000;

export class TransactionRegistry {
  /** transactionId → owner and last use */
  private readonly owners = new Map<string, { owner: string; lastUsedAt: number }>();

  constructor(private readonly storage: () => StoragePort) {}

  get size(): number {
    return this.owners.size;
  }

  begin(owner: string, now = Date.now()): string {
    this.prune(now);
    const transactionId = this.storage().beginTransaction();
    this.owners.set(transactionId, { owner, lastUsedAt: now });
    return transactionId;
  }

  /** The id when `ctx` owns the open transaction; else TRANSACTION_NOT_FOUND. Undefined passes. */
  check(ctx: CommandContext, transactionId: string | undefined): string | undefined {
    if (transactionId === undefined) return undefined;
    const entry = this.owners.get(transactionId);
    if (entry?.owner !== ownerOf(ctx)) throw new EngineError('TRANSACTION_NOT_FOUND', { transactionId });
    entry.lastUsedAt = Date.now();
    return transactionId;
  }

  /** Rolls back transactions nobody used for TRANSACTION_FORGET_MS (storage may have expired them already). */
  prune(now = Date.now()): void {
    for (const [transactionId, entry] of this.owners) {
      if (now - entry.lastUsedAt > TRANSACTION_FORGET_MS) this.end(transactionId);
    }
  }

  async commit(ctx: CommandContext, transactionId: string): Promise<void> {
    this.check(ctx, transactionId);
    // Whatever the outcome, the transaction is over (storage rolls back a failed commit).
    this.owners.delete(transactionId);
    await this.storage().commitTransaction(transactionId);
  }

  rollback(ctx: CommandContext, transactionId: string): void {
    this.check(ctx, transactionId);
    this.owners.delete(transactionId);
    this.storage().rollbackTransaction(transactionId);
  }

  /** Rolls back every open transaction of an owner (its session ended). */
  rollbackOwner(owner: string): void {
    for (const [transactionId, entry] of this.owners) if (entry.owner === owner) this.end(transactionId);
  }

  rollbackAll(): void {
    for (const transactionId of [...this.owners.keys()]) this.end(transactionId);
  }

  private end(transactionId: string): void {
    this.owners.delete(transactionId);
    try {
      this.storage().rollbackTransaction(transactionId);
    } catch {
      // already gone (expired in storage) or the store is closed
    }
  }
}

const transactionParams = {
  type: 'object',
  required: ['transactionId'],
  properties: { transactionId: transactionIdSchema },
} as const;

export function registerTransactionCommands(data: DataContext): void {
  const { bus } = data.engine;

  bus.register<Record<string, unknown>, TransactionResult>({
    name: 'transaction.begin',
    summary: 'Begin a transaction spanning several requests; owned by the caller\'s session (or account).',
    params: { type: 'object', properties: {} },
    access: 'authenticated',
    handler: (_params, ctx) => ({ transactionId: data.transactions.begin(ownerOf(ctx)) }),
  });

  bus.register<TransactionParams, TransactionResult>({
    name: 'transaction.commit',
    summary: 'Commit an open transaction of the caller.',
    params: transactionParams,
    access: 'authenticated',
    handler: async ({ transactionId }, ctx) => {
      await data.transactions.commit(ctx, transactionId);
      return { transactionId };
    },
  });

  bus.register<TransactionParams, TransactionResult>({
    name: 'transaction.rollback',
    summary: 'Roll back an open transaction of the caller.',
    params: transactionParams,
    access: 'authenticated',
    handler: ({ transactionId }, ctx) => {
      data.transactions.rollback(ctx, transactionId);
      return { transactionId };
    },
  });
}
