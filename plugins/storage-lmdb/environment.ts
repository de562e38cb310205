/**
 * The LMDB environment: one `lmdb` root in `dataDir` and the named sub-databases in it.
 *
 * Sub-database names (never reused, so a dropped handle can never alias a new one):
 * - `_catalog`          catalog entries (databases, tables, topics, the name counter)
 * - `r:<n>`             records of one table: key = record id (number), value = msgpack array
 * - `i:<n>`             entries of one index: key = index key bytes ‖ 8-byte id, value = empty
 * - `x:<name>`          an internal store (kernel catalogs), string keys, msgpack values
 *
 * Durability: the environment is opened with `overlappingSync: false`, so the promise of an
 * asynchronous write or transaction resolves only after its commit has been synced to disk
 * (see docs/storage.md for the measurements behind this choice).
 */
import * as fs from 'node:fs';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';

export type RecordsDb = Database<unknown[], number>;
export type IndexDb = Database<Buffer, Buffer>;
export type CatalogDb = Database<unknown, Key[]>;
export type InternalDb = Database<unknown, string>;

export const MAX_DBS = 8192;
export const EMPTY_VALUE = Buffer.alloc(0);

export class LmdbEnvironment {
  readonly root: RootDatabase;
  readonly catalog: CatalogDb;
  private closed = false;

  constructor(readonly dataDir: string) {
    fs.mkdirSync(dataDir, { recursive: true });
    this.root = open({
      path: dataDir,
      // lmdb-js guesses "a file" when the path has an extension (`/srv/engine.data`): say it's a folder.
      noSubdir: false,
      maxDbs: MAX_DBS,
      overlappingSync: false,
      noMemInit: true,
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
    return this.root.transaction(action);
  }

  /** Like `write`, but in a child transaction: a throw rolls back everything the action wrote. */
  writeAtomic<T>(action: () => T): Promise<T> {
    this.assertOpen();
    return this.root.childTransaction(action);
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
    await this.root.committed;
    await this.root.close();
  }
}
