/**
 * Short reads on the main thread, in a bounded slice. A getRecordsUsingSql SELECT first runs in
 * the main thread's own runner (sql-runner.ts), its virtual tables reading the store directly:
 * no job posted to a worker, no blocking call back, which for a point lookup cost more than the
 * lookup itself. The slice is bounded four times: at most SLICE_RECORDS records read, at most
 * SLICE_INSTRUCTIONS VM instructions (SQLite's progress handler), values of at most
 * SLICE_VALUE_BYTES (and LIKE/GLOB patterns of SLICE_LIKE_PATTERN_BYTES), and `sql_main_slice_ms` of wall time; a statement that goes beyond any (or fails in any way) is run on a worker, which
 * gives the answer (a SELECT changes nothing, so running it again is safe). One that went beyond
 * the records or instructions goes straight to a worker next time (the same statement would
 * again); one that ran out of wall time (a busy machine may be the cause) after STRIKES times,
 * and is tried here again every RETRY_EVERY calls. Authorization is the same decision (table-requests.ts answerRead), made before the
 * statement reads its first row.
 */
import type { Engine } from '../../kernel/engine';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { TableDefinition } from '../../kernel/storage/types';
import { loadSqlite } from './sqlite-module';
import { budget, runJob, startRunner, type Transport } from './sql-runner';
import type { SqlJob, StatementOutcome, TableReply, TableRequest } from './sql-protocol';
import { answerRead, closeScan, jobError, READ_OPS, writeScan, type JobContext, type OpenScan } from './table-requests';
import { RowBatchWriter } from './row-batch';
import { catalogUpdate } from './catalog-update';

/** Most records a statement reads on the main thread. */
export const SLICE_RECORDS = 64;
/** Bytes of the buffer the slice's scans write their batches into (a larger record gets a buffer of its own). */
const SLICE_BATCH_BYTES = 64 * 1024;
/** VM instructions between two checks of the slice's deadline. */
const CHECK_EVERY = 1_000;
/** Most VM instructions of a slice (in checks of CHECK_EVERY). */
export const SLICE_INSTRUCTIONS = 200_000;
/** Slices that ran out of time before a statement goes straight to a worker (a slow moment of the machine is not enough). */
const STRIKES = 3;
/** A statement sent to workers for running out of time is tried in a slice again every this many calls. */
const RETRY_EVERY = 32;
/**
 * Longest string or blob a slice may make or read. One VM instruction can build a value of any
 * size (randomblob, zeroblob, printf, group_concat) or read a huge stored one, and some take time
 * in the square of their operands' length (instr, replace: 1 MiB operands held the thread for
 * minutes), which neither the instruction nor the record bound sees: beyond this the statement
 * fails here and a worker (SQLite's own limits) answers it. 4 KiB keeps a quadratic call to a few
 * milliseconds.
 */
export const SLICE_VALUE_BYTES = 4096;
/** Longest LIKE or GLOB pattern in a slice: matching costs up to the value's length times the pattern's. */
export const SLICE_LIKE_PATTERN_BYTES = 64;
/** sqlite3_limit ids: SQLITE_LIMIT_LENGTH, SQLITE_LIMIT_LIKE_PATTERN_LENGTH. */
const SLICE_LIMITS: ReadonlyArray<readonly [number, number]> = [[0, SLICE_VALUE_BYTES], [8, SLICE_LIKE_PATTERN_BYTES]];
/** Statements remembered (their strikes); forgotten all at once beyond this. */
const REMEMBERED = 10_000;

/** Thrown through the virtual table when the slice has read its records: the job fails and goes to a worker. */
const BEYOND_SLICE = { ok: false, error: { id: 'SQL_ERROR', details: { reason: 'beyond the main-thread slice' } } } as const satisfies TableReply;

export class MainSlice {
  private state: 'loading' | 'ready' | 'failed' = 'loading';
  private loading: Promise<void> | undefined;
  /** Per (database, owner): the table definitions the main runner's connection holds. */
  private readonly held = new Map<string, Map<string, TableDefinition>>();
  /** Per (database, owner, text): how often its slice ran out of time (Infinity: it reads too many records or runs too many instructions). */
  private readonly strikes = new Map<string, number>();
  private context: JobContext | undefined;
  /** Where this thread's scans write their row batches (the runner copies each before its next call). */
  private readonly batches = new RowBatchWriter(new Uint8Array(SLICE_BATCH_BYTES));
  private recordsRead = 0;
  private overRecords = false;

