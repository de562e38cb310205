/**
 * Main-thread side of the virtual tables: answers a worker's TableRequest. Writes and DDL run the
 * same data commands as the db actions (record.insert/patch/delete, table.create/delete,
 * index.create/delete) on the bus with the caller's context, so they are authorized by the
 * kernel's authorize() and checked (types, unique keys) exactly as on every other path, inside
 * the call's transaction. Reads are authorized by the same decision record.find makes and read
 * through the storage port's cursors (key ranges of an index), handing the worker the stored
 * values as they are: no wire encoding on this thread for rows SQLite may only aggregate.
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { EngineError, toEngineError } from '../../kernel/errors';
import type { KeyBound, RecordCursor, StoragePort, TransactionSavepoint } from '../../kernel/storage/storage-port';
import type { TableDefinition } from '../../kernel/storage/types';
import type { RecordInsertResult } from '../../lib/data/command-types';
import { ISO_FORMAT } from '../../lib/values/wire-format';
import type { JobError, TableRequest } from './sql-protocol';
import { RowBatchWriter, rowsBytes, type PendingRows } from './row-batch';

/** What a running job's requests are answered with. */
export interface JobContext {
  ctx: CommandContext;
  database: string;
  transactionId?: string;
  /** Where the transaction stood before the running statement's first write (runSqlStatements). */
  savepoint?: TransactionSavepoint;
  /** Open scans, closed when the job ends. */
  scans: Map<number, OpenScan>;
  /** A table definition the worker now holds (after its own DDL). */
  defined(def: TableDefinition): void;
  removed(table: string): void;
}

export function jobError(error: unknown): JobError {
  const engineError = toEngineError(error);
  return { id: engineError.id, details: { ...(engineError.details as JobError['details']), message: engineError.message } };
}

const FORMAT = { ...ISO_FORMAT };

/** Requests a read-only statement makes: answered synchronously (the main thread's own runs call this directly). */
export const READ_OPS: ReadonlySet<TableRequest['op']> = new Set(['authorize', 'readable', 'scan', 'more', 'close']);

/**
 * A scan a runner reads: the store's cursor, and the records read from it that are not sent yet
 * (a batch holds what fits in the reply buffer; the rest go with the next `more`).
 */
export interface OpenScan extends PendingRows {
  id: number;
  cursor: RecordCursor;
  /** The cursor has nothing more (it is closed). */
  ended: boolean;
}

/**
 * Authorizes the tables a request carries (a statement's first request), then answers a read
 * request. A scan's answer (`scan`, `more`) is its OpenScan, holding the records to send:
 * `writeScan` writes them as a row batch.
 */
export function answerRead(engine: Engine, storage: StoragePort, job: JobContext, request: TableRequest): unknown {
  const { ctx, database } = job;
  if (request.authorize) {
    for (const table of request.authorize.reads) engine.authorize(ctx, 'record.find', { kind: 'table', database, table });
    for (const write of request.authorize.writes) {
      const command = write.command === 'insert' ? 'record.insert' : write.command === 'update' ? 'record.patch' : 'record.delete';
      engine.authorize(ctx, command, { kind: 'table', database, table: write.table });
    }
  }
  switch (request.op) {
    case 'authorize':
      return true;
    case 'readable':
      return storage.listTables(database).filter((table) => {
        try {
          engine.authorize(ctx, 'record.find', { kind: 'table', database, table });
          return true;
        } catch {
          return false;
        }
      });
    case 'scan': {
      // The decision cursor.open and record.find make: the caller may read this table.
      engine.authorize(ctx, 'record.find', { kind: 'table', database, table: request.table });
      const range = request.lower || request.upper ? { ...(request.lower ? { lower: request.lower as KeyBound } : {}), ...(request.upper ? { upper: request.upper as KeyBound } : {}) } : undefined;
      const cursor = storage.openCursor(database, request.table, {
        ...(request.index !== undefined ? { index: request.index } : {}), ...(range ? { range } : {}), reverse: request.reverse,
        ...(job.transactionId !== undefined ? { transactionId: job.transactionId } : {}),
      });
      const scan: OpenScan = { id: nextScanId, cursor, records: [], next: 0, ended: false };
      // Ids stay within a u32 (the batch header's field) and are never 0 (0 says "ended").
      nextScanId = nextScanId >= 0xffff_fffe ? 1 : nextScanId + 1;
      job.scans.set(scan.id, scan);
      return fill(scan, request.batch);
    }
    case 'more': {
      const scan = job.scans.get(request.scanId);
      if (!scan) throw new EngineError('CURSOR_NOT_FOUND', { cursorId: String(request.scanId) });
      return fill(scan, request.batch);
    }
    case 'close':
      closeScan(job, request.scanId);
      return true;
    default:
      throw new EngineError('INVALID_PARAMETER', { param: 'op', reason: 'not a read request' });
  }
}

