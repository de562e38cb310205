/**
 * Open cursors: random ids (144 bits), owned by the session or account that opened them
 * (data-context `ownerOf`), closed after `cursor_idle_timeout_seconds` without use, when their
 * session ends, when their table or database is deleted, and at shutdown.
 *
 * A cursor of another owner answers CURSOR_NOT_FOUND, exactly like an unknown or expired one, so
 * ids cannot be probed.
 */
import { randomBytes } from 'node:crypto';
import { EngineError } from '../../kernel/errors';
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
  private readonly cursors = new Map<string, CursorEntry>();
  private sweeper?: NodeJS.Timeout;

  /**
   * `idleTimeoutMs(owner)` is read on every check, so a change (server settings, the owning
   * session's idleCursorTimeoutSeconds) applies at once.
   */
  constructor(private readonly idleTimeoutMs: (owner?: string) => number) {}

  get size(): number {
    return this.cursors.size;
  }

  add(cursor: NewCursor, now = Date.now()): CursorEntry {
    const entry: CursorEntry = { ...cursor, id: randomBytes(18).toString('base64url'), lastUsedAt: now };
    this.cursors.set(entry.id, entry);
    this.startSweeper();
    return entry;
  }

  /** The owner's live cursor, marked as used; throws CURSOR_NOT_FOUND (unknown, expired or foreign). */
  use(owner: string, cursorId: string, now = Date.now()): CursorEntry {
    const entry = this.cursors.get(cursorId);
    if (!entry || entry.owner !== owner) throw new EngineError('CURSOR_NOT_FOUND', { cursorId });
    if (this.expired(entry, now)) {
      this.remove(entry);
      throw new EngineError('CURSOR_NOT_FOUND', { cursorId });
    }
    entry.lastUsedAt = now;
    return entry;
  }

  /** Closes the owner's cursor; throws CURSOR_NOT_FOUND like `use`. */
  close(owner: string, cursorId: string): void {
    this.remove(this.use(owner, cursorId));
  }

  closeOwner(owner: string): void {
    for (const entry of this.cursors.values()) if (entry.owner === owner) this.remove(entry);
  }

  /** Closes cursors over a table (every table of a database when `table` is omitted; only those reading one of `indexes` when given). */
  closeTable(database: string, table?: string, indexes?: readonly string[]): void {
    for (const entry of this.cursors.values()) {
      if (entry.database !== database || (table !== undefined && entry.table.name !== table)) continue;
      if (indexes && (entry.index === undefined || !indexes.includes(entry.index))) continue;
      this.remove(entry);
    }
  }

  sweep(now = Date.now()): void {
    for (const entry of this.cursors.values()) if (this.expired(entry, now)) this.remove(entry);
  }

  closeAll(): void {
    for (const entry of this.cursors.values()) this.remove(entry);
    this.stopSweeper();
  }

  private expired(entry: CursorEntry, now: number): boolean {
    return now - entry.lastUsedAt > this.idleTimeoutMs(entry.owner);
  }

  private remove(entry: CursorEntry): void {
    this.cursors.delete(entry.id);
    try {
      entry.cursor.close();
    } catch {
      // the store may already be closed (shutdown) or the table dropped
    }
    if (this.cursors.size === 0) this.stopSweeper();
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    const interval = Math.min(30_000, Math.max(1_000, Math.floor(this.idleTimeoutMs() / 4)));
    this.sweeper = setInterval(() => this.sweep(), interval);
    this.sweeper.unref();
  }

  private stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
