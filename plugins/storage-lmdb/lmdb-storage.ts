/**
 * The StoragePort on LMDB. Wires the environment, the catalog, records, reads, cursors,
 * transactions, integration tables and internal stores together (docs/storage.md).
 */
import { EngineError } from '../../kernel/errors';
import type {
  InternalStore, MessageInput, MessageReadOptions, PositionalRows, ReadOptions, RecordCursor, StoragePort,
  StoredRecord, StoredValues, TopicInfo, WriteOptions,
} from '../../kernel/storage/storage-port';
import type {
  CanonicalValue, ColumnDefinition, ColumnInput, IndexDefinition, IndexInput, IndexSegment, RecordId, Row, TableDefinition,
} from '../../kernel/storage/types';
import { normalizeColumn } from '../data/values/column-types';
import {
  Catalog, checkIdentifier, checkName, columnPositions, freezeDefinition, ID_COLUMN, ID_INDEX, normalizeName, saveNextId,
  type IndexState, type TableState,
} from './catalog';
import { LmdbEnvironment } from './environment';
import { resolveKeySegments } from '../data/index-keys';
import {
  checkTopic, messageRow, readMessages, topicTableName, TOPIC_COLUMNS, TOPIC_INDEXES,
} from './integration-tables';
import { LmdbInternalStore } from './internal-stores';
import { LmdbCursor } from './cursors';
import { checkCount, planScan, predicateOf, readRecordValues, readRecords, scanStats } from './reads';
import {
  applyDelete, applyInsert, applyInsertValues, applyUpdate, buildIndex, completeInsertValues, decodeRow, INTEGER_TYPES,
  nowTimestamp, prepareInsertRow, type PreparedRow,
} from './records';
import { TransactionManager } from './transactions';

export interface LmdbStorageOptions {
  dataDir: string;
  defaultDatabase: string;
  log?: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
}

export async function openLmdbStorage(options: LmdbStorageOptions): Promise<StoragePort> {
  const storage = new LmdbStorage(options);
  await storage.init();
  return storage;
}

function invalidTable(reason: string): EngineError {
  return new EngineError('INVALID_TABLE_DEFINITION', { reason });
}

