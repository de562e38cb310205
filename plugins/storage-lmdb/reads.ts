/**
 * Reads through LMDB cursors: a key range over the records sub-database (record-ID order, also
 * the `id_pk` index) or over an index sub-database, walked lazily in either direction. A read
 * touches only the entries it returns plus the ones it skips or filters out.
 *
 * KeyRange → LMDB range (docs/queries.md, "Index keys"; storage-port.ts):
 * - lower inclusive: start at prefix        lower exclusive: start at prefixSuccessor(prefix)
 * - upper inclusive: end before prefixSuccessor(prefix)    upper exclusive: end before prefix
 * - prefix: start at p, end before prefixSuccessor(p), p cut to userBytesToKeyBytes(byteLength)
 * Index keys are always longer than any bound (they end with the 8-byte record id), so a bound
 * never equals a stored key and the same [start, end) serves both directions.
 *
 * Nulls (storage-port.ts, KeyRange): a comparison with null is false. A range with a bound starts
 * after the nulls of the first segment (ascending) or ends before them (descending); for a bound
 * on several segments, a key whose segment j is null while its segments before j equal the
 * bound's is skipped (its comparison reaches the null undecided), which `guards` check per key.
 */
import { EngineError } from '../../kernel/errors';
import { compileFilter } from '../../lib/query/filter-eval';
import type { KeyRange, ReadOptions, ReadSlices, StoredValues } from '../../kernel/storage/storage-port';
import { rowOf } from '../../kernel/storage/stored-values';
import type { CanonicalValue, Row } from '../../kernel/storage/types';
import { ID_INDEX, normalizeName } from './catalog';
import type { IdRangeOptions, KeyRangeOptions, ReadableIndex, ReadableTable } from './table-stores';
import { appendRecordId, encodeIndexKey, encodeKeyPrefix, prefixSuccessor, readRecordId, userBytesToKeyBytes, type KeySegmentSpec } from './index-keys';

/** Instrumentation for tests: LMDB entries visited by reads (index keys and records). */
export const scanStats = { entriesRead: 0 };

export type Predicate = (row: Row) => boolean;

/**
 * Keys to skip inside a range: segment `at` (its flag byte) is null while the bytes before it
 * equal `prefix` (the bound's first segments).
 */
export interface NullGuard {
  at: number;
  nullFlag: number;
  prefix: Buffer;
}

/** What to walk: record ids in [lo, hi] (inclusive, null = open) or index keys in [start, end), minus guarded keys. */
export interface ScanPlan {
  index: ReadableIndex | null;
  lo: number | null;
  hi: number | null;
  start: Buffer | null;
  end: Buffer | null;
  guards: NullGuard[] | null;
  empty: boolean;
}

/** true when a guard of the plan excludes the index key. */
function guarded(guards: NullGuard[], key: Buffer): boolean {
  for (let i = 0; i < guards.length; i++) {
    const guard = guards[i];
    if (key[guard.at] === guard.nullFlag && key.compare(guard.prefix, 0, guard.at, 0, guard.at) === 0) return true;
  }
  return false;
}

function nullFlag(spec: KeySegmentSpec): number {
  return spec.segment.ascending === false ? 0xff : 0x00;
}

export type ScanKey = number | Buffer;

export interface ScanEntry {
  key: ScanKey;
  id: number;
  /** Present for record-order scans (the value comes with the key). */
  values: unknown[] | undefined;
  /**
   * A key a null guard leaves out: yielded (not skipped inside the scan) so that readers walking
   * in slices count it as a visit, never as a record (valuesOfEntry gives undefined).
   */
  guarded?: true;
}

function invalidQuery(reason: string): EngineError {
  return new EngineError('INVALID_QUERY', { reason });
}

function idOf(value: CanonicalValue): number {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' && !Number.isNaN(value)) return value;
  throw invalidQuery('record IDs are numbers');
}

