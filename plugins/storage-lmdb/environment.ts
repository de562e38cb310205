/**
 * The LMDB environment: one `lmdb` root in `dataDir` and the named sub-databases in it.
 *
 * Sub-database names (never reused, so a dropped handle can never alias a new one):
 * - `_catalog`          catalog entries (databases, tables, topics, the name counter)
 * - `r:<n>`             records of one table: key = record id (number), value = msgpack array
 * - `i:<n>`             entries of one index: key = index key bytes ‖ 8-byte id, value = empty
 * - `x:<name>`          an internal store (kernel catalogs), string keys, msgpack values
 * - `log:blocks`        the message log: key = first sequence of a block, value = a block of messages (log-blocks.ts)
 * - `log:chunks`        the log's per-topic index: key = topic id ‖ first sequence, value = sequences (topic-index.ts)
 *
 * Durability: the environment is opened with `overlappingSync: true`, so a commit's sync runs
 * after the write lock is released and the next commit forms meanwhile (a later sync covers
 * every commit before it). lmdb-js then resolves a write when it is committed (visible), not when
 * it is on disk: `durable` adds the wait for the commit's `flushed`, and every write that is
 * answered goes through it (`write`, `writeAtomic`, or `durable` around a plain put).
 * docs/storage.md, "Writes and durability", has the rule and the measurements.
 *
 * Permissions: the files hold the password hashes, so `dataDir` is 0700 and the LMDB files 0600
 * whatever the umask (LMDB itself would create them 0664 minus the umask).
 */
import type { Histogram } from '../../kernel/metrics';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';

export type RecordsDb = Database<unknown[], number>;
export type IndexDb = Database<Buffer, Buffer>;
export type CatalogDb = Database<unknown, Key[]>;
export type InternalDb = Database<unknown, string>;

export const MAX_DBS = 8192;
export const EMPTY_VALUE = Buffer.alloc(0);

/** The files LMDB keeps in a data folder (with `noSubdir: false`). */
const LMDB_FILES = ['data.mdb', 'lock.mdb'];

/**
 * Creates `dataDir` 0700 and the LMDB files 0600 before LMDB opens them (it keeps the mode of an
 * existing file), and tightens a folder or files created before with looser modes.
 */
function restrictToOwner(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    fs.chmodSync(dataDir, 0o700);
  } catch (error) {
    // A folder another user owns (a mount point) keeps its mode; the files below are still ours.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
  for (const name of LMDB_FILES) {
    const fd = fs.openSync(path.join(dataDir, name), 'a', 0o600);
    try {
      fs.fchmodSync(fd, 0o600);
    } finally {
      fs.closeSync(fd);
    }
  }
}

function ignore(): void {}
function first<T>(values: [T, void]): T { return values[0]; }

export class LmdbEnvironment {
  readonly root: RootDatabase;
  readonly catalog: CatalogDb;
  private closed = false;
  /** Set by the metrics (lmdb-storage.ts addMetrics): how long a write waits for its commit. */
  commitLatency?: Histogram;
  /** A write's commit is being timed: one sample per commit at most, never one per write. */
  private commitTimed = false;

  /** `unsafeNoSync` (tests only, see plugins/storage-lmdb/index.ts) commits without syncing. */
  constructor(readonly dataDir: string, { unsafeNoSync = false }: { unsafeNoSync?: boolean } = {}) {
    restrictToOwner(dataDir);
    this.root = open({
      path: dataDir,
      // lmdb-js guesses "a file" when the path has an extension (`/srv/engine.data`): say it's a folder.
      noSubdir: false,
      maxDbs: MAX_DBS,
      // lmdb-js refuses noSync together with overlappingSync (nothing is synced then anyway).
      overlappingSync: !unsafeNoSync,
      noSync: unsafeNoSync,
      // LMDB zeroes the pages it mallocs: with `noMemInit` the unused bytes of a page carry
      // whatever the process freed there before (request bodies, passwords, certificates) into
      // data.mdb and every backup of it. Node 24 put the CA bundle's text there on first start.
      noMemInit: false,
    });
    this.catalog = this.root.openDB<unknown, Key[]>('_catalog', {}) as CatalogDb;
  }

  /** Opens (creating when absent) a table's records sub-database. Runs its own small sync txn. */
  openRecords(name: string): RecordsDb {
    return this.root.openDB<unknown[], number>(name, {}) as RecordsDb;
  }

  openIndex(name: string): IndexDb {
    return this.root.openDB<Buffer, Buffer>(name, { keyEncoding: 'binary', encoding: 'binary' }) as IndexDb;
  }

  openInternal(name: string): InternalDb {
    return this.root.openDB<unknown, string>(name, {}) as InternalDb;
  }

  /**
   * Runs `action` inside the next batched write transaction (shared with every other write of
   * this event-loop turn). Resolves after the commit is durable. An action that throws must not
   * have written anything (writers validate first, then write).
   */
  write<T>(action: () => T): Promise<T> {
    this.assertOpen();
    return this.timeCommit(this.durable(this.root.transaction(action)));
  }

  /** Like `write`, but in a child transaction: a throw rolls back everything the action wrote. */
  writeAtomic<T>(action: () => T): Promise<T> {
    this.assertOpen();
    return this.timeCommit(this.durable(this.root.childTransaction(action)));
  }

  /**
   * `committed` (what lmdb-js answers for a write queued just now: it resolves once the commit is
   * visible) resolved only once that commit is also synced to disk. Call it in the same
   * synchronous run as the write: lmdb-js's `flushed` is the flush of the newest queued commit
   * when its `then` is called, so asked now it is this write's commit (or a later one, whose
   * sync covers this one too); asked after the commit it could only be later, never earlier.
   * A failed commit rejects `committed`, and with it the answer (its flush never comes).
   */
  durable<T>(committed: Promise<T>): Promise<T> {
    const synced = this.root.flushed.then(ignore);
    return Promise.all([committed, synced]).then(first);
  }

  /**
   * Times from now until `written` is durable, when no other write's commit is being timed:
   * a sample of what a write waits for its commit (sync included), at most one per commit.
   */
  timeCommit<T>(written: Promise<T>): Promise<T> {
    const histogram = this.commitLatency;
    if (histogram === undefined || this.commitTimed) return written;
    this.commitTimed = true;
    // Wall time a client waits (performance.now: no engine clock is involved).
    const started = performance.now();
    const done = (): void => {
      this.commitTimed = false;
      histogram.observe((performance.now() - started) / 1000);
    };
    written.then(done, () => { this.commitTimed = false; });
    return written;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  assertOpen(): void {
    if (this.closed) throw new Error('the storage has been closed');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A last commit that failed (a full disk) was answered to its writer; it does not stop the close.
    const lastFailed = await Promise.resolve(this.root.committed).then(() => false, () => true);
    if (lastFailed) this.skipFlushWaitAtClose();
    await this.root.close();
  }

  /**
   * lmdb-js's close first waits for the sync of the newest commit (`_endWrites`), but a failed
   * commit's sync never comes (its flush resolvers run on success only), so the close would
   * hang for good. Every write was settled above and a failed commit holds nothing to sync:
   * the close goes on without that wait (writes are still ended, as lmdb-js does).
   */
  private skipFlushWaitAtClose(): void {
    const root = this.root as unknown as { _endWrites?: () => unknown };
    const endWrites = root._endWrites;
    if (typeof endWrites !== 'function') return;
    root._endWrites = function (this: unknown): undefined {
      Promise.resolve(endWrites.call(this)).catch(ignore);
      return undefined;
    };
  }
}
