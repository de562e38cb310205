/**
 * RecordCursor over LMDB: a position (the key of the last record returned or skipped, or one of
 * the two ends) and a plan. Each fetch re-opens an LMDB range from the position, so no read
 * transaction stays open between fetches and later commits are seen.
 *
 * Directions are relative to the cursor's order: `forward` follows the read order (index order,
 * or its reverse when the cursor was opened with `reverse`), `backward` goes the other way. A
 * fresh cursor stands before the first record: `backward` returns nothing.
 */
import { EngineError } from '../../kernel/errors';
import type { RecordCursor, StoredRecord } from '../../kernel/storage/storage-port';
import type { Row } from '../../kernel/storage/types';
import type { TableState } from './catalog';
import { overlayScan, rowOfEntry, type Overlay, type Predicate, type ScanEntry, type ScanKey, type ScanPlan } from './reads';

type Direction = 'forward' | 'backward';

/** Where the cursor stands: before the first record, after the last, or after a key. */
type Position = { at: 'start' } | { at: 'end' } | { at: 'key'; key: ScanKey };

const START: Position = Object.freeze({ at: 'start' });
const END: Position = Object.freeze({ at: 'end' });

export class LmdbCursor implements RecordCursor {
  private position: Position = START;
  private closed = false;
  private pendingSkip: number;

  constructor(
    private readonly ts: TableState,
    private readonly plan: ScanPlan,
    private readonly reverse: boolean,
    private readonly predicate: Predicate | null,
    initialSkip: number,
    /** The transaction's uncommitted view of the table, when the cursor was opened in one. */
    private readonly overlay?: () => Overlay | undefined,
  ) {
    this.pendingSkip = initialSkip;
  }

  fetch(count: number, direction: Direction): StoredRecord[] {
    this.check();
    this.applyInitialSkip();
    const out: StoredRecord[] = [];
    if (!(count > 0)) return out;
    for (const [entry, row] of this.matches(direction)) {
      this.position = { at: 'key', key: entry.key };
      out.push({ id: entry.id, row });
      if (out.length >= count) break;
    }
    return out;
  }

  skip(count: number, direction: Direction): number {
    this.check();
    this.applyInitialSkip();
    return this.move(count, direction);
  }

  get exhausted(): boolean {
    return !this.hasMore('forward');
  }

  hasMore(direction: Direction): boolean {
    if (this.closed || this.ts.dropped) return false;
    if (this.plan.index !== null && !this.ts.indexes.includes(this.plan.index)) return false;
    this.applyInitialSkip();
    for (const _ of this.matches(direction)) return true;
    return false;
  }

  moveTo(end: 'start' | 'end'): void {
    this.check();
    this.pendingSkip = 0;
    this.position = end === 'start' ? START : END;
  }

  close(): void {
    this.closed = true;
  }

  /** Matching entries (and their rows) from the position in a direction. */
  private *matches(direction: Direction): Generator<[ScanEntry, Row]> {
    const { position } = this;
    const forward = direction === 'forward';
    if ((forward && position.at === 'end') || (!forward && position.at === 'start')) return;
    const after = position.at === 'key' ? position.key : undefined;
    const descending = this.reverse !== !forward;
    for (const entry of overlayScan(this.ts, this.plan, descending, this.overlay?.(), after)) {
      const row = rowOfEntry(this.ts, entry);
      if (row === undefined || (this.predicate !== null && !this.predicate(row))) continue;
      yield [entry, row];
    }
  }

  private move(count: number, direction: Direction): number {
    let moved = 0;
    if (!(count > 0)) return 0;
    for (const [entry] of this.matches(direction)) {
      this.position = { at: 'key', key: entry.key };
      moved++;
      if (moved >= count) break;
    }
    return moved;
  }

  private applyInitialSkip(): void {
    if (this.pendingSkip > 0) {
      const n = this.pendingSkip;
      this.pendingSkip = 0;
      this.move(n, 'forward');
    }
  }

  private check(): void {
    if (this.closed) throw new EngineError('CURSOR_NOT_FOUND', { cursorId: '' });
    if (this.ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: this.ts.def.database, table: this.ts.def.name });
    if (this.plan.index !== null && !this.ts.indexes.includes(this.plan.index)) {
      throw new EngineError('INDEX_NOT_FOUND', { index: this.plan.index.def.name, table: this.ts.def.name });
    }
  }
}
