/**
 * A virtual-table cursor's rows (row-batch.ts) as SQLite reads them: each batch is copied once
 * into SQLite's own memory, and a column's text or blob goes to SQLite from there
 * (sqlite3_result_text with the bytes, which SQLite copies), never as a JS string. Columns whose
 * stored values SQLite sees in another form (bit, timestamp, json, variant: sql-values.ts
 * storedToSql) are decoded and converted as before.
 */
import { deserialize } from 'node:v8';
import type { CanonicalValue, ColumnDefinition } from '../../kernel/storage/types';
import type { Sqlite3 } from './sqlite-module';
import type { FastValues, SqliteExports } from './fast-values';
import { storedToSql } from './sql-values';
import {
  BATCH_HEADER, TAG_BIGINT, TAG_BYTES, TAG_FALSE, TAG_FLOAT64, TAG_INT32, TAG_NULL, TAG_SERIALIZED, TAG_TEXT, TAG_TRUE,
} from './row-batch';

/** SQLite copies a value handed with this destructor (SQLITE_TRANSIENT) before the call returns. */
const TRANSIENT = -1;
/** Least size of a cursor's copy of its batches (a point lookup's batch is far smaller; growing is rare). */
const LEAST_BLOCK = 16 * 1024;

const REAL_TYPES = new Set(['real', 'float', 'money', 'number']);
/** Types whose stored value is exactly what SQLite is handed (sql-values.ts storedToSql's default). */
const AS_STORED = new Set(['tinyint', 'smallint', 'integer', 'bigint', 'real', 'float', 'money', 'number', 'char', 'varchar', 'lvarchar', 'date', 'time', 'binary', 'varbinary', 'lvarbinary']);

/** What a batch needs of a virtual table's columns, worked out once per table. */
export class BatchColumns {
  readonly width: number;
  /** Per column: a whole number is handed to SQLite as a REAL. */
  readonly real: boolean[];
  /** Per column: the stored value is what SQLite is handed (no conversion). */
  readonly asStored: boolean[];

  constructor(readonly definitions: readonly ColumnDefinition[]) {
    this.width = definitions.length;
    this.real = definitions.map((column) => REAL_TYPES.has(column.type));
    this.asStored = definitions.map((column) => AS_STORED.has(column.type));
  }
}

/** SQLite's memory as the batches of one runner read it. */
export class BatchMemory {
  readonly e: SqliteExports;
  private readonly memory: { buffer: ArrayBuffer };
  // Views over SQLite's memory; memory.grow() detaches them (a byte view's length drops to 0), then they are made again.
  bytes: Buffer & { utf8Slice(start: number, end: number): string };
  view: DataView;

  constructor(sqlite3: Sqlite3, readonly fast: FastValues) {
    this.e = sqlite3.wasm.exports as unknown as SqliteExports;
    this.memory = (sqlite3.wasm as unknown as { memory: { buffer: ArrayBuffer } }).memory;
    this.bytes = Buffer.from(this.memory.buffer) as BatchMemory['bytes'];
    this.view = new DataView(this.memory.buffer);
  }

  /** Makes the views again if SQLite's memory grew. */
  fresh(): void {
    if (this.bytes.length !== 0) return;
    this.bytes = Buffer.from(this.memory.buffer) as BatchMemory['bytes'];
    this.view = new DataView(this.memory.buffer);
  }

  /** The value at `p` as the store keeps it (the form storedToSql converts). */
  decode(p: number): unknown {
    const { bytes, view } = this;
    switch (bytes[p]) {
      case TAG_NULL: return null;
      case TAG_TRUE: return true;
      case TAG_FALSE: return false;
      case TAG_INT32: return view.getInt32(p + 1, true);
      case TAG_FLOAT64: return view.getFloat64(p + 1, true);
      case TAG_BIGINT: return view.getBigInt64(p + 1, true);
      case TAG_TEXT: return bytes.utf8Slice(p + 5, p + 5 + view.getUint32(p + 1, true));
      // Copies: a view of SQLite's memory would go empty when it grows (v8.deserialize makes
      // its byte arrays views of the buffer it reads).
      case TAG_BYTES: return new Uint8Array(bytes.subarray(p + 5, p + 5 + view.getUint32(p + 1, true)));
      case TAG_SERIALIZED: return deserialize(Buffer.from(bytes.subarray(p + 5, p + 5 + view.getUint32(p + 1, true))));
      default: throw new Error(`row batch: unknown tag ${bytes[p]}`);
    }
  }

