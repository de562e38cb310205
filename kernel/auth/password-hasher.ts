/**
 * The one place passwords are hashed and checked: a small pool of worker threads (managed by
 * tarn), so at most `password_hash_workers` scrypt computations run at once and none of them
 * takes a slot of libuv's thread pool, which LMDB commits need. Without it, 32 clients sending
 * wrong passwords kept all four libuv threads busy with scrypt and durable inserts waited ~1 s.
 * Further checks wait in tarn's queue, first come first served. Idle workers end after a while.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Pool, TimeoutError } from 'tarn';
import { EngineError } from '../errors';
import type { HashReply, HashTask } from './password-hash-worker';

/** What accounts need from a hasher (tests may count calls through it). */
export interface PasswordHashing {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

const WORKER_FILE = join(__dirname, 'password-hash-worker.js');
/** An idle worker ends after this long (the next check starts one again, in about 30 ms). */
const IDLE_WORKER_MS = 30_000;
/** A check that cannot get a worker within this long fails (503) instead of waiting forever. */
const QUEUE_TIMEOUT_MS = 60_000;
/** Checks that may wait per worker; beyond that a check is refused at once (a flood must not queue without end). */
const WAITING_PER_WORKER = 100;

/** One worker thread, running one task at a time. */
class HashWorker {
  private dead = false;

  private constructor(private readonly worker: Worker) {
    worker.unref();
    worker.once('exit', () => { this.dead = true; });
    worker.once('error', () => { this.dead = true; });
  }

  static start(): Promise<HashWorker> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_FILE);
      worker.once('online', () => resolve(new HashWorker(worker)));
      worker.once('error', reject);
    });
  }

  get alive(): boolean {
    return !this.dead;
  }

  run(task: HashTask): Promise<string | boolean> {
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        this.worker.off('message', onMessage);
        this.worker.off('error', onError);
        this.worker.off('exit', onExit);
      };
      const onMessage = (reply: HashReply): void => {
        settle();
        if (reply.ok) resolve(reply.value);
        else reject(new Error(`password hashing failed: ${reply.message}`));
      };
      const onError = (error: Error): void => { settle(); reject(error); };
      const onExit = (code: number): void => { settle(); reject(new Error(`the password hashing worker exited (code ${code})`)); };
      this.worker.on('message', onMessage);
      this.worker.once('error', onError);
      this.worker.once('exit', onExit);
      this.worker.postMessage(task);
    });
  }

  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

export class PasswordHasher implements PasswordHashing {
  private readonly pool: Pool<HashWorker>;
  private running = 0;
  private mostRunning = 0;
  private done = 0;

  private readonly maxWaiting: number;

  constructor(readonly workers: number, { maxWaiting = workers * WAITING_PER_WORKER }: { maxWaiting?: number } = {}) {
    this.maxWaiting = maxWaiting;
    this.pool = new Pool<HashWorker>({
      create: () => HashWorker.start(),
      destroy: (worker) => worker.stop(),
      validate: (worker) => worker.alive,
      min: 0,
      max: workers,
      idleTimeoutMillis: IDLE_WORKER_MS,
      acquireTimeoutMillis: QUEUE_TIMEOUT_MS,
      propagateCreateError: false,
    });
  }

  async hash(password: string): Promise<string> {
    return (await this.run({ op: 'hash', password })) as string;
  }

  async verify(password: string, stored: string): Promise<boolean> {
    return (await this.run({ op: 'verify', password, stored })) as boolean;
  }

  /** Counters for tests and diagnostics: checks running now, the most ever at once, checks done. */
  get stats(): { running: number; mostRunning: number; done: number; waiting: number } {
    return { running: this.running, mostRunning: this.mostRunning, done: this.done, waiting: this.pool.numPendingAcquires() };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private async run(task: HashTask): Promise<string | boolean> {
    if (this.pool.numPendingAcquires() >= this.maxWaiting) {
      throw new EngineError('NOT_AVAILABLE', { feature: 'password checking', reason: 'too many checks are waiting; try again' });
    }
    let worker: HashWorker;
    try {
      worker = await this.pool.acquire().promise;
    } catch (error) {
      if (error instanceof TimeoutError) throw new EngineError('NOT_AVAILABLE', { feature: 'password checking', reason: 'too many checks are waiting; try again' });
      throw error;
    }
    this.running++;
    this.mostRunning = Math.max(this.mostRunning, this.running);
    try {
      return await worker.run(task);
    } finally {
      this.running--;
      this.done++;
      this.pool.release(worker);
    }
  }
}