  constructor(private readonly engine: Engine, private readonly storage: () => StoragePort) {}

  /** Whether the job may run in a slice here: one SELECT (getRecordsUsingSql), with slices on. */
  accepts(job: SqlJob): boolean {
    return this.engine.settings.sql_main_slice_ms > 0 && this.state !== 'failed' && job.kind === 'query' && job.statements.length === 1;
  }

  /** Resolves when this thread's SQLite is loaded (the first SQL call waits for it, as it would for a worker's). */
  loaded(): true | Promise<void> {
    if (this.state === 'ready') return true;
    this.loading ??= loadSqlite().then((loaded) => {
      startRunner(loaded, this.transport(), CHECK_EVERY, SLICE_LIMITS);
      this.state = 'ready';
    }, () => {
      // Workers report SQLite's failure to load; here it only means every call goes to them.
      this.state = 'failed';
    });
    return this.loading;
  }

  /** The job's outcomes, or undefined when a worker must run it (call when `loaded()`). */
  tryRun(job: SqlJob, context: JobContext): StatementOutcome[] | undefined {
    if (this.state !== 'ready' || !this.accepts(job)) return undefined;
    const sliceMs = this.engine.settings.sql_main_slice_ms;
    const key = `${job.database}\u0000${job.owner}\u0000${job.statements[0]}`;
    const strikes = this.strikes.get(key) ?? 0;
    if (strikes === Infinity) return undefined;
    if (strikes >= STRIKES) {
      this.strikes.set(key, strikes + 1);
      if ((strikes - STRIKES + 1) % RETRY_EVERY !== 0) return undefined;
    }
    const heldKey = `${job.database}\u0000${job.owner}`;
    let held = this.held.get(heldKey);
    if (!held) {
      held = new Map();
      this.held.set(heldKey, held);
    }
    const catalog = catalogUpdate(this.storage(), job.database, held);
    this.context = context;
    this.recordsRead = 0;
    this.overRecords = false;
    let outcomes: StatementOutcome[] | undefined;
    try {
      outcomes = runJob(job, catalog, sliceMs, SLICE_INSTRUCTIONS / CHECK_EVERY);
    } catch {
      outcomes = undefined;
    } finally {
      for (const scanId of [...context.scans.keys()]) closeScan(context, scanId);
      this.context = undefined;
    }
    if (outcomes !== undefined && !outcomes.some((outcome) => outcome.error)) {
      if (this.strikes.has(key)) this.strikes.delete(key);
      return outcomes;
    }
    if (this.strikes.size >= REMEMBERED) this.strikes.clear();
    this.strikes.set(key, this.overRecords || budget.exhausted ? Infinity : (this.strikes.get(key) ?? 0) + 1);
    return undefined;
  }

  private transport(): Transport {
    return {
      call: (request: TableRequest): TableReply => {
        const context = this.context;
        if (!context || !READ_OPS.has(request.op)) return BEYOND_SLICE;
        if (request.op === 'scan' || request.op === 'more') {
          const left = SLICE_RECORDS - this.recordsRead;
          if (left <= 0) {
            this.overRecords = true;
            return BEYOND_SLICE;
          }
          // One more than are left: a scan that returns them all and no more ends within the slice.
          request = { ...request, batch: Math.min(request.batch, left + 1) };
        }
        try {
          const value = answerRead(this.engine, this.storage(), context, request);
          if (request.op !== 'scan' && request.op !== 'more') return { ok: true, value };
          const scan = value as OpenScan;
          const before = scan.next;
          const written = writeScan(context, scan, this.batches);
          this.recordsRead += scan.next - before;
          return { ok: true, value: typeof written === 'number' ? this.batches.bytes.subarray(0, written) : written };
        } catch (error) {
          return { ok: false, error: jobError(error) };
        }
      },
      tell: (request: TableRequest): void => {
        const context = this.context;
        if (context && request.op === 'close') closeScan(context, request.scanId);
      },
    };
  }
}
