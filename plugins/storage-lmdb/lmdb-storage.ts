/**
 * The StoragePort on LMDB: records, reads, cursors and transactions here; databases, tables and
 * indexes in schema.ts; topics and the message log in message-log.ts; internal stores (docs/storage.md).
 */
import { systemClock, type Clock } from '../../kernel/clock';
import { EngineError } from '../../kernel/errors';
import type {
  BackupProgress, IntegrityReport, InternalStore, MessageInput, PositionalRows, ReadOptions, ReadSlices, RecordCursor, StoragePort,
  StoredRecord, StoredValues, WriteOptions,
} from '../../kernel/storage/storage-port';
import type {
  CanonicalValue, ColumnInput, IndexDefinition, IndexInput, RecordId, Row, TableDefinition,
} from '../../kernel/storage/types';
import type { IndexKeyLayout, TransactionSavepoint } from '../../kernel/storage/storage-port';
import { keyLayoutOf, resolveKeySegments } from './index-keys';
import { Catalog, checkIdentifier, checkName, ID_COLUMN, normalizeName, type TableState } from './catalog';
import { LmdbCursor } from './cursors';
import type { ReadableTable } from './table-stores';
import { LmdbEnvironment } from './environment';
import { LmdbInternalStore } from './internal-stores';
import { checkCount, planScan, predicateOf, RangeRead, scanStats, type Overlay, type ScanPlan } from './reads';
import { prepareInsertRow } from './records';
import { canonicalTime, columnHeader, entryTime, OperationLog } from './apply-entry';
import type { OperationsPort } from '../../kernel/storage/operation-entries';
import { checkArray, LmdbSchema } from './schema';
import type { PreparedRow } from './records';
import { LmdbMessageLog } from './message-log';
import type { MessageLogPort } from '../../kernel/storage/message-log-port';
import { TransactionManager } from './transactions';
import { addStorageMetrics } from './metrics';
import type { MetricsRegistry } from '../../kernel/metrics';
import { guardFullCommitLeftovers, StorageFullState } from './storage-full';
import { DiskSpaceGuard } from './disk-space';
import { copyEnvironment } from './backup';
import { checkIntegrity } from './integrity-check';

export interface LmdbStorageOptions {
  dataDir: string;
  defaultDatabase: string;
  log?: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
  /** Commit without syncing to disk: only for the test that proves the durability test can fail. */
  unsafeNoSync?: boolean;
  /** The clock that times every write (automatic times, createdAt): the engine's (default: the system clock). */
  clock?: Clock;
  /** Where the store adds its figures (metrics.ts); none when absent. */
  metrics?: MetricsRegistry;
  /** New data is refused while the data folder's filesystem has less free (disk-space.ts); 0: no reserve. */
  minFreeBytes?: number;
}

export async function openLmdbStorage(options: LmdbStorageOptions): Promise<StoragePort> {
  const storage = new LmdbStorage(options);
  await storage.init();
  return storage;
}

export class LmdbStorage implements StoragePort {
  readonly dataDir: string;
  /** Entries visited by reads, for tests (see reads.ts). */
  readonly scanStats = scanStats;
  private readonly env: LmdbEnvironment;
  private readonly catalog: Catalog;
  private readonly transactions: TransactionManager;
  private readonly defaultDatabase: string;
  private readonly internals = new Map<string, LmdbInternalStore<unknown>>();
  private readonly schema: LmdbSchema;
  private readonly topics: LmdbMessageLog;
  private readonly log: LmdbStorageOptions['log'];
  /** Times every write entry. */
  private readonly clock: Clock;
  /** Every write goes through it as an operation entry (apply-entry.ts). */
  private readonly entries = new OperationLog();
  /** Releases the guard against lmdb-js's leftover rejections of a failed commit (storage-full.ts). */
  private readonly releaseFullGuard: () => void;
  /** Copies in progress (backup): the environment is closed only after them. */
  private readonly backups = new Set<Promise<void>>();
  /** The last copy asked for (settled either way): the next one starts after it. */
  private lastBackup: Promise<void> = Promise.resolve();

