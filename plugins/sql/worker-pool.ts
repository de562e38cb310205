/**
 * The SQL workers: up to `sql_workers` threads, started when calls need them, each with its own
 * SQLite instance (sql-worker.ts), one job at a time each, the others queued. While a job runs, its worker's table requests arrive on
 * a port and are answered here (table-requests.ts) between the event loop's other work, so a long
 * query costs the main thread only the reads it asks for, in bounded batches.
 *
 * Each worker is told only what changed in a database's catalog since its last job there (table
 * definitions are kept by identity: the store hands out a new object when one changes).
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { join } from 'node:path';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import type { StoragePort } from '../../kernel/storage/storage-port';
import type { TableDefinition } from '../../kernel/storage/types';
import type { CatalogUpdate, MainToWorker, SqlJob, StatementOutcome, TableRequest, WorkerToMain } from './sql-protocol';
import { replyBuffer, SyncReplier } from './sync-call';
import { answer, answerRead, closeScan, jobError, writeScan, type JobContext, type OpenScan } from './table-requests';
import { catalogUpdate } from './catalog-update';
import { MainSlice } from './main-slice';
import { workerExecArgv } from './worker-profile';

const WORKER_FILE = join(__dirname, 'sql-worker.js');

interface Running {
  job: SqlJob;
  context: JobContext;
  resolve(outcomes: StatementOutcome[]): void;
  reject(error: unknown): void;
  /** Stops a worker that does not answer long after the job's own timeout. */
  watchdog: NodeJS.Timeout;
}

class SqlWorker {
  readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = replyBuffer();
  private readonly replier: SyncReplier;
  readonly ready: Promise<void>;
  running: Running | undefined;
  /** Per (database, owner) connection of the worker: the definitions it holds. */
  readonly sent = new Map<string, Map<string, TableDefinition>>();
  dead = false;
  /** SQLite is loaded and the worker takes jobs. */
  started = false;

  constructor(private readonly pool: SqlWorkerPool) {
    this.worker = new Worker(WORKER_FILE, { execArgv: workerExecArgv() });
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.replier = new SyncReplier(this.port, this.signal);
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('error', reject);
      this.worker.once('exit', () => reject(new Error('the SQL worker stopped before it started')));
      this.worker.on('message', (message: WorkerToMain) => {
        if (message.type === 'ready') {
          this.started = true;
          resolve();
        }
        else this.finish(message);
      });
    });
    this.worker.on('error', (error) => this.died(error));
    this.worker.on('exit', () => this.died(new Error('the SQL worker stopped')));
    this.port.on('message', (request: TableRequest) => { void this.serve(request); });
    this.port.unref();
    const init: MainToWorker = { type: 'init', port: channel.port2, signal: this.signal };
    this.worker.postMessage(init, [channel.port2]);
  }

  private async serve(request: TableRequest): Promise<void> {
    const running = this.running;
    if (!running || running.job.id !== request.jobId) {
      if (!request.noReply) this.replier.reply({ ok: false, error: { id: 'SQL_ERROR', details: { reason: 'no job is running' } } });
      return;
    }
    try {
      if (request.op === 'scan' || request.op === 'more') {
        // A scan's rows are written straight into the shared buffer (no promise, no serialization).
        this.sendRows(running.context, answerRead(this.pool.engine, this.pool.storage(), running.context, request) as OpenScan);
        return;
      }
      const value = await answer(this.pool.engine, this.pool.storage(), running.context, request);
      if (!request.noReply) this.replier.reply({ ok: true, value });
    } catch (error) {
      if (!request.noReply) this.replier.reply({ ok: false, error: jobError(error) });
    }
  }

  private sendRows(context: JobContext, scan: OpenScan): void {
    const written = writeScan(context, scan, this.replier.batches);
    if (typeof written === 'number') this.replier.sendBatch(written);
    else this.replier.sendLargeBatch(written);
  }

  run(job: SqlJob, context: JobContext, catalog: CatalogUpdate): Promise<StatementOutcome[]> {
    return new Promise((resolve, reject) => {
      const watchdog = setTimeout(() => {
        // The worker did not stop at its own deadline (a step that never reaches the progress handler): end it.
        void this.worker.terminate();
      }, job.timeoutMs + 10_000);
      watchdog.unref();
      this.running = { job, context, resolve, reject, watchdog };
      this.worker.postMessage({ type: 'job', job, catalog } satisfies MainToWorker);
    });
  }

  private finish(message: WorkerToMain): void {
    const running = this.running;
    if (!running || message.type === 'ready' || running.job.id !== message.jobId) return;
    this.running = undefined;
    clearTimeout(running.watchdog);
    void this.closeScans(running.context).then(() => {
      if (message.type === 'done') running.resolve(message.outcomes);
      else running.reject(new EngineError(message.error.id as never, message.error.details));
      this.pool.next(this);
    });
  }

  private async closeScans(context: JobContext): Promise<void> {
    for (const scanId of [...context.scans.keys()]) closeScan(context, scanId);
  }

  private died(error: Error): void {
    if (this.dead) return;
    this.dead = true;
    const running = this.running;
    this.running = undefined;
    if (running) {
      clearTimeout(running.watchdog);
      void this.closeScans(running.context);
      running.reject(new EngineError('SQL_TIMEOUT', { ms: running.job.timeoutMs }));
    }
    // One that never started is dealt with where it was started (pool.grow).
    if (this.started) this.pool.replace(this, error);
  }
}

