/**
 * Main-thread side of the virtual tables: answers a worker's TableRequest by running the same
 * data commands as the db actions (cursor.open/fetch/close, record.insert/patch/delete,
 * table.create/delete, index.create/delete) on the bus with the caller's context, so every read
 * and write is authorized by the kernel's authorize() and checked (types, unique keys) exactly as
 * on every other path, inside the call's transaction when it has one.
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { EngineError, toEngineError } from '../../kernel/errors';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { TableDefinition } from '../../kernel/storage/types';
import type { CursorFetchResult, CursorOpenResult, RecordInsertResult } from '../../lib/data/command-types';
import { ISO_FORMAT } from '../../lib/values/wire-format';
import type { JobError, ScanBatch, TableRequest } from './sql-protocol';

/** What a running job's requests are answered with. */
export interface JobContext {
  ctx: CommandContext;
  database: string;
  transactionId?: string;
  /** Open scans (data cursors), closed when the job ends. */
  scans: Set<string>;
  /** A table definition the worker now holds (after its own DDL). */
  defined(def: TableDefinition): void;
  removed(table: string): void;
}

export function jobError(error: unknown): JobError {
  const engineError = toEngineError(error);
  return { id: engineError.id, details: { ...(engineError.details as JobError['details']), message: engineError.message } };
}

const FORMAT = { ...ISO_FORMAT };

export async function answer(engine: Engine, storage: StoragePort, job: JobContext, request: TableRequest): Promise<unknown> {
  const { ctx, database } = job;
  const bus = engine.bus;
  const tx = job.transactionId !== undefined ? { transactionId: job.transactionId } : {};
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
      const opened = await bus.execute<CursorOpenResult>('cursor.open', {
        database, table: request.table, ...(request.index !== undefined ? { index: request.index } : {}),
        ...(request.lower ? { lower: request.lower } : {}), ...(request.upper ? { upper: request.upper } : {}),
        reverse: request.reverse, format: FORMAT, ...tx,
      }, ctx);
      job.scans.add(opened.cursorId);
      return fetch(engine, job, opened.cursorId, request.batch);
    }
    case 'more':
      return fetch(engine, job, request.scanId, request.batch);
    case 'close':
      await closeScan(engine, job, request.scanId);
      return true;
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

async function fetch(engine: Engine, job: JobContext, cursorId: string, count: number): Promise<ScanBatch> {
  const got = await engine.bus.execute<CursorFetchResult>('cursor.fetch', { cursorId, count, direction: 'forward' }, job.ctx);
  if (got.more) return { records: got.records, scanId: cursorId };
  await closeScan(engine, job, cursorId);
  return { records: got.records };
}

export async function closeScan(engine: Engine, job: JobContext, cursorId: string): Promise<void> {
  if (!job.scans.delete(cursorId)) return;
  try {
    await engine.bus.execute('cursor.close', { cursorId }, job.ctx);
  } catch {
    // already closed (its table dropped, the session ended)
  }
}
