/**
 * Helpers over what the storage port's reads return (./storage-port.ts): a record's positional
 * values turned into a row object, and a read in slices run to its end in one call.
 */
import type { ReadSlices } from './storage-port';
import type { CanonicalValue, RecordId, Row, TableDefinition } from './types';

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The row object of a record's stored values (StoredValues: entry c - 1 is column c of
 * `table.columns`; entries beyond the array's end read as the column default, else null). A
 * bigint within the safe integer range reads as a number.
 */
export function rowOf(table: TableDefinition, id: RecordId, values: readonly unknown[]): Row {
  const columns = table.columns;
  const row: Row = { id };
  const n = values.length;
  for (let c = 1; c < columns.length; c++) {
    let value = (c - 1 < n ? values[c - 1] : columns[c].defaultValue) as CanonicalValue | undefined;
    if (value === undefined) value = null;
    else if (typeof value === 'bigint' && value >= MIN_SAFE && value <= MAX_SAFE) value = Number(value);
    row[columns[c].name] = value;
  }
  return row;
}

/** Runs a read to its end in one call (no slices): for reads that visit no more than they return. */
export function readAll<T>(read: ReadSlices<T>): T {
  const step = read.next(Number.POSITIVE_INFINITY);
  if (!step.done) throw new Error('a read given no limit of visits did not finish');
  return step.value;
}