function checkArray<T>(value: T[], param: string): T[] {
  if (!Array.isArray(value)) throw new EngineError('INVALID_PARAMETER', { param, reason: 'an array is required' });
  return value;
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
  private readonly pendingTopics = new Map<string, Promise<TopicInfo>>();
  private readonly log: LmdbStorageOptions['log'];

  constructor(options: LmdbStorageOptions) {
    this.dataDir = options.dataDir;
    this.defaultDatabase = checkName(options.defaultDatabase, 'defaultDatabase');
    this.log = options.log;
    this.env = new LmdbEnvironment(options.dataDir);
    this.catalog = new Catalog(this.env);
    this.transactions = new TransactionManager(this.env);
  }

  async init(): Promise<void> {
    this.catalog.load();
    if (!this.catalog.hasDatabase(this.defaultDatabase)) {
      const name = this.defaultDatabase;
      await this.env.write(() => this.catalog.putDatabase(name));
      this.log?.info(`storage: created the default database "${name}" in ${this.dataDir}`);
    }
  }

  // ---- internal stores ---------------------------------------------------------------------

  internal<V>(name: string): InternalStore<V> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new EngineError('INVALID_PARAMETER', { param: 'name', reason: 'an internal store needs a name' });
    }
    let store = this.internals.get(name);
    if (!store) {
      store = new LmdbInternalStore<unknown>(this.env.openInternal(`x:${name}`));
      this.internals.set(name, store);
    }
    return store as LmdbInternalStore<V>;
  }

  // ---- databases -----------------------------------------------------------------------------

  async createDatabase(name: string): Promise<void> {
    const db = checkName(name, 'database');
    if (this.catalog.hasDatabase(db)) throw new EngineError('DATABASE_EXISTS', { database: db });
    await this.env.write(() => {
      if (this.catalog.hasDatabase(db)) throw new EngineError('DATABASE_EXISTS', { database: db });
      this.catalog.putDatabase(db);
    });
  }

  listDatabases(): string[] {
    return [...this.catalog.databases.keys()].sort();
  }

  hasDatabase(name: string): boolean {
    return this.catalog.hasDatabase(name);
  }

  async deleteDatabase(name: string): Promise<void> {
    const db = normalizeName(name);
    if (db === this.defaultDatabase) {
      throw new EngineError('DATABASE_IN_USE', { database: db, reason: 'it is the default database' });
    }
    this.catalog.tablesOf(db);
    await this.env.write(() => {
      const tables = this.catalog.tablesOf(db);
      for (const ts of [...tables.values()]) this.catalog.dropTable(ts);
      this.catalog.removeDatabase(db);
    });
  }

  // ---- tables --------------------------------------------------------------------------------

  async createTable(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition> {
    const db = checkName(database, 'database');
    const name = checkIdentifier(table, 'table');
    const tables = this.catalog.tablesOf(db);
    if (tables.has(name)) throw new EngineError('TABLE_EXISTS', { database: db, table: name });
    const def = this.buildDefinition(db, name, columns);
    const ts = await this.createTableInternal(def, [], null);
    return ts.def;
  }

  private buildDefinition(database: string, name: string, columns: ColumnInput[]): TableDefinition {
    if (!Array.isArray(columns)) throw invalidTable('the columns must be an array');
    const normalized = columns.map((column, i) => normalizeColumn(column, i));
    const seen = new Set<string>();
    let idDeclared = false;
    const rest: ColumnDefinition[] = [];
    for (const column of normalized) {
      if (seen.has(column.name)) throw invalidTable(`column "${column.name}" is declared twice`);
      seen.add(column.name);
      if (column.name === ID_COLUMN) {
        if (!INTEGER_TYPES.has(column.type)) throw invalidTable('the record-ID column "id" must have an integer type');
        idDeclared = true;
      } else {
        rest.push(column);
      }
    }
    return {
      database,
      name,
      columns: [idColumn(), ...rest],
      idDeclared,
      indexes: [{ name: ID_INDEX, unique: true, fields: [{ name: ID_COLUMN, ascending: true }], automatic: true }],
      topic: null,
      createdAt: new Date().toISOString(),
    };
  }

  /** Creates the sub-databases and the catalog entries of a new table in one commit. */
  private async createTableInternal(
    def: TableDefinition, extraIndexes: Array<{ name: string; input: IndexInput }>, topic: TopicInfo | null,
  ): Promise<TableState> {
    const indexDefs = extraIndexes.map(({ name, input }) => indexDefinition(name, input));
    for (const index of indexDefs) resolveKeySegments(def, index.fields);
    def.indexes.push(...indexDefs);
    if (topic !== null) def.topic = topic.topic;
    freezeDefinition(def);
    const recordsName = this.catalog.newDbName('r');
    const records = this.env.openRecords(recordsName);
    const indexes: IndexState[] = indexDefs.map((index) => this.catalog.indexState(def, index, this.catalog.newDbName('i')));
    const ts: TableState = { def, dbName: recordsName, records, indexes, columnPos: columnPositions(def), nextId: 1, persistedNextId: 1, dropped: false };
    await this.env.write(() => {
      let error: EngineError | null = null;
      if (!this.catalog.databases.has(def.database)) error = new EngineError('DATABASE_NOT_FOUND', { database: def.database });
      else if (this.catalog.findTable(def.database, def.name)) error = new EngineError('TABLE_EXISTS', { database: def.database, table: def.name });
      else if (topic !== null && this.catalog.topics.has(topic.topic)) error = new EngineError('INVALID_TOPIC', { topic: topic.topic, reason: 'the topic already has a table' });
      if (error !== null) {
        for (const index of indexes) index.db.dropSync();
        records.dropSync();
        throw error;
      }
      this.catalog.persistSeq();
      this.catalog.putTable(ts);
      if (topic !== null) this.catalog.putTopic(topic);
    });
    return ts;
  }

  getTable(database: string, table: string): TableDefinition {
    return this.catalog.table(database, table).def;
  }

  listTables(database: string): string[] {
    return [...this.catalog.tablesOf(database).keys()].sort();
  }

  async deleteTables(database: string, tables: string[]): Promise<void> {
    checkArray(tables, 'tables');
    const names = [...new Set(tables.map((t) => normalizeName(t)))];
    for (const name of names) this.catalog.table(database, name);
    await this.env.write(() => {
      const states = names.map((name) => this.catalog.table(database, name));
      for (const ts of states) this.catalog.dropTable(ts);
    });
  }

  async addColumns(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition> {
    const ts = this.catalog.table(database, table);
    if (!Array.isArray(columns) || columns.length === 0) throw invalidTable('at least one column is required');
    const offset = ts.def.columns.length;
    const added = columns.map((column, i) => normalizeColumn(column, offset + i));
    const names = new Set(ts.def.columns.map((c) => c.name));
    for (const column of added) {
      if (names.has(column.name)) throw invalidTable(`column "${column.name}" already exists`);
      names.add(column.name);
      if (!column.nullable && (column.defaultValue === null || column.defaultValue === undefined)) {
        throw invalidTable(`the new column "${column.name}" is not nullable and has no default value`);
      }
    }
    await this.env.write(() => {
      if (ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
      for (const column of added) {
        if (ts.columnPos.has(column.name)) throw invalidTable(`column "${column.name}" already exists`);
      }
      ts.def = freezeDefinition({ ...ts.def, columns: [...ts.def.columns, ...added] });
      ts.columnPos = columnPositions(ts.def);
      this.catalog.putTable(ts);
    });
    return ts.def;
  }

  // ---- indexes -------------------------------------------------------------------------------

  async createIndex(database: string, table: string, index: string, definition: IndexInput): Promise<IndexDefinition> {
    const ts = this.catalog.table(database, table);
    const name = checkIdentifier(index, 'index');
    if (ts.def.indexes.some((x) => x.name === name)) throw new EngineError('INDEX_EXISTS', { index: name, table: ts.def.name });
    const def = indexDefinition(name, definition);
    resolveKeySegments(ts.def, def.fields);
    const state = this.catalog.indexState(ts.def, def, this.catalog.newDbName('i'));
    await this.env.write(() => {
      let error: EngineError | null = null;
      if (ts.dropped) error = new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
      else if (ts.def.indexes.some((x) => x.name === name)) error = new EngineError('INDEX_EXISTS', { index: name, table: ts.def.name });
      else if (!buildIndex(ts, state)) error = new EngineError('DUPLICATE_KEY', { index: name, table: ts.def.name });
      if (error !== null) {
        state.db.dropSync();
        throw error;
      }
      ts.indexes = [...ts.indexes, state];
      ts.def = freezeDefinition({ ...ts.def, indexes: [...ts.def.indexes, def] });
      this.catalog.persistSeq();
      this.catalog.putTable(ts);
    });
    return def;
  }

  async deleteIndexes(database: string, table: string, indexes: string[]): Promise<void> {
    const ts = this.catalog.table(database, table);
    checkArray(indexes, 'indexes');
    const names = [...new Set(indexes.map((i) => normalizeName(i)))];
    for (const name of names) {
      if (name === ID_INDEX) {
        throw new EngineError('INVALID_INDEX_DEFINITION', { reason: `the automatic index "${ID_INDEX}" cannot be deleted` });
      }
      if (!ts.indexes.some((x) => x.def.name === name)) throw new EngineError('INDEX_NOT_FOUND', { index: name, table: ts.def.name });
    }
    await this.env.write(() => {
      if (ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
      const doomed = ts.indexes.filter((x) => names.includes(x.def.name));
      if (doomed.length !== names.length) {
        const missing = names.find((n) => !doomed.some((x) => x.def.name === n));
        throw new EngineError('INDEX_NOT_FOUND', { index: missing, table: ts.def.name });
      }
      for (const state of doomed) state.db.dropSync();
      ts.indexes = ts.indexes.filter((x) => !doomed.includes(x));
      ts.def = freezeDefinition({ ...ts.def, indexes: ts.def.indexes.filter((x) => !names.includes(x.name)) });
      this.catalog.putTable(ts);
    });
  }

  // ---- records -------------------------------------------------------------------------------

  private writable(database: string, table: string, options: WriteOptions | undefined): TableState {
    const ts = this.catalog.table(database, table);
    if (ts.def.topic !== null && options?.allowIntegrationTables !== true) {
      throw new EngineError('TABLE_READ_ONLY', { table: ts.def.name });
    }
    if (options?.transactionId !== undefined) this.transactions.assert(options.transactionId);
    return ts;
  }

  async insertRecords(database: string, table: string, rows: Row[], options?: WriteOptions): Promise<RecordId[]> {
    const ts = this.writable(database, table, options);
    checkArray(rows, 'records');
    const now = nowTimestamp();
    const n = rows.length;
    const prepared = new Array<PreparedRow>(n);
    for (let i = 0; i < n; i++) prepared[i] = prepareInsertRow(ts, rows[i], now);
    if (options?.transactionId !== undefined) return this.transactions.insert(options.transactionId, ts, prepared);
    if (n === 0) return [];
    return this.env.write(() => this.persistingNextId(ts, applyInsert(ts, prepared)));
  }

  async insertValues(database: string, table: string, rows: PositionalRows, options?: WriteOptions): Promise<RecordId[]> {
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
      return this.insertRecords(database, table, positionalToRows(rows), options);
    }
    const now = nowTimestamp();
    for (let i = 0; i < n; i++) completeInsertValues(ts, given[i], values[i], now);
    if (options?.transactionId !== undefined) {
      const prepared = new Array<PreparedRow>(n);
      for (let i = 0; i < n; i++) prepared[i] = { id: given[i], values: values[i] };
      return this.transactions.insert(options.transactionId, ts, prepared);
    }
    if (n === 0) return [];
    return this.env.write(() => this.persistingNextId(ts, applyInsertValues(ts, given, values)));
  }

  getRecords(database: string, table: string, ids: RecordId[], transactionId?: string): Array<Row | undefined> {
    const ts = this.catalog.table(database, table);
    checkArray(ids, 'ids');
    if (transactionId !== undefined) return this.transactions.read(transactionId, ts, ids);
    const records = ts.records;
    return ids.map((id) => {
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return undefined;
      const values = records.get(id);
      return values === undefined ? undefined : decodeRow(ts, id, values);
    });
  }

  getRecordValues(database: string, table: string, ids: RecordId[], transactionId?: string): Array<readonly unknown[] | undefined> {
    const ts = this.catalog.table(database, table);
    checkArray(ids, 'ids');
    if (transactionId !== undefined) {
      const columns = ts.def.columns;
      return this.transactions.read(transactionId, ts, ids).map((row) => {
        if (row === undefined) return undefined;
        const values = new Array<unknown>(columns.length - 1);
        for (let c = 1; c < columns.length; c++) values[c - 1] = row[columns[c].name];
        return values;
      });
    }
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
    const now = nowTimestamp();
    if (options?.transactionId !== undefined) {
      this.transactions.update(options.transactionId, ts, records, mode, now);
      return;
    }
    if (records.length === 0) return;
    await this.env.write(() => applyUpdate(ts, records, mode, now));
  }

  async deleteRecords(database: string, table: string, ids: RecordId[], options?: WriteOptions & { mustExist?: boolean }): Promise<number> {
    const ts = this.writable(database, table, options);
    checkArray(ids, 'ids');
    const mustExist = options?.mustExist === true;
    if (options?.transactionId !== undefined) return this.transactions.delete(options.transactionId, ts, ids, mustExist);
    if (ids.length === 0) return 0;
    return this.env.write(() => applyDelete(ts, ids, mustExist));
  }

  // ---- reads ---------------------------------------------------------------------------------

  readRecords(database: string, table: string, options: ReadOptions): StoredRecord[] {
    const ts = this.catalog.table(database, table);
    const overlay = options?.transactionId !== undefined ? this.transactions.overlayFor(options.transactionId, ts) : undefined;
    return readRecords(ts, options ?? {}, overlay);
  }

  /** Inside an insert's write transaction: persists the table's next id with the rows. */
  private persistingNextId(ts: TableState, ids: RecordId[]): RecordId[] {
    saveNextId(ts, this.env.catalog);
    return ids;
  }

  readRecordValues(database: string, table: string, options: ReadOptions): StoredValues[] {
    const ts = this.catalog.table(database, table);
    const overlay = options?.transactionId !== undefined ? this.transactions.overlayFor(options.transactionId, ts) : undefined;
    if (overlay !== undefined) {
      // The transaction's own writes merged in: rows, laid out as stored values.
      const columns = ts.def.columns;
      return readRecords(ts, options, overlay).map(({ id, row }) => {
        const values = new Array<unknown>(columns.length - 1);
        for (let i = 1; i < columns.length; i++) values[i - 1] = row[columns[i].name];
        return { id, values };
      });
    }
    return readRecordValues(ts, options ?? {});
  }

  countRecords(database: string, table: string): number {
    const ts = this.catalog.table(database, table);
    return (ts.records.getStats() as { entryCount: number }).entryCount;
  }

  openCursor(database: string, table: string, options: ReadOptions): RecordCursor {
    const ts = this.catalog.table(database, table);
    const opts = options ?? {};
    const transactionId = opts.transactionId;
    if (transactionId !== undefined) this.transactions.assert(transactionId);
    const plan = planScan(ts, opts.index, opts.range);
    // A cursor opened in a transaction sees its later writes too, while the transaction is open.
    const overlay = transactionId === undefined ? undefined : () => {
      try {
        return this.transactions.overlayFor(transactionId, ts);
      } catch {
        return undefined;
      }
    };
    return new LmdbCursor(ts, plan, opts.reverse === true, predicateOf(ts, opts), checkCount(opts.skip, 'skip', 0), overlay);
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

  // ---- topics --------------------------------------------------------------------------------

  ensureTopic(topic: string): Promise<TopicInfo> {
    const existing = this.catalog.topics.get(topic);
    if (existing) return Promise.resolve(existing);
    checkTopic(topic);
    let pending = this.pendingTopics.get(topic);
    if (!pending) {
      pending = this.createTopic(topic).finally(() => this.pendingTopics.delete(topic));
      this.pendingTopics.set(topic, pending);
    }
    return pending;
  }

  private async createTopic(topic: string): Promise<TopicInfo> {
    const database = this.defaultDatabase;
    for (let attempt = 0; ; attempt++) {
      const found = this.catalog.topics.get(topic);
      if (found) return found;
      const table = topicTableName(topic, (name) => this.catalog.findTable(database, name) !== undefined);
      const def = this.buildDefinition(database, table, TOPIC_COLUMNS);
      const info: TopicInfo = { topic, database, table, createdAt: def.createdAt };
      try {
        await this.createTableInternal(def, TOPIC_INDEXES, info);
        return info;
      } catch (error) {
        // a table of that name appeared meanwhile: pick another name
        if (attempt < 3 && error instanceof EngineError && error.id === 'TABLE_EXISTS') continue;
        throw error;
      }
    }
  }

  getTopic(topic: string): TopicInfo | undefined {
    return this.catalog.topics.get(topic);
  }

  listTopics(): TopicInfo[] {
    return [...this.catalog.topics.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  }

  async deleteTopic(topic: string): Promise<void> {
    if (!this.catalog.topics.has(topic)) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
    await this.env.write(() => {
      const info = this.catalog.topics.get(topic);
      if (!info) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
      const ts = this.catalog.findTable(info.database, info.table);
      if (ts && ts.def.topic === topic) this.catalog.dropTable(ts);
      else this.catalog.removeTopic(topic);
    });
  }

  private topicTable(info: TopicInfo): TableState {
    return this.catalog.table(info.database, info.table);
  }

  async appendMessages(topic: string, messages: MessageInput[]): Promise<RecordId[]> {
    checkArray(messages, 'messages');
    const info = this.catalog.topics.get(topic) ?? await this.ensureTopic(topic);
    const ts = this.topicTable(info);
    const n = messages.length;
    if (n === 0) return [];
    const prepared = new Array<PreparedRow>(n);
    for (let i = 0; i < n; i++) prepared[i] = messageRow(ts, messages[i]);
    return this.env.write(() => this.persistingNextId(ts, applyInsert(ts, prepared)));
  }

  readMessages(topic: string, options: MessageReadOptions): StoredRecord[] {
    const info = this.catalog.topics.get(topic);
    if (!info) return [];
    return readMessages(this.topicTable(info), options);
  }

  async close(): Promise<void> {
    if (this.env.isClosed) return;
    this.transactions.close();
    await Promise.allSettled([...this.pendingTopics.values()]);
    await this.env.close();
  }
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

function idColumn(): ColumnDefinition {
  const base = normalizeColumn({ name: ID_COLUMN, type: 'bigint', nullable: false, primaryKey: 1, autoValue: 'incrementOnInsert' }, 0);
  return { ...base, name: ID_COLUMN, type: 'bigint', nullable: false, primaryKey: 1, defaultValue: null, autoValue: 'incrementOnInsert' };
}

function indexDefinition(name: string, input: IndexInput): IndexDefinition {
  if (!input || typeof input !== 'object' || !Array.isArray(input.fields) || input.fields.length === 0) {
    throw new EngineError('INVALID_INDEX_DEFINITION', { reason: 'an index needs at least one field' });
  }
  const fields: IndexSegment[] = input.fields.map((field) => {
    if (!field || typeof field.name !== 'string') {
      throw new EngineError('INVALID_INDEX_DEFINITION', { reason: 'every field needs a name' });
    }
    const segment: IndexSegment = { name: field.name.toLowerCase(), ascending: field.ascending !== false };
    if (field.key !== undefined && field.key !== null) segment.key = field.key;
    if (field.type !== undefined && field.type !== null) segment.type = field.type;
    if (field.size !== undefined && field.size !== null) segment.size = field.size;
    return segment;
  });
  return { name, unique: input.unique === true, fields, automatic: false };
}