function idPlan(range: KeyRange | undefined): ScanPlan {
  const plan: ScanPlan = { index: null, lo: null, hi: null, start: null, end: null, guards: null, empty: false };
  if (!range) return plan;
  const tighten = (lo: number | null, hi: number | null): void => {
    if (lo !== null && (plan.lo === null || lo > plan.lo)) plan.lo = lo;
    if (hi !== null && (plan.hi === null || hi < plan.hi)) plan.hi = hi;
  };
  for (const bound of [range.lower, range.upper]) {
    if (bound && bound.values.length > 1) throw invalidQuery(`index "${ID_INDEX}" has one segment`);
  }
  if (range.lower && range.lower.values.length === 1) {
    const v = idOf(range.lower.values[0]);
    tighten(range.lower.inclusive ? Math.ceil(v) : Math.floor(v) + 1, null);
  }
  if (range.upper && range.upper.values.length === 1) {
    const v = idOf(range.upper.values[0]);
    tighten(null, range.upper.inclusive ? Math.floor(v) : Math.ceil(v) - 1);
  }
  if (range.prefix && range.prefix.values.length > 0) {
    if (range.prefix.values.length > 1) throw invalidQuery(`index "${ID_INDEX}" has one segment`);
    const v = idOf(range.prefix.values[0]);
    const bytes = range.prefix.byteLength ?? 8;
    if (bytes >= 8) tighten(v, v);
    else if (bytes > 0) {
      const shift = BigInt(8 * (8 - bytes));
      const lo = (BigInt(Math.trunc(v)) >> shift) << shift;
      tighten(Number(lo), Number(lo + (1n << shift) - 1n));
    }
  }
  if (plan.lo !== null && plan.hi !== null && plan.lo > plan.hi) plan.empty = true;
  return plan;
}

function indexPlan(index: ReadableIndex, range: KeyRange | undefined): ScanPlan {
  const plan: ScanPlan = { index, lo: null, hi: null, start: null, end: null, guards: null, empty: false };
  if (!range) return plan;
  const specs = index.specs;
  const segments = specs.length;
  const prefixOf = (values: CanonicalValue[]): Buffer => {
    if (values.length > segments) throw invalidQuery(`index "${index.def.name}" has ${segments} segment(s)`);
    if (values.some((value) => value === null || value === undefined)) {
      throw invalidQuery('a comparison with null is never true: bounds take values (find nulls with a filter, e.g. "price == null")');
    }
    return encodeKeyPrefix(specs, values);
  };
  const guard = (values: CanonicalValue[], key: Buffer): void => {
    for (let j = 1; j < values.length; j++) {
      plan.guards ??= [];
      plan.guards.push({ at: specs[j].offset, nullFlag: nullFlag(specs[j]), prefix: key.subarray(0, specs[j].offset) });
    }
  };
  const setStart = (start: Buffer): void => {
    if (plan.start === null || Buffer.compare(start, plan.start) > 0) plan.start = start;
  };
  const setEnd = (end: Buffer): void => {
    if (plan.end === null || Buffer.compare(end, plan.end) < 0) plan.end = end;
  };
  if ((range.lower && range.lower.values.length > 0) || (range.upper && range.upper.values.length > 0)) {
    // The nulls of the first segment sort first (ascending) or last (descending): leave them out.
    if (specs[0].segment.ascending === false) setEnd(Buffer.from([nullFlag(specs[0])]));
    else setStart(Buffer.from([nullFlag(specs[0]) + 1]));
  }
  if (range.lower && range.lower.values.length > 0) {
    const p = prefixOf(range.lower.values);
    guard(range.lower.values, p);
    if (range.lower.inclusive) setStart(p);
    else {
      const next = prefixSuccessor(p);
      if (next === null) plan.empty = true;
      else setStart(next);
    }
  }
  if (range.upper && range.upper.values.length > 0) {
    const p = prefixOf(range.upper.values);
    guard(range.upper.values, p);
    if (range.upper.inclusive) {
      const next = prefixSuccessor(p);
      if (next !== null) setEnd(next);
    } else setEnd(p);
  }
  if (range.prefix && range.prefix.values.length > 0) {
    let p = prefixOf(range.prefix.values);
    if (range.prefix.byteLength !== undefined && range.prefix.byteLength !== null) {
      const n = userBytesToKeyBytes(index.specs, range.prefix.byteLength);
      if (n < p.length) p = p.subarray(0, n);
    }
    if (p.length > 0) {
      setStart(p);
      const next = prefixSuccessor(p);
      if (next !== null) setEnd(next);
    }
  }
  if (plan.start !== null && plan.start.length === 0) plan.start = null;
  if (plan.start !== null && plan.end !== null && Buffer.compare(plan.start, plan.end) >= 0) plan.empty = true;
  return plan;
}

/** The plan for reading `options.index` (or record order) over `options.range`. */
export function planScan(ts: ReadableTable, index: string | undefined, range: KeyRange | undefined): ScanPlan {
  if (index === undefined || index === null || normalizeName(index) === ID_INDEX) return idPlan(range);
  const name = normalizeName(index);
  const state = ts.indexes.find((x) => x.def.name === name);
  if (!state) throw new EngineError('INDEX_NOT_FOUND', { index: name, table: ts.def.name });
  return indexPlan(state, range);
}