interface Queued {
  job: SqlJob;
  context: JobContext;
  resolve(outcomes: StatementOutcome[]): void;
  reject(error: unknown): void;
}

export class SqlWorkerPool {
  private workers: SqlWorker[] = [];
  private readonly queue: Queued[] = [];
  private nextJobId = 1;
  private closed = false;

  private readonly slice: MainSlice;

  constructor(readonly engine: Engine, readonly storage: () => StoragePort, private readonly size: number) {
    this.slice = new MainSlice(engine, storage);
  }

  /** Workers start on demand: a server whose clients send no SQL runs none. */
  private grow(): void {
    let fresh: SqlWorker;
    try {
      fresh = new SqlWorker(this);
    } catch (error) {
      // Node refused to start it (its options): the queued calls fail now, none is left queued.
      this.failQueued(error);
      return;
    }
    this.workers.push(fresh);
    fresh.ready.then(() => this.next(fresh), (error: unknown) => {
      // The worker could not start (SQLite failed to load): the queued calls fail with it.
      this.workers = this.workers.filter((worker) => worker !== fresh);
      this.failQueued(error);
    });
  }

  private failQueued(error: unknown): void {
    for (const queued of this.queue.splice(0)) queued.reject(new EngineError('NOT_AVAILABLE', { feature: 'SQL', reason: (error as Error).message }));
  }

  /** Runs a job on the first free worker (or when one frees up). */
  async run(job: Omit<SqlJob, 'id'>, context: Omit<JobContext, 'defined' | 'removed' | 'scans'>): Promise<StatementOutcome[]> {
    if (this.closed) throw new EngineError('NOT_AVAILABLE', { feature: 'SQL', reason: 'the server is stopping' });
    const full: SqlJob = { ...job, id: this.nextJobId++ };
    const jobContext: JobContext = { ...context, scans: new Map(), defined: () => undefined, removed: () => undefined };
    // A short read is answered here and now (main-slice.ts); anything longer runs on a worker.
    if (this.slice.accepts(full)) {
      const loaded = this.slice.loaded();
      if (loaded !== true) await loaded;
      const sliced = this.slice.tryRun(full, jobContext);
      if (sliced) return sliced;
    }
    if (this.closed) throw new EngineError('NOT_AVAILABLE', { feature: 'SQL', reason: 'the server is stopping' });
    return new Promise((resolve, reject) => {
      const queued: Queued = { job: full, context: jobContext, resolve, reject };
      const free = this.workers.find((worker) => worker.started && !worker.running && !worker.dead);
      if (free) {
        this.start1(free, queued);
        return;
      }
      this.queue.push(queued);
      const starting = this.workers.filter((worker) => !worker.started).length;
      if (this.workers.length < this.size && starting < this.queue.length) this.grow();
    });
  }

  private start1(worker: SqlWorker, queued: Queued): void {
    const key = `${queued.job.database}\u0000${queued.job.owner}`;
    let sent = worker.sent.get(key);
    if (!sent) {
      sent = new Map();
      worker.sent.set(key, sent);
    }
    const held = sent;
    queued.context.defined = (def) => { held.set(def.name, def); };
    queued.context.removed = (table) => { held.delete(table); };
    let catalog: CatalogUpdate;
    try {
      catalog = catalogUpdate(this.storage(), queued.job.database, held);
    } catch (error) {
      queued.reject(error);
      this.next(worker);
      return;
    }
    worker.run(queued.job, queued.context, catalog).then(queued.resolve, queued.reject);
  }

  next(worker: SqlWorker): void {
    if (worker.dead || worker.running || !worker.started) return;
    const queued = this.queue.shift();
    if (queued) this.start1(worker, queued);
  }

  replace(dead: SqlWorker, _error: Error): void {
    this.workers = this.workers.filter((worker) => worker !== dead);
    if (this.closed || this.queue.length === 0) return;
    this.grow();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queued of this.queue.splice(0)) queued.reject(new EngineError('NOT_AVAILABLE', { feature: 'SQL', reason: 'the server is stopping' }));
    await Promise.all(this.workers.map((worker) => worker.worker.terminate()));
  }
}
