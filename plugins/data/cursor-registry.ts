/**
 * Open cursors: random ids (144 bits), owned by the session or account that opened them
 * (data-context `ownerOf`), closed after their idle timeout without use (kernel/idle-expiry.ts,
 * on the engine's clock), when their session ends, when their table or database is deleted, and
 * at shutdown.
 *
 * A cursor of another owner answers CURSOR_NOT_FOUND, exactly like an unknown or expired one, so
 * ids cannot be probed.
 *
 * One operation per cursor at a time (`exclusive`): a filtered fetch runs in slices and lets the
 * event loop serve others between them, so a second fetch of the same cursor can arrive
 * meanwhile; it waits for the first to finish, then runs from where the first left the cursor
 * (as if the client had waited for the answer). Closing does not wait: an operation going on
 * fails with CURSOR_NOT_FOUND at its next slice, and one waiting its turn when it starts.
 */
import { randomBytes } from 'node:crypto';
import type { Resource } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';
import type { IdleExpiry, IdleRegistry } from '../../kernel/idle-expiry';
import { NodeBoundIds } from '../../kernel/node-bound';
import type { RecordCursor } from '../../kernel/storage/storage-port';
import type { ColumnDefinition, TableDefinition } from '../../kernel/storage/types';
import type { ValueFormat } from '../../lib/values/wire-format';
import type { RecordEncoder } from './record-codec';

/** How SQL cursors' ids begin (plugins/sql): never a data cursor's. */
const SQL_CURSOR_IDS = 'sql-';

export interface CursorEntry {
  readonly id: string;
  readonly owner: string;
  readonly database: string;
  readonly table: TableDefinition;
  /** The index read through (undefined: record-ID order). */
  readonly index: string | undefined;
  readonly cursor: RecordCursor;
  /** `select` of cursor.open, applied to every fetch. */
  readonly select: readonly string[] | undefined;
  /** The format of cursor.open; a fetch's `format` is merged over it. */
  readonly format: ValueFormat;
  readonly fields: ColumnDefinition[];
  /** Encoder for `select` in `format` (a fetch with its own format builds another). */
  readonly encoder: RecordEncoder;
  /** Whether the read has a filter: its fetches may visit far more entries than they return. */
  readonly filtered: boolean;
  lastUsedAt: number;
  /** Settles when the operations started on the cursor so far have finished (`exclusive`). */
  busy: Promise<void> | undefined;
}

export type NewCursor = Omit<CursorEntry, 'id' | 'lastUsedAt' | 'busy'>;

export class CursorRegistry {
  private readonly cursors: IdleRegistry<CursorEntry>;

  /**
   * `idleTimeoutMs(owner)` is read on every check, so a change (the owning session's
   * idleCursorTimeoutSeconds) applies at once.
   */
  constructor(
    expiry: IdleExpiry,
    idleTimeoutMs: (owner: string) => number,
    /** In a cluster, ids carry this node's name (another node answers NODE_BOUND). */
    private readonly nodeIds = new NodeBoundIds(null),
  ) {
    this.cursors = expiry.registry<CursorEntry>({
      idleTimeoutMs: (entry) => idleTimeoutMs(entry.owner),
      expired: (entry) => closeQuietly(entry),
    });
  }

  get size(): number {
    return this.cursors.size;
  }

  add(cursor: NewCursor): CursorEntry {
    let id: string;
    // Ids starting `sql-` are SQL cursors' (the cursor actions route by it): drawn again (a node
    // name cannot start so, config/schema.json; a random id does once in 64⁴).
    do id = this.nodeIds.make(randomBytes(18).toString('base64url'));
    while (id.startsWith(SQL_CURSOR_IDS));
    const entry: CursorEntry = { ...cursor, id, lastUsedAt: 0, busy: undefined };
    return this.cursors.add(entry.id, entry);
  }

  /** The owner's live cursor, not marked as used; throws CURSOR_NOT_FOUND (unknown, expired or foreign), NODE_BOUND (another node's). */
  find(owner: string, cursorId: string): CursorEntry {
    const entry = this.cursors.get(cursorId);
    if (!entry) this.nodeIds.checkElsewhere(cursorId, 'cursor');
    if (!entry || entry.owner !== owner) throw new EngineError('CURSOR_NOT_FOUND', { cursorId });
    return entry;
  }

  /** The owner's live cursor, marked as used; throws CURSOR_NOT_FOUND like `find`. */
  use(owner: string, cursorId: string): CursorEntry {
    const entry = this.find(owner, cursorId);
    this.cursors.touch(entry);
    return entry;
  }

  /**
   * Runs `operation` on the cursor once the operations started on it before have finished,
   * whatever their outcome. When none is going on and `operation` returns a plain value (a fetch
   * that needs no slices), it runs at once and nothing is queued.
   */
  exclusive<T>(entry: CursorEntry, operation: () => T | Promise<T>): T | Promise<T> {
    if (entry.busy === undefined) {
      const result = operation();
      if (result instanceof Promise) this.holdUntil(entry, result);
      return result;
    }
    const queued = entry.busy.then(() => {
      this.stillOpen(entry); // closed while it waited its turn?
      return operation();
    });
    this.holdUntil(entry, queued);
    return queued;
  }

  /** Between two slices (or after waiting its turn): the cursor is still open; marks it as used. Throws CURSOR_NOT_FOUND. */
  stillOpen(entry: CursorEntry): void {
    if (this.cursors.get(entry.id) !== entry) throw new EngineError('CURSOR_NOT_FOUND', { cursorId: entry.id });
    this.cursors.touch(entry);
  }

  private holdUntil(entry: CursorEntry, operation: Promise<unknown>): void {
    const settled = operation.then(() => undefined, () => undefined);
    entry.busy = settled;
    void settled.then(() => {
      if (entry.busy === settled) entry.busy = undefined;
    });
  }

  /** The table a cursor of the owner reads: what each later step of the cursor is authorized on. */
  resourceOf(owner: string, cursorId: string): Resource {
    const entry = this.find(owner, cursorId);
    return { kind: 'table', database: entry.database, table: entry.table.name };
  }

  /** Closes the owner's cursor; throws CURSOR_NOT_FOUND like `find`. */
  close(owner: string, cursorId: string): void {
    this.remove(this.find(owner, cursorId));
  }

  /** Closes a cursor whose opening failed after it was registered (see cursor.open). */
  discard(entry: CursorEntry): void {
    this.remove(entry);
  }

  closeOwner(owner: string): void {
    for (const [, entry] of this.cursors.all()) if (entry.owner === owner) this.remove(entry);
  }

  /** Closes cursors over a table (every table of a database when `table` is omitted; only those reading one of `indexes` when given). */
  closeTable(database: string, table?: string, indexes?: readonly string[]): void {
    for (const [, entry] of this.cursors.all()) {
      if (entry.database !== database || (table !== undefined && entry.table.name !== table)) continue;
      if (indexes && (entry.index === undefined || !indexes.includes(entry.index))) continue;
      this.remove(entry);
    }
  }

  closeAll(): void {
    for (const [, entry] of this.cursors.all()) this.remove(entry);
  }

  private remove(entry: CursorEntry): void {
    this.cursors.delete(entry.id);
    closeQuietly(entry);
  }
}

function closeQuietly(entry: CursorEntry): void {
  try {
    entry.cursor.close();
  } catch {
    // the store may already be closed (shutdown) or the table dropped
  }
}