/** The LMDB range of a record-order plan in a direction, strictly after `after` when given. */
function idRange(plan: ScanPlan, descending: boolean, after: number | undefined): IdRangeOptions {
  const options: IdRangeOptions = {};
  if (descending) {
    options.reverse = true;
    if (after !== undefined) {
      options.start = after;
      options.exclusiveStart = true;
    } else if (plan.hi !== null) options.start = plan.hi;
    if (plan.lo !== null) options.end = plan.lo - 1;
  } else {
    if (after !== undefined) {
      options.start = after;
      options.exclusiveStart = true;
    } else if (plan.lo !== null) options.start = plan.lo;
    if (plan.hi !== null) options.end = plan.hi + 1;
  }
  if (descending && after !== undefined && plan.hi !== null && after > plan.hi) {
    options.start = plan.hi;
    options.exclusiveStart = false;
  }
  if (!descending && after !== undefined && plan.lo !== null && after < plan.lo) {
    options.start = plan.lo;
    options.exclusiveStart = false;
  }
  return options;
}

/** The LMDB range of an index plan in a direction, strictly after `after` when given. */
function indexRange(plan: ScanPlan, descending: boolean, after: Buffer | undefined): KeyRangeOptions {
  const options: KeyRangeOptions = {};
  let from: Buffer | null;
  let exclusive = false;
  if (descending) {
    options.reverse = true;
    from = plan.end;
    if (after !== undefined && (from === null || Buffer.compare(after, from) < 0)) {
      from = after;
      exclusive = true;
    }
    if (plan.start !== null) options.end = plan.start;
  } else {
    from = plan.start;
    if (after !== undefined && (from === null || Buffer.compare(after, from) >= 0)) {
      from = after;
      exclusive = true;
    }
    if (plan.end !== null) options.end = plan.end;
  }
  if (from !== null) options.start = from;
  if (exclusive) options.exclusiveStart = true;
  return options;
}

/**
 * Walks the plan in key order (`descending` reverses), starting strictly after `after` when
 * given. Lazy: stops when the caller stops.
 */
export function* scan(ts: ReadableTable, plan: ScanPlan, descending: boolean, after?: ScanKey): Generator<ScanEntry> {
  if (plan.empty) return;
  if (plan.index === null) {
    for (const { key, value } of ts.records.getRange(idRange(plan, descending, after as number | undefined))) {
      scanStats.entriesRead++;
      yield { key, id: key, values: value };
    }
    return;
  }
  const guards = plan.guards;
  for (const key of plan.index.db.getKeys(indexRange(plan, descending, after as Buffer | undefined))) {
    scanStats.entriesRead++;
    if (guards !== null && guarded(guards, key)) {
      yield { key, id: 0, values: undefined, guarded: true };
      continue;
    }
    yield { key, id: readRecordId(key), values: undefined };
  }
}

/** A transaction's uncommitted records of one table: id → values, or null when deleted. */
export type Overlay = ReadonlyMap<number, unknown[] | null>;

function compareKeys(a: ScanKey, b: ScanKey): number {
  return typeof a === 'number' ? a - (b as number) : Buffer.compare(a, b as Buffer);
}

/**
 * scan() as a transaction sees it: the committed entries minus the records the transaction
 * changed or deleted, merged in key order with the transaction's own versions of them.
 */
export function* overlayScan(ts: ReadableTable, plan: ScanPlan, descending: boolean, overlay: Overlay | undefined, after?: ScanKey): Generator<ScanEntry> {
  if (overlay === undefined) {
    yield* scan(ts, plan, descending, after);
    return;
  }
  if (plan.empty) return;
  const pending: ScanEntry[] = [];
  for (const [id, values] of overlay) {
    if (values === null) continue;
    let key: ScanKey;
    if (plan.index === null) {
      if ((plan.lo !== null && id < plan.lo) || (plan.hi !== null && id > plan.hi)) continue;
      key = id;
    } else {
      key = appendRecordId(encodeIndexKey(plan.index.specs, rowOf(ts.def, id, values)), id);
      if ((plan.start !== null && Buffer.compare(key, plan.start) < 0) || (plan.end !== null && Buffer.compare(key, plan.end) >= 0)) continue;
      if (plan.guards !== null && guarded(plan.guards, key)) continue;
    }
    if (after !== undefined && (descending ? compareKeys(key, after) >= 0 : compareKeys(key, after) <= 0)) continue;
    pending.push({ key, id, values });
  }
  const order = descending ? -1 : 1;
  pending.sort((a, b) => order * compareKeys(a.key, b.key));
  let next = 0;
  for (const entry of scan(ts, plan, descending, after)) {
    if (overlay.has(entry.id)) continue;
    while (next < pending.length && order * compareKeys(pending[next].key, entry.key) < 0) yield pending[next++];
    yield entry;
  }
  while (next < pending.length) yield pending[next++];
}

