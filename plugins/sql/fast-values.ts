/**
 * Moving values in and out of SQLite on the hot path (every column of every row a virtual table
 * hands over, every column of every result row) through the WebAssembly exports directly: the
 * library's general wrappers convert and check every argument, which cost more than SQLite's own
 * work on a 1,000-row range.
 */
import type { Sqlite3 } from './sqlite-module';
import type { SqlValue } from './sql-protocol';

/** The SQLite C functions called straight on the WebAssembly exports (fast-values.ts, row-batch-reader.ts). */
export interface SqliteExports {
  sqlite3_result_null(ctx: number): void;
  sqlite3_result_int(ctx: number, value: number): void;
  sqlite3_result_int64(ctx: number, value: bigint): void;
  sqlite3_result_double(ctx: number, value: number): void;
  sqlite3_result_text(ctx: number, text: number, bytes: number, destructor: number): void;
  sqlite3_result_blob(ctx: number, blob: number, bytes: number, destructor: number): void;
  sqlite3_malloc(bytes: number): number;
  sqlite3_free(pointer: number): void;
  sqlite3_step(stmt: number): number;
  sqlite3_column_type(stmt: number, i: number): number;
  sqlite3_column_int64(stmt: number, i: number): bigint;
  sqlite3_column_double(stmt: number, i: number): number;
  sqlite3_column_text(stmt: number, i: number): number;
  sqlite3_column_blob(stmt: number, i: number): number;
  sqlite3_column_bytes(stmt: number, i: number): number;
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export interface FastValues {
  /** Sets a virtual table column's value; `real` makes a whole number a REAL (a float column's value). */
  result(ctx: number, value: SqlValue, real: boolean): void;
  /** The current row of a stepped statement. */
  row(stmt: number, columns: number): SqlValue[];
  /** Steps a statement of connection `db`: true with a row, false when done; throws SQLite's error (with its `resultCode`). */
  step(stmt: number, db: number): boolean;
}

/** Buffer's own UTF-8 methods (what write() and toString() call after checking their arguments; the offsets here are SQLite's). */
type Utf8Buffer = Buffer & { utf8Write(text: string, offset: number, max: number): number; utf8Slice(start: number, end: number): string };

/** SQLite copies a value handed with this destructor (SQLITE_TRANSIENT) before the call returns. */
const TRANSIENT = -1;
/** Bytes of the scratch area a string is written into on its way into SQLite (a longer one gets its own allocation). */
const SCRATCH_BYTES = 64 * 1024;
const SQLITE_ROW = 100;
const SQLITE_DONE = 101;

export function fastValues(sqlite3: Sqlite3): FastValues {
  const e = sqlite3.wasm.exports as unknown as SqliteExports;
  const heap = (): Uint8Array => sqlite3.wasm.heap8u();
  // SQLite frees what it is handed with this destructor (sqlite3_free).
  const free = sqlite3.capi.SQLITE_WASM_DEALLOC as unknown as number;
  const encoder = new TextEncoder();
  const memory = (sqlite3.wasm as unknown as { memory: { buffer: ArrayBuffer } }).memory;
  // A Buffer over the WebAssembly memory writes and reads UTF-8 in place (no intermediate copy);
  // memory.grow() detaches it (its length drops to 0), then it is made again.
  let heapBuffer = Buffer.from(memory.buffer) as Utf8Buffer;
  const buffer = (): Utf8Buffer => {
    if (heapBuffer.length === 0) heapBuffer = Buffer.from(memory.buffer) as Utf8Buffer;
    return heapBuffer;
  };
  const scratch = e.sqlite3_malloc(SCRATCH_BYTES);
  if (scratch === 0) throw new Error('out of memory');

  const copyIn = (bytes: Uint8Array): number => {
    const pointer = e.sqlite3_malloc(Math.max(1, bytes.length));
    if (pointer === 0) throw new Error('out of memory');
    heap().set(bytes, pointer);
    return pointer;
  };

  return {
    result(ctx, value, real) {
      if (value === null) e.sqlite3_result_null(ctx);
      else if (typeof value === 'number') {
        // A 32-bit integer goes as one (no BigInt to make and convert at the WebAssembly boundary).
        if (!real && (value | 0) === value) e.sqlite3_result_int(ctx, value);
        else if (!real && Number.isSafeInteger(value)) e.sqlite3_result_int64(ctx, BigInt(value));
        else e.sqlite3_result_double(ctx, value);
      } else if (typeof value === 'bigint') e.sqlite3_result_int64(ctx, value);
      else if (typeof value === 'string') {
        if (value.length * 3 <= SCRATCH_BYTES) {
          // Written in place into the scratch area, which SQLite copies (no allocation per value).
          const written = buffer().utf8Write(value, scratch, SCRATCH_BYTES);
          e.sqlite3_result_text(ctx, scratch, written, TRANSIENT);
        } else {
          const bytes = encoder.encode(value);
          e.sqlite3_result_text(ctx, copyIn(bytes), bytes.length, free);
        }
      } else {
        e.sqlite3_result_blob(ctx, copyIn(value), value.length, free);
      }
    },
    step(stmt, db) {
      const rc = e.sqlite3_step(stmt);
      if (rc === SQLITE_ROW) return true;
      if (rc === SQLITE_DONE) return false;
      const error = new Error(sqlite3.capi.sqlite3_errmsg(db) ?? `SQLite error ${rc}`) as Error & { resultCode: number };
      error.resultCode = rc;
      throw error;
    },
    row(stmt, columns) {
      // Filled in order from empty, so it stays packed (a holey array crosses threads about three times slower).
      const row: SqlValue[] = [];
      for (let i = 0; i < columns; i++) {
        switch (e.sqlite3_column_type(stmt, i)) {
          case 1: {
            // As a double first: exact for every safe integer, and no BigInt made.
            const double = e.sqlite3_column_double(stmt, i);
            if (double >= Number.MIN_SAFE_INTEGER && double <= Number.MAX_SAFE_INTEGER) {
              row[i] = double;
              break;
            }
            const value = e.sqlite3_column_int64(stmt, i);
            row[i] = value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
            break;
          }
          case 2:
            row[i] = e.sqlite3_column_double(stmt, i);
            break;
          case 3: {
            const pointer = e.sqlite3_column_text(stmt, i);
            const length = e.sqlite3_column_bytes(stmt, i);
            row[i] = buffer().utf8Slice(pointer, pointer + length);
            break;
          }
          case 4: {
            const pointer = e.sqlite3_column_blob(stmt, i);
            const length = e.sqlite3_column_bytes(stmt, i);
            row[i] = heap().slice(pointer, pointer + length);
            break;
          }
          default:
            row[i] = null;
        }
      }
      return row;
    },
  };
}
