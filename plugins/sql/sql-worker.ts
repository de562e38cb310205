/**
 * An SQL worker thread: a runner (sql-runner.ts) whose virtual tables reach the engine's tables
 * through blocking calls to the main thread (sync-call.ts). Runs one job at a time, posted by
 * worker-pool.ts; a long query blocks this thread, never the main one.
 */
import { parentPort } from 'node:worker_threads';
import { loadSqlite } from './sqlite-module';
import { SyncCaller } from './sync-call';
import { HostError } from './engine-tables';
import { runJob, startRunner } from './sql-runner';
import type { JobError, MainToWorker, WorkerToMain } from './sql-protocol';

const port = parentPort!;
port.on('message', (message: MainToWorker) => {
  if (message.type === 'init') {
    const caller = new SyncCaller(message.port, message.signal);
    void loadSqlite().then((loaded) => {
      startRunner(loaded, caller);
      port.postMessage({ type: 'ready' } satisfies WorkerToMain);
    });
    return;
  }
  try {
    const outcomes = runJob(message.job, message.catalog);
    port.postMessage({ type: 'done', jobId: message.job.id, outcomes } satisfies WorkerToMain);
  } catch (error) {
    const reported: JobError = error instanceof HostError ? error.error : { id: 'SQL_ERROR', details: { reason: (error as Error).message } };
    port.postMessage({ type: 'failed', jobId: message.job.id, error: reported } satisfies WorkerToMain);
  }
});
