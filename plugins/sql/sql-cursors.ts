/**
 * Cursors over SQL results (getRecordsUsingSql with returnCursor): the result is read once, up to
 * `sql_max_records` rows, and kept here; getRecordsFromCursor pages it. Ids start with `sql-` and
 * are longer than the data commands' cursor ids, so the action knows where to send a fetch. In a
 * cluster the node's name follows the prefix (`sql-<node>.<random>`, kernel/node-bound.ts), so
 * another node answers NODE_BOUND naming the node that holds the cursor (docs/cluster.md).
 * A cursor belongs to the session (or account) that opened it; another caller's id reads as
 * unknown. Unused cursors close after `cursor_idle_timeout_seconds` (engine clock). Each holds up
 * to `sql_max_records` rows, so an owner keeps at most `sql_max_cursors_per_session` open: one
 * more is refused (SQL_TOO_MANY_CURSORS) before its query runs.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../kernel/clock';
import { EngineError } from '../../kernel/errors';
import { NodeBoundIds } from '../../kernel/node-bound';
import type { ColumnDefinition } from '../../kernel/storage/types';
import type { SqlValue } from './sql-protocol';

export const SQL_CURSOR_PREFIX = 'sql-';

export interface SqlCursor {
  id: string;
  owner: string;
  fields: ColumnDefinition[];
  rows: SqlValue[][];
  /** Rows before the position have been returned (forward). */
  position: number;
  lastUsedAt: number;
}

export class SqlCursors {
  private readonly cursors = new Map<string, SqlCursor>();

  constructor(
    private readonly clock: Clock,
    private readonly idleMs: () => number,
    private readonly maxPerOwner: () => number,
    /** In a cluster, ids carry this node's name (another node answers NODE_BOUND). */
    private readonly nodeIds = new NodeBoundIds(null),
  ) {}

  /** Refuses an owner at its cap (called before the query runs, and again when its cursor is added). */
  checkRoom(owner: string): void {
    this.expire();
    let open = 0;
    for (const cursor of this.cursors.values()) if (cursor.owner === owner) open++;
    const limit = this.maxPerOwner();
    if (open >= limit) throw new EngineError('SQL_TOO_MANY_CURSORS', { limit });
  }

  add(owner: string, fields: ColumnDefinition[], rows: SqlValue[][]): SqlCursor {
    // Concurrent calls of one owner may all have passed checkRoom while their queries ran.
    this.checkRoom(owner);
    const cursor: SqlCursor = { id: SQL_CURSOR_PREFIX + this.nodeIds.make(randomBytes(24).toString('base64url')), owner, fields, rows, position: 0, lastUsedAt: this.clock.now() };
    this.cursors.set(cursor.id, cursor);
    return cursor;
  }

  use(owner: string, id: string): SqlCursor {
    this.expire();
    const cursor = this.cursors.get(id);
    if (!cursor && id.startsWith(SQL_CURSOR_PREFIX)) this.nodeIds.checkElsewhere(id.slice(SQL_CURSOR_PREFIX.length), 'SQL cursor');
    if (!cursor || cursor.owner !== owner) throw new EngineError('CURSOR_NOT_FOUND', { cursorId: id });
    cursor.lastUsedAt = this.clock.now();
    return cursor;
  }

  close(owner: string, id: string): void {
    this.use(owner, id);
    this.cursors.delete(id);
  }

  closeOwner(owner: string): void {
    for (const [id, cursor] of this.cursors) if (cursor.owner === owner) this.cursors.delete(id);
  }

  private expire(): void {
    const now = this.clock.now();
    const idle = this.idleMs();
    for (const [id, cursor] of this.cursors) if (now - cursor.lastUsedAt > idle) this.cursors.delete(id);
  }
}