/** The stored values of a scan entry (fetching the record for index scans); undefined if it vanished or is guarded. */
export function valuesOfEntry(ts: ReadableTable, entry: ScanEntry): readonly unknown[] | undefined {
  if (entry.guarded) return undefined;
  return entry.values ?? ts.records.get(entry.id);
}

export function predicateOf(ts: ReadableTable, options: ReadOptions): Predicate | null {
  return options.filter ? compileFilter(options.filter, ts.def) : null;
}

export function checkCount(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new EngineError('INVALID_PARAMETER', { param: name, reason: 'a non-negative integer is required' });
  }
  return Math.floor(value);
}

/** Throws TABLE_NOT_FOUND or INDEX_NOT_FOUND when the table or the plan's index went away. */
export function checkPlan(ts: ReadableTable, plan: ScanPlan): void {
  if (ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
  if (plan.index !== null && !ts.indexes.includes(plan.index)) {
    throw new EngineError('INDEX_NOT_FOUND', { index: plan.index.def.name, table: ts.def.name });
  }
}

const NOT_DONE = Object.freeze({ done: false as const });

/**
 * StoragePort.readRecords: index order (or id order), then reverse, then skip, then limit, in
 * slices. The position is the key of the last visited entry, and each slice re-opens the LMDB
 * range after it, so no read transaction spans slices. Without a transaction's writes to merge,
 * a slice is a plain loop over the LMDB range, not the scan generator: this is the index-query
 * hot path, and it builds a row object only for a filter.
 */
export class RangeRead implements ReadSlices<StoredValues[]> {
  private readonly records: StoredValues[] = [];
  private after: ScanKey | undefined;
  private result: { done: true; value: StoredValues[] } | null = null;

  constructor(
    private readonly ts: ReadableTable,
    private readonly plan: ScanPlan,
    private readonly descending: boolean,
    private readonly predicate: Predicate | null,
    private skip: number,
    private remaining: number,
    /** The transaction's uncommitted view of the table, when read in one. */
    private readonly overlay?: () => Overlay | undefined,
  ) {
    if (remaining <= 0 || plan.empty) this.result = { done: true, value: this.records };
  }

  next(maxVisits: number): { done: false } | { done: true; value: StoredValues[] } {
    if (this.result !== null) return this.result;
    checkPlan(this.ts, this.plan);
    const overlay = this.overlay?.();
    const budget = Math.max(1, maxVisits);
    if (!(overlay === undefined ? this.walkCommitted(budget) : this.walkOverlay(overlay, budget))) return NOT_DONE;
    this.result = { done: true, value: this.records };
    return this.result;
  }

  /** One visited record: passed over (filter, skip) or kept; true once the limit is reached. */
  private take(id: number, values: readonly unknown[]): boolean {
    if (this.predicate !== null && !this.predicate(rowOf(this.ts.def, id, values))) return false;
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    this.records.push({ id, values });
    return --this.remaining <= 0;
  }

  /** Visits committed entries while the budget lasts; true once the read is finished. */
  private walkCommitted(budget: number): boolean {
    const { ts, plan } = this;
    let visits = 0;
    if (plan.index === null) {
      for (const { key, value } of ts.records.getRange(idRange(plan, this.descending, this.after as number | undefined))) {
        scanStats.entriesRead++;
        this.after = key;
        if (this.take(key, value)) return true;
        if (++visits >= budget) return false;
      }
      return true;
    }
    const records = ts.records;
    const guards = plan.guards;
    const unfiltered = this.predicate === null;
    for (const key of plan.index.db.getKeys(indexRange(plan, this.descending, this.after as Buffer | undefined))) {
      scanStats.entriesRead++;
      this.after = key;
      if (guards === null || !guarded(guards, key)) {
        if (unfiltered && this.skip > 0) this.skip--; // skipped on the index alone
        else {
          const id = readRecordId(key);
          const values = records.get(id);
          if (values !== undefined && this.take(id, values)) return true;
        }
      }
      if (++visits >= budget) return false;
    }
    return true;
  }

  /** As walkCommitted, with the transaction's own writes merged in (overlayScan). */
  private walkOverlay(overlay: Overlay, budget: number): boolean {
    let visits = 0;
    for (const entry of overlayScan(this.ts, this.plan, this.descending, overlay, this.after)) {
      this.after = entry.key;
      const values = valuesOfEntry(this.ts, entry);
      if (values !== undefined && this.take(entry.id, values)) return true;
      if (++visits >= budget) return false;
    }
    return true;
  }
}
