/**
 * RecordCursor over LMDB: a position (the key of the last record returned or skipped, or one of
 * the two ends) and a plan. Each fetch re-opens an LMDB range from the position, so no read
 * transaction stays open between fetches and later commits are seen.
 *
 * Directions are relative to the cursor's order: `forward` follows the read order (index order,
 * or its reverse when the cursor was opened with `reverse`), `backward` goes the other way. A
 * fresh cursor stands before the first record: `backward` returns nothing.
 *
 * The sliced forms (`fetchSliced`, `skipSliced`, `hasMoreSliced`: storage-port.ts) walk the same
 * entries in slices of at most `maxVisits`. Each keeps its own resume key, the last entry it
 * visited, which only it uses; the cursor's position moves when the operation finishes, to where
 * the plain method would have put it. `generation` counts the cursor's moves: an operation that
 * finds it changed since it began (another operation moved the cursor meanwhile) throws rather
 * than finish from a stale position.
 */
import { EngineError } from '../../kernel/errors';
import type { CursorSlices, RecordCursor, StoredRecord } from '../../kernel/storage/storage-port';
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
  /** Counts the moves of the position (see the sliced operations). */
  private generation = 0;

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
    if (out.length > 0) this.generation++;
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
    this.generation++;
  }

  fetchSliced(count: number, direction: Direction): CursorSlices<StoredRecord[]> {
    this.check();
    const records: StoredRecord[] = [];
    return this.sliced(direction, count, records, true, () => records);
  }

  skipSliced(count: number, direction: Direction): CursorSlices<number> {
    this.check();
    return this.sliced(direction, count, null, true, (walk) => walk.matched);
  }

  hasMoreSliced(direction: Direction): CursorSlices<boolean> {
    return this.sliced(direction, 1, null, false, (walk) => walk.matched > 0, true);
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
    if (moved > 0) this.generation++;
    return moved;
  }

  /**
   * One sliced operation: the pending initial skip (as `applyInitialSkip`), then a walk for
   * `wanted` matches in `direction`, collected into `records` when given. `move`: the position
   * goes to the walk's last match when it finishes (fetch, skip; not hasMore). `quiet`: a closed
   * cursor or a table or index gone answers `finish` of an empty walk instead of throwing (hasMore).
   */
  private sliced<T>(
    direction: Direction, wanted: number, records: StoredRecord[] | null, move: boolean,
    finish: (walk: Walk) => T, quiet = false,
  ): CursorSlices<T> {
    let generation = this.generation;
    let initial: Walk | null = null;
    let walk: Walk | null = null;
    let result: { done: true; value: T } | null = null;
    return {
      next: (maxVisits: number) => {
        if (result !== null) return result;
        if (quiet && !this.usable()) {
          result = { done: true, value: finish(new Walk(this, START, direction, 0, null)) };
          return result;
        }
        this.check();
        if (generation !== this.generation) {
          throw new Error('cursor moved by another operation while a sliced one was unfinished (run one operation per cursor at a time)');
        }
        const budget = { visits: Math.max(1, maxVisits) };
        if (walk === null && this.pendingSkip > 0) {
          initial ??= new Walk(this, this.position, 'forward', this.pendingSkip, null);
          if (!initial.step(budget)) return { done: false };
          this.pendingSkip = 0;
          if (initial.last !== undefined) {
            this.position = { at: 'key', key: initial.last };
            generation = ++this.generation;
          }
        }
        walk ??= new Walk(this, this.position, direction, wanted, records);
        if (!walk.step(budget)) return { done: false };
        if (move && walk.last !== undefined) {
          this.position = { at: 'key', key: walk.last };
          this.generation++;
        }
        result = { done: true, value: finish(walk) };
        return result;
      },
    };
  }

  /** For Walk: the entries strictly after `after` (or from the range's start) in a direction. */
  scanFrom(direction: Direction, after: ScanKey | undefined): Iterable<ScanEntry> {
    return overlayScan(this.ts, this.plan, this.reverse !== (direction === 'backward'), this.overlay?.(), after);
  }

  /** For Walk: whether a row passes the cursor's filter. */
  admits(row: Row): boolean {
    return this.predicate === null || this.predicate(row);
  }

  /** For Walk: the entry's row, undefined when the record vanished. */
  rowOf(entry: ScanEntry): Row | undefined {
    return rowOfEntry(this.ts, entry);
  }

  private usable(): boolean {
    return !this.closed && !this.ts.dropped && (this.plan.index === null || this.ts.indexes.includes(this.plan.index));
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

/**
 * A walk from a position in slices: `resume` is the last entry visited (the next slice re-opens
 * the range after it), `last` the key of the last match, `matched` how many matched.
 */
class Walk {
  resume: ScanKey | undefined;
  last: ScanKey | undefined;
  matched = 0;
  private finished: boolean;

  constructor(
    private readonly cursor: LmdbCursor,
    private readonly from: Position,
    private readonly direction: Direction,
    private readonly wanted: number,
    private readonly records: StoredRecord[] | null,
  ) {
    const forward = direction === 'forward';
    this.finished = !(wanted > 0) || (forward && from.at === 'end') || (!forward && from.at === 'start');
  }

  /** Visits entries while `budget.visits` lasts; true once the walk is finished. */
  step(budget: { visits: number }): boolean {
    if (this.finished) return true;
    if (budget.visits <= 0) return false;
    const after = this.resume ?? (this.from.at === 'key' ? this.from.key : undefined);
    const { cursor, records } = this;
    for (const entry of cursor.scanFrom(this.direction, after)) {
      this.resume = entry.key;
      budget.visits--;
      const row = cursor.rowOf(entry);
      if (row !== undefined && cursor.admits(row)) {
        this.last = entry.key;
        if (records !== null) records.push({ id: entry.id, row });
        if (++this.matched >= this.wanted) {
          this.finished = true;
          return true;
        }
      }
      if (budget.visits <= 0) return false;
    }
    this.finished = true;
    return true;
  }
}
