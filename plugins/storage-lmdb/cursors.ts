/**
 * RecordCursor over LMDB: a position (the key of the last record returned or skipped, or one of
 * the two ends) and a plan. Each slice of an operation re-opens an LMDB range, so no read
 * transaction stays open between slices or fetches and later commits are seen.
 *
 * Directions are relative to the cursor's order: `forward` follows the read order (index order,
 * or its reverse when the cursor was opened with `reverse`), `backward` goes the other way. A
 * fresh cursor stands before the first record: `backward` returns nothing.
 *
 * `fetch`, `skip` and `hasMore` run in slices of at most `maxVisits` entries (ReadSlices,
 * storage-port.ts). Each keeps its own resume key, the last entry it visited, which only it uses;
 * the cursor's position moves when the operation finishes. `generation` counts the cursor's
 * moves: an operation that finds it changed since it began (another operation moved the cursor
 * meanwhile) throws rather than finish from a stale position.
 */
import { EngineError } from '../../kernel/errors';
import type { ReadSlices, RecordCursor, StoredValues } from '../../kernel/storage/storage-port';
import { rowOf } from '../../kernel/storage/stored-values';
import type { ReadableTable } from './table-stores';
import { checkPlan, overlayScan, valuesOfEntry, type Overlay, type Predicate, type ScanEntry, type ScanKey, type ScanPlan } from './reads';

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
    private readonly ts: ReadableTable,
    private readonly plan: ScanPlan,
    private readonly reverse: boolean,
    private readonly predicate: Predicate | null,
    initialSkip: number,
    /** The transaction's uncommitted view of the table, when the cursor was opened in one. */
    private readonly overlay?: () => Overlay | undefined,
  ) {
    this.pendingSkip = initialSkip;
  }

  fetch(count: number, direction: Direction): ReadSlices<StoredValues[]> {
    this.check();
    const records: StoredValues[] = [];
    return this.sliced(direction, count, records, true, () => records);
  }

  skip(count: number, direction: Direction): ReadSlices<number> {
    this.check();
    return this.sliced(direction, count, null, true, (walk) => walk.matched);
  }

  hasMore(direction: Direction): ReadSlices<boolean> {
    return this.sliced(direction, 1, null, false, (walk) => walk.matched > 0, true);
  }

  moveTo(end: 'start' | 'end'): void {
    this.check();
    this.pendingSkip = 0;
    this.position = end === 'start' ? START : END;
    this.generation++;
  }

  close(): void {
    this.closed = true;
  }

  /**
   * One operation: the pending initial skip (the `skip` the cursor was opened with), then a walk for
   * `wanted` matches in `direction`, collected into `records` when given. `move`: the position
   * goes to the walk's last match when it finishes (fetch, skip; not hasMore). `quiet`: a closed
   * cursor or a table or index gone answers `finish` of an empty walk instead of throwing (hasMore).
   */
  private sliced<T>(
    direction: Direction, wanted: number, records: StoredValues[] | null, move: boolean,
    finish: (walk: Walk) => T, quiet = false,
  ): ReadSlices<T> {
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

  /** For Walk: whether a record passes the cursor's filter. */
  admits(id: number, values: readonly unknown[]): boolean {
    return this.predicate === null || this.predicate(rowOf(this.ts.def, id, values));
  }

  /** For Walk: the entry's values, undefined when the record vanished. */
  valuesOf(entry: ScanEntry): readonly unknown[] | undefined {
    return valuesOfEntry(this.ts, entry);
  }

  private usable(): boolean {
    return !this.closed && !this.ts.dropped && (this.plan.index === null || this.ts.indexes.includes(this.plan.index));
  }

  private check(): void {
    if (this.closed) throw new EngineError('CURSOR_NOT_FOUND', { cursorId: '' });
    checkPlan(this.ts, this.plan);
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
    private readonly records: StoredValues[] | null,
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
      const values = cursor.valuesOf(entry);
      if (values !== undefined && cursor.admits(entry.id, values)) {
        this.last = entry.key;
        if (records !== null) records.push({ id: entry.id, values });
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