export async function answer(engine: Engine, storage: StoragePort, job: JobContext, request: TableRequest): Promise<unknown> {
  if (READ_OPS.has(request.op)) return answerRead(engine, storage, job, request);
  // A write's first request carries the statement's tables too: authorize them first.
  if (request.authorize) answerRead(engine, storage, job, { op: 'authorize', jobId: request.jobId, authorize: request.authorize });
  const { ctx, database } = job;
  const bus = engine.bus;
  const tx = job.transactionId !== undefined ? { transactionId: job.transactionId } : {};
  if (request.savepoint && job.transactionId !== undefined) {
    job.savepoint = (await bus.execute<{ savepoint: TransactionSavepoint }>('transaction.savepoint', tx, ctx)).savepoint;
  }
  switch (request.op) {
    case 'rollbackStatement': {
      const savepoint = job.savepoint;
      job.savepoint = undefined;
      if (savepoint && job.transactionId !== undefined) await bus.execute('transaction.rollbackTo', { ...tx, savepoint }, ctx);
      return true;
    }
    case 'insert': {
      const inserted = await bus.execute<RecordInsertResult>('record.insert', { database, table: request.table, records: [request.record], format: FORMAT, ...tx }, ctx);
      return inserted.ids[0];
    }
    case 'update':
      await bus.execute('record.patch', { database, table: request.table, records: [{ id: request.id, values: request.values }], format: FORMAT, ...tx }, ctx);
      return true;
    case 'delete':
      await bus.execute('record.delete', { database, table: request.table, ids: [request.id], ...tx }, ctx);
      return true;
    case 'createTable': {
      const { table } = await bus.execute<{ table: TableDefinition }>('table.create', { database, table: request.table, fields: request.fields, format: FORMAT }, ctx);
      job.defined(table);
      return table;
    }
    case 'createIndex': {
      await bus.execute('index.create', { database, table: request.table, index: request.index, unique: request.unique, fields: request.fields }, ctx);
      const table = storage.getTable(database, request.table);
      job.defined(table);
      return table;
    }
    case 'dropTable':
      await bus.execute('table.delete', { database, tables: [request.table] }, ctx);
      job.removed(request.table);
      return true;
    case 'dropIndex': {
      await bus.execute('index.delete', { database, table: request.table, indexes: [request.index] }, ctx);
      const table = storage.getTable(database, request.table);
      job.defined(table);
      return table;
    }
    default:
      throw new EngineError('INVALID_PARAMETER', { param: 'op', reason: 'unknown request' });
  }
}

let nextScanId = 1;

/**
 * Reads the next `count` records of a scan when none are left to send. A range read visits no
 * more entries than it returns, so one slice of `count` is bounded work; a short read ends the
 * scan (its cursor is closed at once, the records stay to be sent).
 */
function fill(scan: OpenScan, count: number): OpenScan {
  if (scan.next < scan.records.length || scan.ended) return scan;
  const step = scan.cursor.fetch(count, 'forward').next(Infinity);
  scan.records = step.done ? step.value : [];
  scan.next = 0;
  if (scan.records.length < count) {
    scan.ended = true;
    scan.cursor.close();
  }
  return scan;
}

/**
 * Writes the scan's next records as a row batch (row-batch.ts) with `writer`, as many as fit;
 * returns the batch's length, or, when the first record alone is larger than the writer's
 * buffer, a batch of that one record in a buffer of its own. The scan is forgotten once all its
 * records are written.
 */
export function writeScan(job: JobContext, scan: OpenScan, writer: RowBatchWriter): number | Uint8Array {
  let written: number | Uint8Array = writer.write(scan, scan.id, scan.ended);
  if (written < 0) {
    const alone: PendingRows = { records: [scan.records[scan.next]], next: 0 };
    const own = new Uint8Array(rowsBytes(alone.records));
    scan.next++;
    new RowBatchWriter(own).write(alone, scan.id, scan.ended && scan.next >= scan.records.length);
    written = own;
  }
  if (scan.ended && scan.next >= scan.records.length) job.scans.delete(scan.id);
  return written;
}

export function closeScan(job: JobContext, scanId: number): void {
  const scan = job.scans.get(scanId);
  if (!scan) return;
  job.scans.delete(scanId);
  scan.records = [];
  if (scan.ended) return;
  try {
    scan.cursor.close();
  } catch {
    // already closed (its table dropped)
  }
}