  constructor(options: LmdbStorageOptions) {
    this.dataDir = options.dataDir;
    this.defaultDatabase = checkName(options.defaultDatabase, 'defaultDatabase');
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
    this.env = new LmdbEnvironment(options.dataDir, { unsafeNoSync: options.unsafeNoSync });
    this.entries.full = new StorageFullState(options.log, options.dataDir);
    this.entries.space = new DiskSpaceGuard(options.dataDir, options.minFreeBytes ?? 0);
    this.releaseFullGuard = guardFullCommitLeftovers();
    this.catalog = new Catalog(this.env);
    this.transactions = new TransactionManager(this.entries);
    this.schema = new LmdbSchema(this.env, this.catalog, this.defaultDatabase);
    this.topics = new LmdbMessageLog(this.env, this.catalog, this.schema, this.defaultDatabase, this.entries, this.clock);
    if (options.metrics) addStorageMetrics(options.metrics, this.env, this.topics, this.dataDir);
    this.entries.targets = {
      env: this.env, catalog: this.catalog, schema: this.schema, log: this.topics, state: this.topics.state,
      internal: (name) => this.internalStore(name),
    };
  }

  /** Records and applies operation entries (kernel/storage/operation-entries.ts). */
  get operations(): OperationsPort { return this.entries; }

  async init(): Promise<void> {
    this.catalog.load();
    this.topics.load();
    if (!this.catalog.hasDatabase(this.defaultDatabase)) {
      const name = this.defaultDatabase;
      await this.entries.submit({ op: 'database.create', name, time: entryTime(this.clock) });
      this.log?.info(`storage: created the default database "${name}" in ${this.dataDir}`);
    }
    const rebuilt = await this.schema.upgradeIndexKeys();
    if (rebuilt > 0) this.log?.info(`storage: rebuilt ${rebuilt} index(es) written in an older key format`);
  }

  // ---- internal stores ---------------------------------------------------------------------

