/**
 * Messages between the main thread and an SQL worker (plugins/sql/sql-worker.ts).
 *
 * The main thread posts a job; the worker runs it in its own SQLite instance and posts the
 * outcome. While it runs, the worker's virtual tables read and write the engine's tables through
 * the main thread (TableRequest, answered by table-requests.ts over the data commands of the
 * bus): each request blocks the worker, never the main thread (sync-call.ts).
 */
import type { TableDefinition } from '../../kernel/storage/types';

/** A SQLite value as it crosses threads. */
export type SqlValue = null | number | bigint | string | Uint8Array;

/** Named (`{name, value}`) or positional values for a statement's parameters. */
export type SqlParam = SqlValue | boolean | { name: string; value: unknown };

export interface SqlJob {
  id: number;
  /** `query`: one statement that only reads (getRecordsUsingSql); `statements`: any, writes and DDL included. */
  kind: 'query' | 'statements';
  database: string;
  owner: string;
  statements: string[];
  params: unknown[];
  /** runSqlStatements: each statement's own parameter values (sqlParams), by its place in `statements`. */
  statementParams?: unknown[][];
  /** Rows kept of a SELECT (the rest only counted when `countAll`). */
  maxRows: number;
  skipRows: number;
  countAll: boolean;
  timeoutMs: number;
  onError: 'continue' | 'stop';
  /** When set, result rows come back as records encoded in this format (`records`), not as `rows`. */
  format?: import('../../lib/values/wire-format').ValueFormat;
  /** With `format`: the encoded rows come back as the JSON text of the `data` array of this shape (`json`). */
  json?: 'arrays' | 'objects';
}

/** How a result column is described (name, engine type, length, scale, nullable). */
export interface ResultColumn {
  name: string;
  type: string;
  length: number | null;
  scale: number | null;
  nullable: boolean;
}

/** An error as the worker reports it: an engine error id with details, or a SQLite failure. */
export interface JobError {
  /** An ErrorId of kernel/errors.ts. */
  id: string;
  details: Record<string, string | number | boolean | null>;
}

export interface StatementOutcome {
  sql: string;
  error?: JobError;
  affectedRows: number;
  columns?: ResultColumn[];
  rows?: SqlValue[][];
  /** The rows encoded in the job's format, values in field order (result-rows.ts encodeRowValues), when the job named a format. */
  encoded?: unknown[][];
  /** The encoded rows as JSON text (an array of arrays or of objects by field name), when the job asked for `json`. */
  json?: string;
  /** Rows in `json`. */
  count?: number;
  more?: boolean;
  total?: number;
}

export interface CatalogUpdate {
  /** Tables new or changed since the worker's last job on this database. */
  changed: TableDefinition[];
  removed: string[];
}

export type MainToWorker =
  | { type: 'init'; port: MessagePortLike; signal: SharedArrayBuffer }
  | { type: 'job'; job: SqlJob; catalog: CatalogUpdate };

export type WorkerToMain =
  | { type: 'ready' }
  | { type: 'done'; jobId: number; outcomes: StatementOutcome[] }
  | { type: 'failed'; jobId: number; error: JobError };

/** Requests a worker's virtual tables make while a job runs (answered on the RPC port). */
export type TableRequest = (
  | { op: 'authorize'; jobId: number }
  | { op: 'scan'; jobId: number; table: string; index?: string; lower?: WireBoundLike; upper?: WireBoundLike; reverse: boolean; batch: number }
  | { op: 'more'; jobId: number; scanId: number; batch: number }
  | { op: 'close'; jobId: number; scanId: number }
  | { op: 'insert'; jobId: number; table: string; record: Record<string, unknown> }
  | { op: 'update'; jobId: number; table: string; id: number; values: Record<string, unknown> }
  | { op: 'delete'; jobId: number; table: string; id: number }
  | { op: 'createTable'; jobId: number; table: string; fields: unknown[] }
  | { op: 'createIndex'; jobId: number; table: string; index: string; unique: boolean; fields: unknown[] }
  | { op: 'dropTable'; jobId: number; table: string }
  | { op: 'dropIndex'; jobId: number; table: string; index: string }
  | { op: 'readable'; jobId: number }
  | { op: 'rollbackStatement'; jobId: number }
  // savepoint: a statement's first write; the main thread marks the transaction before it (rollbackStatement undoes to it).
) & { authorize?: Touched; noReply?: boolean; savepoint?: true };

/** Tables a statement reads and writes, authorized before the request that carries them is answered. */
export interface Touched { reads: string[]; writes: Array<{ table: string; command: string }> }

/** A request without its job id (the worker adds it). */
export type HostRequest = TableRequest extends infer T ? (T extends unknown ? Omit<T, 'jobId'> : never) : never;

/** A bound of a key range: canonical values of the index's leading segments. */
export interface WireBoundLike { values: unknown[]; inclusive: boolean }

/**
 * The answer to a request. That of `scan` and `more` is a row batch (row-batch.ts): the bytes of
 * the scan's next records as the store keeps them, and the scan id to continue with (0 when the
 * scan has ended).
 */
export type TableReply =
  | { ok: true; value: unknown }
  | { ok: false; error: JobError };

/** Structural stand-in for worker_threads' MessagePort (transferable in `init`). */
export type MessagePortLike = import('node:worker_threads').MessagePort;
