/**
 * The row batch: how a scan's stored records cross from the main thread to a runner's virtual
 * table (docs/sql.md, "How a range reaches SQLite"). The main thread writes the store's values
 * straight into a buffer (the worker's shared reply buffer, sync-call.ts) without building an
 * object per row or running v8.serialize; the runner copies the bytes into SQLite's memory and
 * hands text and blobs to SQLite from there (row-batch-reader.ts), without making JS strings.
 *
 * Layout (little-endian):
 *   u32 rows, u32 scanId (0: the scan ended with this batch), then per row:
 *   u32 values (the record ID, then the stored values: fewer than the columns when columns were
 *   added since the record was written), then each value as a tag byte and its payload:
 *     NULL, TRUE, FALSE          no payload
 *     INT32                      i32 (a number that is a 32-bit integer, -0 excepted)
 *     FLOAT64                    f64 (any other number)
 *     BIGINT                     i64
 *     TEXT                       u32 byte length, UTF-8
 *     BYTES                      u32 length, the bytes
 *     SERIALIZED                 u32 length, v8.serialize of the value (JSON and variant values)
 */
import { serialize } from 'node:v8';
import type { StoredValues } from '../../kernel/storage/storage-port';

export const TAG_NULL = 0;
export const TAG_TRUE = 1;
export const TAG_FALSE = 2;
export const TAG_INT32 = 3;
export const TAG_FLOAT64 = 4;
export const TAG_BIGINT = 5;
export const TAG_TEXT = 6;
export const TAG_BYTES = 7;
export const TAG_SERIALIZED = 8;

/** Bytes before the first row: the row count and the scan id. */
export const BATCH_HEADER = 8;

/** Buffer's own UTF-8 writer (what write() calls after checking its arguments). */
type Utf8Buffer = Buffer & { utf8Write(text: string, offset: number, max: number): number };

/** Records a scan has read and not yet sent, and where the next one to send is. */
export interface PendingRows {
  records: readonly StoredValues[];
  next: number;
}

/**
 * A writer over one buffer (made once per buffer: it keeps a DataView of it). `write` fills the
 * buffer with as many of the pending rows as fit.
 */
export class RowBatchWriter {
  private readonly view: DataView;
  /** The buffer written into (a batch is its first `write()` bytes). */
  readonly bytes: Utf8Buffer;

  constructor(target: Uint8Array) {
    this.bytes = Buffer.from(target.buffer, target.byteOffset, target.byteLength) as Utf8Buffer;
    this.view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  }

  /**
   * Writes pending rows from `pending.next` while they fit (moving `next` past them). The header
   * names `scanId` while rows are left or the scan has not `ended`, else 0. Returns the batch's
   * length in bytes, or -1 when not even the first row fits (`rowsBytes` tells what it needs).
   */
  write(pending: PendingRows, scanId: number, ended: boolean): number {
    const { records } = pending;
    const end = this.bytes.length;
    let at = BATCH_HEADER;
    let rows = 0;
    let r = pending.next;
    for (; r < records.length; r++) {
      const written = this.writeRow(records[r], at, end);
      if (written < 0) break;
      at = written;
      rows++;
    }
    if (rows === 0 && r < records.length) return -1;
    pending.next = r;
    this.view.setUint32(0, rows, true);
    this.view.setUint32(4, r < records.length || !ended ? scanId : 0, true);
    return at;
  }

  /** Writes one row at `at`; returns where it ends, or -1 when it does not fit before `end`. */
  private writeRow(record: StoredValues, at: number, end: number): number {
    const values = record.values;
    const count = values.length;
    if (at + 4 > end) return -1;
    this.view.setUint32(at, count + 1, true);
    at = this.writeValue(record.id, at + 4, end);
    for (let i = 0; i < count && at >= 0; i++) at = this.writeValue(values[i], at, end);
    return at;
  }

  /** Writes one tagged value at `at`; returns where it ends, or -1 when it does not fit before `end`. */
  private writeValue(value: unknown, at: number, end: number): number {
    const { view, bytes } = this;
    if (value === null || value === undefined) {
      if (at + 1 > end) return -1;
      bytes[at] = TAG_NULL;
      return at + 1;
    }
    switch (typeof value) {
      case 'number':
        if (at + 9 > end) return -1;
        // -0 is no 32-bit integer: a float column keeps its sign.
        if ((value | 0) === value && (value !== 0 || 1 / value > 0)) {
          bytes[at] = TAG_INT32;
          view.setInt32(at + 1, value, true);
          return at + 5;
        }
        bytes[at] = TAG_FLOAT64;
        view.setFloat64(at + 1, value, true);
        return at + 9;
      case 'string': {
        // A UTF-16 code unit is at most 3 bytes of UTF-8; measured exactly only near the end.
        if (at + 5 + value.length * 3 > end && at + 5 + Buffer.byteLength(value, 'utf8') > end) return -1;
        const length = bytes.utf8Write(value, at + 5, end - at - 5);
        bytes[at] = TAG_TEXT;
        view.setUint32(at + 1, length, true);
        return at + 5 + length;
      }
      case 'boolean':
        if (at + 1 > end) return -1;
        bytes[at] = value ? TAG_TRUE : TAG_FALSE;
        return at + 1;
      case 'bigint':
        if (at + 9 > end) return -1;
        bytes[at] = TAG_BIGINT;
        view.setBigInt64(at + 1, value, true);
        return at + 9;
      default: {
        if (value instanceof Uint8Array) return this.writeBytes(TAG_BYTES, value, at, end);
        return this.writeBytes(TAG_SERIALIZED, serialize(value), at, end);
      }
    }
  }

  private writeBytes(tag: number, value: Uint8Array, at: number, end: number): number {
    if (at + 5 + value.length > end) return -1;
    this.bytes[at] = tag;
    this.view.setUint32(at + 1, value.length, true);
    this.bytes.set(value, at + 5);
    return at + 5 + value.length;
  }
}

/** Bytes a batch of these records takes (a buffer for a row larger than the usual one). */
export function rowsBytes(records: readonly StoredValues[]): number {
  let total = BATCH_HEADER;
  for (const record of records) {
    total += 4 + valueBytes(record.id);
    for (const value of record.values) total += valueBytes(value);
  }
  return total;
}

function valueBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'number' || typeof value === 'bigint') return 9;
  if (typeof value === 'string') return 5 + Buffer.byteLength(value, 'utf8');
  if (value instanceof Uint8Array) return 5 + value.length;
  return 5 + serialize(value).length;
}
