/**
 * transaction.begin / commit / rollback over the storage port's multi-request transactions.
 *
 * A transaction belongs to whoever began it (the authToken session, else the account). Any other
 * caller naming it, here or as `transactionId` of a record command, gets TRANSACTION_NOT_FOUND.
 * Each record command in it is authorized by the bus when it runs; the commit authorizes every
 * write it would apply again, with the caller's roles at that moment, so a role revoked meanwhile
 * stops the commit (and the transaction is rolled back, like any failed commit). A rollback
 * applies nothing and needs no grant. A transaction unused for `transaction_idle_timeout_seconds`
 * is rolled back (kernel/idle-expiry.ts, on the engine's clock), and so are a session's
 * transactions when it ends.
 */
import type { CommandContext, Resource } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';
import type { IdleExpiry, IdleRegistry } from '../../kernel/idle-expiry';
import { NodeBoundIds } from '../../kernel/node-bound';
import type { StoragePort, TransactionSavepoint } from '../../kernel/storage/storage-port';
import type { TransactionParams, TransactionResult } from '../../lib/data/command-types';
import { ownerOf, type DataContext } from './data-context';
import { transactionIdSchema } from './schemas';

/** A write made in a transaction: the command and the resource it was authorized on. */
export interface TransactionWrite {
  command: string;
  resource: Resource;
}

interface OpenTransaction {
  /** The id the client holds (in a cluster: the node's name, then the store's id). */
  readonly id: string;
  /** The store's id of the transaction. */
  readonly storageId: string;
  readonly owner: string;
  lastUsedAt: number;
  /** Distinct writes, keyed by command and resource, re-authorized at commit. */
  readonly writes: Map<string, TransactionWrite>;
}

export class TransactionRegistry {
  private readonly open: IdleRegistry<OpenTransaction>;

  constructor(
    expiry: IdleExpiry,
    private readonly storage: () => StoragePort,
    idleTimeoutMs: () => number,
    private readonly authorize: (ctx: CommandContext, write: TransactionWrite) => void,
    /** In a cluster, ids carry this node's name (another node answers NODE_BOUND). */
    private readonly nodeIds = new NodeBoundIds(null),
  ) {
    this.open = expiry.registry<OpenTransaction>({
      idleTimeoutMs,
      expired: (entry) => this.rollbackQuietly(entry.storageId),
    });
  }

  get size(): number {
    return this.open.size;
  }

  begin(owner: string): string {
    const storageId = this.storage().beginTransaction();
    const id = this.nodeIds.make(storageId);
    this.open.add(id, { id, storageId, owner, lastUsedAt: 0, writes: new Map() });
    return id;
  }

  /**
   * The store's id when `ctx` owns the open transaction, marked as used (and `write` remembered for
   * the commit); else TRANSACTION_NOT_FOUND (NODE_BOUND: another node's). Undefined passes.
   */
  check(ctx: CommandContext, transactionId: string | undefined, write?: TransactionWrite): string | undefined {
    if (transactionId === undefined) return undefined;
    const entry = this.owned(ctx, transactionId);
    this.open.touch(entry);
    if (write) entry.writes.set(`${write.command} ${JSON.stringify(write.resource)}`, write);
    return entry.storageId;
  }

  async commit(ctx: CommandContext, transactionId: string): Promise<void> {
    const entry = this.owned(ctx, transactionId);
    // Whatever the outcome, the transaction is over (storage rolls back a failed commit).
    this.open.delete(transactionId);
    try {
      for (const write of entry.writes.values()) this.authorize(ctx, write);
    } catch (error) {
      this.rollbackQuietly(entry.storageId);
      throw error;
    }
    await this.storage().commitTransaction(entry.storageId);
  }

  rollback(ctx: CommandContext, transactionId: string): void {
    const entry = this.owned(ctx, transactionId);
    this.open.delete(transactionId);
    this.storage().rollbackTransaction(entry.storageId);
  }

  /** Marks where the caller's open transaction stands (runSqlStatements: before each statement). */
  savepoint(ctx: CommandContext, transactionId: string): TransactionSavepoint {
    const entry = this.owned(ctx, transactionId);
    this.open.touch(entry);
    return this.storage().savepointTransaction(entry.storageId);
  }

  /**
   * Undoes the caller's writes made since `savepoint`. The writes stay remembered for the commit's
   * authorization: it may check a write that was undone, never miss one that was kept.
   */
  rollbackTo(ctx: CommandContext, transactionId: string, savepoint: TransactionSavepoint): void {
    const entry = this.owned(ctx, transactionId);
    this.open.touch(entry);
    this.storage().rollbackTransactionTo(entry.storageId, savepoint);
  }

  /** Rolls back every open transaction of an owner (its session ended). */
  rollbackOwner(owner: string): void {
    for (const [id, entry] of this.open.all()) {
      if (entry.owner !== owner) continue;
      this.open.delete(id);
      this.rollbackQuietly(entry.storageId);
    }
  }

  rollbackAll(): void {
    for (const [id, entry] of this.open.all()) {
      this.open.delete(id);
      this.rollbackQuietly(entry.storageId);
    }
  }

  private owned(ctx: CommandContext, transactionId: string): OpenTransaction {
    const entry = this.open.get(transactionId);
    if (entry === undefined) this.nodeIds.checkElsewhere(transactionId, 'transaction');
    if (entry?.owner !== ownerOf(ctx)) throw new EngineError('TRANSACTION_NOT_FOUND', { transactionId });
    return entry;
  }

  private rollbackQuietly(transactionId: string): void {
    try {
      this.storage().rollbackTransaction(transactionId);
    } catch {
      // already gone or the store is closed
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
    summary: 'Commit an open transaction of the caller; each of its writes is authorized again with the caller\'s current roles.',
    params: transactionParams,
    access: 'authenticated',
    handler: async ({ transactionId }, ctx) => {
      await data.transactions.commit(ctx, transactionId);
      return { transactionId };
    },
  });

  bus.register<TransactionParams, { savepoint: TransactionSavepoint }>({
    name: 'transaction.savepoint',
    summary: 'Mark where an open transaction of the caller stands, to roll back to (runSqlStatements: one per statement).',
    params: transactionParams,
    access: 'authenticated',
    handler: ({ transactionId }, ctx) => ({ savepoint: data.transactions.savepoint(ctx, transactionId) }),
  });

  bus.register<TransactionParams & { savepoint: TransactionSavepoint }, TransactionResult>({
    name: 'transaction.rollbackTo',
    summary: 'Undo the writes an open transaction of the caller made since a savepoint; it stays open.',
    params: {
      type: 'object',
      required: ['transactionId', 'savepoint'],
      properties: {
        transactionId: transactionIdSchema,
        savepoint: {
          type: 'object', required: ['operations', 'undo'],
          properties: { operations: { type: 'integer', minimum: 0 }, undo: { type: 'integer', minimum: 0 } },
        },
      },
    },
    access: 'authenticated',
    handler: ({ transactionId, savepoint }, ctx) => {
      data.transactions.rollbackTo(ctx, transactionId, savepoint);
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