  internal<V>(name: string): InternalStore<V> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new EngineError('INVALID_PARAMETER', { param: 'name', reason: 'an internal store needs a name' });
    }
    return this.internalStore(name) as LmdbInternalStore<V>;
  }

  private internalStore(name: string): LmdbInternalStore<unknown> {
    let store = this.internals.get(name);
    if (!store) {
      store = new LmdbInternalStore<unknown>(name, this.env, this.env.openInternal(`x:${name}`), this.entries);
      this.internals.set(name, store);
    }
    return store;
  }

  // ---- databases, tables, indexes (schema.ts) -------------------------------------------------

  // Each write is an entry; the schema's methods apply them, checking them first (a refused call makes no entry).

  async createDatabase(name: string): Promise<void> {
    const db = checkName(name, 'database');
    if (this.catalog.hasDatabase(db)) throw new EngineError('DATABASE_EXISTS', { database: db });
    await this.entries.submit({ op: 'database.create', name: db, time: entryTime(this.clock) });
  }

  listDatabases(): string[] { return this.schema.listDatabases(); }
  hasDatabase(name: string): boolean { return this.schema.hasDatabase(name); }

  async deleteDatabase(name: string): Promise<void> {
    const db = normalizeName(name);
    if (db === this.defaultDatabase) {
      throw new EngineError('DATABASE_IN_USE', { database: db, reason: 'it is the default database' });
    }
    this.catalog.tablesOf(db);
    await this.entries.submit({ op: 'database.delete', name: db });
  }

  async createTable(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition> {
    const db = checkName(database, 'database');
    const name = checkIdentifier(table, 'table');
    this.catalog.tablesOf(db);
    if (this.catalog.findTable(db, name)) throw new EngineError('TABLE_EXISTS', { database: db, table: name });
    return this.entries.submit<TableDefinition>({ op: 'table.create', database: db, table: name, columns, time: entryTime(this.clock) });
  }

  getTable(database: string, table: string): TableDefinition { return this.schema.getTable(database, table); }
  listTables(database: string): string[] { return this.schema.listTables(database); }

  async deleteTables(database: string, tables: string[]): Promise<void> {
    checkArray(tables, 'tables');
    for (const name of tables) this.catalog.table(database, name);
    await this.entries.submit({ op: 'table.delete', database: normalizeName(database), tables: tables.map((t) => normalizeName(t)) });
  }

  async addColumns(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition> {
    this.catalog.table(database, table);
    return this.entries.submit<TableDefinition>({ op: 'columns.add', database: normalizeName(database), table: normalizeName(table), columns });
  }

  async createIndex(database: string, table: string, index: string, definition: IndexInput): Promise<IndexDefinition> {
    this.catalog.table(database, table);
    return this.entries.submit<IndexDefinition>({ op: 'index.create', database: normalizeName(database), table: normalizeName(table), index, definition });
  }

  async deleteIndexes(database: string, table: string, indexes: string[]): Promise<void> {
    this.catalog.table(database, table);
    checkArray(indexes, 'indexes');
    await this.entries.submit({ op: 'index.delete', database: normalizeName(database), table: normalizeName(table), indexes });
  }

  indexKeyLayout(table: TableDefinition, index: IndexDefinition): IndexKeyLayout { return keyLayoutOf(resolveKeySegments(table, index.fields, index.name)); }

  // ---- records -------------------------------------------------------------------------------

  private writable(database: string, table: string, options: WriteOptions | undefined): TableState {
    const ts = this.catalog.table(database, table);
    // A view over the message log is never written (an internal writer's insert appends to the log
    // instead: insertRecords); a table of a topic from before the log, only by internal writers.
    if (ts.topicId !== undefined || (ts.def.topic !== null && options?.allowIntegrationTables !== true)) {
      throw new EngineError('TABLE_READ_ONLY', { table: ts.def.name });
    }
    if (options?.transactionId !== undefined) this.transactions.assert(options.transactionId);
    return ts;
  }

  /**
   * Rows by column name, checked in full: an internal writer's rows for an integration table (its
   * topic's messages), or positional rows decoded against another version of the table.
   */
  private async insertRows(database: string, table: string, rows: Row[], options?: WriteOptions): Promise<RecordId[]> {
    const view = this.catalog.table(database, table);
    if (view.topicId !== undefined && options?.allowIntegrationTables === true && options.transactionId === undefined) {
      checkArray(rows, 'records');
      const time = canonicalTime(entryTime(this.clock));
      return this.topics.appendTo(view.def.topic!, rows.map((row) => rowToMessage(row, time)));
    }
    const ts = this.writable(database, table, options);
    checkArray(rows, 'records');
    const n = rows.length;
    const ids = new Array<RecordId | null>(n);
    const values = new Array<unknown[]>(n);
    for (let i = 0; i < n; i++) {
      const prepared = prepareInsertRow(ts, rows[i]);
      ids[i] = prepared.id;
      values[i] = prepared.values;
    }
    return this.insertPrepared(ts, ids, values, options);
  }

  async insertValues(database: string, table: string, rows: PositionalRows, options?: WriteOptions): Promise<RecordId[]> {
    if (this.catalog.table(database, table).topicId !== undefined && rows !== null && typeof rows === 'object') {
      return this.insertRows(database, table, positionalToRows(rows), options);
    }
    const ts = this.writable(database, table, options);
    if (rows === null || typeof rows !== 'object') {
      throw new EngineError('INVALID_PARAMETER', { param: 'records', reason: 'positional rows are required' });
    }
    const given = checkArray(rows.ids, 'records');
    const values = checkArray(rows.values, 'records');
    const n = given.length;
    if (values.length !== n) {
      throw new EngineError('INVALID_PARAMETER', { param: 'records', reason: `${n} ids for ${values.length} records` });
    }
    if (rows.table !== ts.def) {
      // Decoded against another version of the table (columns added meanwhile, or a new table
      // of that name): back to rows by column name and the full checks.
      return this.insertRows(database, table, positionalToRows(rows), options);
    }
    return this.insertPrepared(ts, given, values, options);
  }

  /** Rows checked for their columns (`undefined`: not supplied) as a `records.insert` entry, or into the transaction. */
  private insertPrepared(ts: TableState, ids: Array<RecordId | null>, values: unknown[][], options: WriteOptions | undefined): Promise<RecordId[]> {
    const time = entryTime(this.clock);
    if (options?.transactionId !== undefined) {
      const prepared = new Array<PreparedRow>(ids.length);
      for (let i = 0; i < ids.length; i++) prepared[i] = { id: ids[i], values: values[i] };
      return this.transactions.insert(options.transactionId, ts, prepared, time);
    }
    if (ids.length === 0) return Promise.resolve([]);
    return this.entries.submit<RecordId[]>({
      op: 'records.insert', database: ts.def.database, table: ts.def.name, columns: columnHeader(ts), ids, values, time,
    });
  }

  getRecords(database: string, table: string, ids: RecordId[], transactionId?: string): Array<readonly unknown[] | undefined> {
    const ts = this.catalog.table(database, table);
    checkArray(ids, 'ids');
    if (transactionId !== undefined && ts.topicId === undefined) {
      // The transaction's view, as rows: laid out again as stored values (not the hot path).
      const columns = ts.def.columns;
      return this.transactions.read(transactionId, ts, ids).map((row) => {
        if (row === undefined) return undefined;
        const values = new Array<unknown>(columns.length - 1);
        for (let c = 1; c < columns.length; c++) values[c - 1] = row[columns[c].name];
        return values;
      });
    }
    // A view over the message log is never written in a transaction: it reads as committed.
    if (transactionId !== undefined) this.transactions.assert(transactionId);
    const records = ts.records;
    const out = new Array<readonly unknown[] | undefined>(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      out[i] = typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 ? undefined : records.get(id);
    }
    return out;
  }

  replaceRecords(database: string, table: string, records: StoredRecord[], options?: WriteOptions): Promise<void> {
    return this.update(database, table, records, 'replace', options);
  }

  patchRecords(database: string, table: string, records: StoredRecord[], options?: WriteOptions): Promise<void> {
    return this.update(database, table, records, 'patch', options);
  }

  private async update(database: string, table: string, records: StoredRecord[], mode: 'replace' | 'patch', options?: WriteOptions): Promise<void> {
    const ts = this.writable(database, table, options);
    checkArray(records, 'records');
    const time = entryTime(this.clock);
    if (options?.transactionId !== undefined) {
      this.transactions.update(options.transactionId, ts, records, mode, time);
      return;
    }
    if (records.length === 0) return;
    await this.entries.submit({ op: mode === 'replace' ? 'records.replace' : 'records.patch', database: ts.def.database, table: ts.def.name, records, time });
  }

  async deleteRecords(database: string, table: string, ids: RecordId[], options?: WriteOptions & { mustExist?: boolean }): Promise<number> {
    const ts = this.writable(database, table, options);
    checkArray(ids, 'ids');
    const mustExist = options?.mustExist === true;
    if (options?.transactionId !== undefined) return this.transactions.delete(options.transactionId, ts, ids, mustExist);
    if (ids.length === 0) return 0;
    return this.entries.submit<number>({ op: 'records.delete', database: ts.def.database, table: ts.def.name, ids, mustExist });
  }

  // ---- reads ---------------------------------------------------------------------------------

  readRecords(database: string, table: string, options: ReadOptions): ReadSlices<StoredValues[]> {
    const { ts, plan, opts, overlay } = this.readSetup(database, table, options);
    const predicate = predicateOf(ts, opts);
    const skip = checkCount(opts.skip, 'skip', 0);
    const limit = checkCount(opts.limit, 'limit', Number.POSITIVE_INFINITY);
    return new RangeRead(ts, plan, opts.reverse === true, predicate, skip, limit, overlay);
  }

  countRecords(database: string, table: string): number {
    const ts = this.catalog.table(database, table);
    return ts.topicId !== undefined ? ts.records.count() : (ts.records.getStats() as { entryCount: number }).entryCount;
  }

  openCursor(database: string, table: string, options: ReadOptions): RecordCursor {
    const { ts, plan, opts, overlay } = this.readSetup(database, table, options);
    return new LmdbCursor(ts, plan, opts.reverse === true, predicateOf(ts, opts), checkCount(opts.skip, 'skip', 0), overlay);
  }

  /** What a read or a cursor starts from; in a transaction, its later writes are seen too while it is open. */
  private readSetup(database: string, table: string, options: ReadOptions): { ts: ReadableTable; plan: ScanPlan; opts: ReadOptions; overlay?: () => Overlay | undefined } {
    const ts = this.catalog.table(database, table);
    const opts = options ?? {};
    const transactionId = opts.transactionId;
    if (transactionId !== undefined) this.transactions.assert(transactionId);
    const plan = planScan(ts, opts.index, opts.range);
    // A view over the message log is never written in a transaction: nothing to merge.
    const overlay = transactionId === undefined || ts.topicId !== undefined ? undefined : () => {
      try {
        return this.transactions.overlayFor(transactionId, ts);
      } catch {
        return undefined;
      }
    };
    return { ts, plan, opts, overlay };
  }

  // ---- transactions --------------------------------------------------------------------------

  beginTransaction(): string {
    return this.transactions.begin();
  }

  commitTransaction(transactionId: string): Promise<void> {
    return this.transactions.commit(transactionId);
  }

  rollbackTransaction(transactionId: string): void {
    this.transactions.rollback(transactionId);
  }

  savepointTransaction(transactionId: string): TransactionSavepoint {
    return this.transactions.savepoint(transactionId);
  }

  rollbackTransactionTo(transactionId: string, savepoint: TransactionSavepoint): void {
    this.transactions.rollbackTo(transactionId, savepoint);
  }

  // ---- topics (message-log.ts) --------------------------------------------------------------

  get messageLog(): MessageLogPort { return this.topics; }

  // ---- backups and the integrity check (backup.ts, integrity-check.ts) -----------------------

  backup(folder: string, onProgress?: BackupProgress): Promise<number> {
    this.env.assertOpen();
    // One copy at a time: two into one folder would both find it empty before LMDB creates the
    // file, and both fail (each removing the other's partial copy). In turn, the second finds the
    // first's copy and is refused (12012).
    const copy = this.lastBackup.then(() => copyEnvironment(this.env.root, folder, onProgress));
    this.lastBackup = copy.then(() => undefined, () => undefined);
    // Closing the environment while LMDB copies it ends the process (a segfault): close waits.
    const running = copy.then(() => undefined, () => undefined);
    this.backups.add(running);
    void running.then(() => this.backups.delete(running));
    return copy;
  }

  checkIntegrity(): IntegrityReport {
    this.env.assertOpen();
    return checkIntegrity(this.catalog, this.topics.logReads, this.topics.topicIndex);
  }

  async close(): Promise<void> {
    if (this.env.isClosed) return;
    await Promise.all(this.backups);
    this.transactions.close();
    await this.topics.close();
    await this.env.close();
    this.releaseFullGuard();
  }
}

/** A row inserted into an integration table by an internal writer, as a message of its topic. */
function rowToMessage(row: Row, now: string): MessageInput {
  if (row === null || typeof row !== 'object') throw new EngineError('INVALID_PARAMETER', { param: 'records', reason: 'a record is an object' });
  const get = <T>(name: string, fallback: T): T => (row[name] === undefined || row[name] === null ? fallback : row[name] as unknown as T);
  return {
    createTs: get('create_ts', now),
    payload: get('source_payload', { type: 'json', value: 'null' }),
    qos: get('mqtt_qos', 0),
    retain: get('mqtt_retain', false),
    contentType: get('mqtt_content_type', null),
    correlationData: get('mqtt_correlation_data', null),
    responseTopic: get('mqtt_response_topic', null),
    expirySeconds: get('mqtt_expiry_seconds', null),
    userProperties: get('mqtt_user_properties', null),
    payloadFormat: get('mqtt_payload_format', null),
    publisher: get('mqtt_publisher', null),
  };
}

/** PositionalRows back to rows keyed by the names of the columns they were decoded against. */
function positionalToRows(rows: PositionalRows): Row[] {
  const columns = rows.table.columns;
  return rows.values.map((values, i) => {
    const row: Row = {};
    const id = rows.ids[i];
    if (id !== null && id !== undefined) row[ID_COLUMN] = id;
    for (let c = 1; c < columns.length; c++) {
      const value = values[c - 1];
      if (value !== undefined) row[columns[c].name] = value as CanonicalValue;
    }
    return row;
  });
}
