/**
 * Open cursors: random ids (144 bits), owned by the session or account that opened them
 * (data-context `ownerOf`), closed after their idle timeout without use (kernel/idle-expiry.ts,
 * on the engine's clock), when their session ends, when their table or database is deleted, and
 * at shutdown.
 *
 * A cursor of another owner answers CURSOR_NOT_FOUND, exactly like an unknown or expired one, so
 * ids cannot be probed.
 */
import { randomBytes } from 'node:crypto';
import type { Resource } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';
import type { IdleExpiry, IdleRegistry } from '../../kernel/idle-expiry';
import type { RecordCursor } from '../../kernel/storage/storage-port';
import type { ColumnDefinition, TableDefinition } from '../../kernel/storage/types';
import type { ValueFormat } from './values/wire-format';
import type { RecordEncoder } from './record-codec';

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
  lastUsedAt: number;
}

export type NewCursor = Omit<CursorEntry, 'id' | 'lastUsedAt'>;

export class CursorRegistry {
  private readonly cursors: IdleRegistry<CursorEntry>;

  /**
   * `idleTimeoutMs(owner)` is read on every check, so a change (the owning session's
   * idleCursorTimeoutSeconds) applies at once.
   */
  constructor(expiry: IdleExpiry, idleTimeoutMs: (owner: string) => number) {
    this.cursors = expiry.registry<CursorEntry>({
      idleTimeoutMs: (entry) => idleTimeoutMs(entry.owner),
      expired: (entry) => closeQuietly(entry),
    });
  }

  get size(): number {
    return this.cursors.size;
  }

  add(cursor: NewCursor): CursorEntry {
    const entry: CursorEntry = { ...cursor, id: randomBytes(18).toString('base64url'), lastUsedAt: 0 };
    return this.cursors.add(entry.id, entry);
  }

  /** The owner's live cursor, not marked as used; throws CURSOR_NOT_FOUND (unknown, expired or foreign). */
  find(owner: string, cursorId: string): CursorEntry {
    const entry = this.cursors.get(cursorId);
    if (!entry || entry.owner !== owner) throw new EngineError('CURSOR_NOT_FOUND', { cursorId });
    return entry;
  }

  /** The owner's live cursor, marked as used; throws CURSOR_NOT_FOUND like `find`. */
  use(owner: string, cursorId: string): CursorEntry {
    const entry = this.find(owner, cursorId);
    this.cursors.touch(entry);
    return entry;
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