  /** Bytes of the tagged value at `p`. */
  size(p: number): number {
    switch (this.bytes[p]) {
      case TAG_NULL: case TAG_TRUE: case TAG_FALSE: return 1;
      case TAG_INT32: return 5;
      case TAG_FLOAT64: case TAG_BIGINT: return 9;
      case TAG_TEXT: case TAG_BYTES: case TAG_SERIALIZED: return 5 + this.view.getUint32(p + 1, true);
      default: throw new Error(`row batch: unknown tag ${this.bytes[p]}`);
    }
  }
}

/** One cursor's current batch, copied into SQLite's memory. */
export class HeapBatch {
  /** Rows in the batch. */
  count = 0;
  /** The scan to ask for more (0: the scan has ended). */
  scanId = 0;
  private block = 0;
  private capacity = 0;
  /** Per row and column: the value's address (-1: beyond the stored values, the column's default). */
  private offsets = new Int32Array(0);

  constructor(private readonly memory: BatchMemory, private readonly columns: BatchColumns) {}

  /** Copies a batch in (its bytes may be overwritten once this returns). */
  load(input: Uint8Array): void {
    const { memory } = this;
    if (input.length > this.capacity) {
      this.free();
      const capacity = Math.max(LEAST_BLOCK, input.length);
      const block = memory.e.sqlite3_malloc(capacity);
      if (block === 0) throw new Error('out of memory');
      this.block = block;
      this.capacity = capacity;
    }
    memory.fresh();
    const { bytes, view } = memory;
    const block = this.block;
    bytes.set(input, block);
    const count = view.getUint32(block, true);
    const width = this.columns.width;
    this.count = count;
    this.scanId = view.getUint32(block + 4, true);
    if (this.offsets.length < count * width) this.offsets = new Int32Array(count * width);
    const offsets = this.offsets;
    let p = block + BATCH_HEADER;
    for (let row = 0, at = 0; row < count; row++, at += width) {
      const values = view.getUint32(p, true);
      p += 4;
      for (let v = 0; v < values; v++) {
        if (v < width) offsets[at + v] = p;
        p += memory.size(p);
      }
      for (let c = values; c < width; c++) offsets[at + c] = -1;
    }
  }

  /** No rows (the scan reads nothing). */
  clear(): void {
    this.count = 0;
    this.scanId = 0;
  }

  /** The record ID of a row. */
  id(row: number): number {
    this.memory.fresh();
    return Number(this.memory.decode(this.offsets[row * this.columns.width]));
  }

  /** Hands SQLite a row's column (0: the record ID). */
  result(ctx: number, row: number, column: number): void {
    const { memory, columns } = this;
    memory.fresh();
    const p = this.offsets[row * columns.width + column];
    const definition = columns.definitions[column];
    const real = columns.real[column];
    if (p < 0) {
      // A record written before the column was added: it reads as the column's default.
      memory.fast.result(ctx, storedToSql(definition, definition.defaultValue), real);
      return;
    }
    if (columns.asStored[column]) {
      const { e, view } = memory;
      switch (memory.bytes[p]) {
        case TAG_NULL:
          e.sqlite3_result_null(ctx);
          return;
        case TAG_INT32:
          if (real) e.sqlite3_result_double(ctx, view.getInt32(p + 1, true));
          else e.sqlite3_result_int(ctx, view.getInt32(p + 1, true));
          return;
        case TAG_FLOAT64:
          memory.fast.result(ctx, view.getFloat64(p + 1, true), real);
          return;
        case TAG_BIGINT:
          e.sqlite3_result_int64(ctx, view.getBigInt64(p + 1, true));
          return;
        case TAG_TEXT:
          // SQLite copies the bytes before this returns (SQLITE_TRANSIENT).
          e.sqlite3_result_text(ctx, p + 5, view.getUint32(p + 1, true), TRANSIENT);
          return;
        case TAG_BYTES:
          e.sqlite3_result_blob(ctx, p + 5, view.getUint32(p + 1, true), TRANSIENT);
          return;
        default:
      }
    }
    memory.fast.result(ctx, storedToSql(definition, memory.decode(p) as CanonicalValue), real);
  }

  /** Gives the memory back (the cursor closes). */
  free(): void {
    if (this.block !== 0) this.memory.e.sqlite3_free(this.block);
    this.block = 0;
    this.capacity = 0;
    this.count = 0;
  }
}
