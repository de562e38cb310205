/**
 * RecordCursor over LMDB: a position (the key of the last record returned or skipped) and a
 * plan. Each fetch re-opens an LMDB range from the position, so no read transaction stays open
 * between fetches and later commits are seen.
 *
 * Directions are relative to the cursor's order: `forward` follows the read order (index order,
 * or its reverse when the cursor was opened with `reverse`), `backward` goes the other way. A
 * fresh cursor stands before the first record: `backward` returns nothing.
 */
import { EngineError } from '../../kernel/errors';
import type { RecordCursor, StoredRecord } from '../../kernel/storage/storage-port';
import type { TableState } from './catalog';
import { rowOfEntry, scan, type Predicate, type ScanKey, type ScanPlan } from './reads';

type Direction = 'forward' | 'backward';

export class LmdbCursor implements RecordCursor {
  private position: ScanKey | undefined;
  private closed = false;
  private pendingSkip: number;
  private exhaustedCache: boolean | undefined;

  constructor(
    private readonly ts: TableState,
    private readonly plan: ScanPlan,
    private readonly reverse: boolean,
    private readonly predicate: Predicate | null,
    initialSkip: number,
  ) {
    this.pendingSkip = initialSkip;
  }

  fetch(count: number, direction: Direction): StoredRecord[] {
    this.check();
    this.applyInitialSkip();
    const out: StoredRecord[] = [];
    if (!(count > 0)) return out;
    if (direction === 'backward' && this.position === undefined) return out;
    for (const entry of scan(this.ts, this.plan, this.descending(direction), this.position)) {
      const row = rowOfEntry(this.ts, entry);
      if (row === undefined) continue;
      if (this.predicate !== null && !this.predicate(row)) continue;
      this.position = entry.key;
      out.push({ id: entry.id, row });
      if (out.length >= count) break;
    }
    this.exhaustedCache = undefined;
    return out;
  }

  skip(count: number, direction: Direction): number {
    this.check();
    this.applyInitialSkip();
    return this.move(count, direction);
  }

  get exhausted(): boolean {
    if (this.closed || this.ts.dropped) return true;
    if (this.plan.index !== null && !this.ts.indexes.includes(this.plan.index)) return true;
    if (this.exhaustedCache === undefined) {
      this.applyInitialSkip();
      this.exhaustedCache = true;
      for (const entry of scan(this.ts, this.plan, this.descending('forward'), this.position)) {
        const row = this.predicate === null ? true : rowOfEntry(this.ts, entry);
        if (row === undefined) continue;
        if (row !== true && !this.predicate!(row)) continue;
        this.exhaustedCache = false;
        break;
      }
    }
    return this.exhaustedCache;
  }

  close(): void {
    this.closed = true;
  }

  private descending(direction: Direction): boolean {
    return this.reverse !== (direction === 'backward');
  }

  private move(count: number, direction: Direction): number {
    let moved = 0;
    if (!(count > 0)) return 0;
    if (direction === 'backward' && this.position === undefined) return 0;
    for (const entry of scan(this.ts, this.plan, this.descending(direction), this.position)) {
      if (this.predicate !== null) {
        const row = rowOfEntry(this.ts, entry);
        if (row === undefined || !this.predicate(row)) continue;
      }
      this.position = entry.key;
      moved++;
      if (moved >= count) break;
    }
    this.exhaustedCache = undefined;
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
