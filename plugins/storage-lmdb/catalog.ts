/**
 * The catalog: databases, tables (columns, indexes, sub-database names), and topic → table.
 *
 * Persisted in the `_catalog` sub-database, held in memory. Keys:
 * - ['db', name]               → { name, createdAt }
 * - ['table', database, name]  → PersistedTable
 * - ['topic', topic]           → LogTopic (topic, table name, topic id: message-log.ts); a topic of
 *   more than 1,024 bytes under ['topic-hash', sha256 hex] (LMDB keys hold at most 1,978 bytes)
 * - ['log-seq'], ['topic-id']  → the message log's next sequence and next topic id
 * - ['seq']                    → the last number used for a sub-database name
 * - ['key-format']             → the index-key format the index sub-databases are written in
 * - ['purge', topicId]         → a deleted topic whose messages are still being purged
 * - ['next-id', recordsDb]     → the next automatic record id of a table, written in the same
 *                                transaction as the inserts, so deleted ids are never reissued
 *
 * In-memory changes are made inside the write-transaction callback that persists them, so the
 * writers (which run one after another) always see each other's catalog changes.
 */
import { createHash } from 'node:crypto';
import { EngineError } from '../../kernel/errors';
import type { LogTopic } from '../../kernel/storage/message-log-port';
import type { IndexDefinition, TableDefinition } from '../../kernel/storage/types';
import type { CatalogDb, IndexDb, LmdbEnvironment, RecordsDb } from './environment';
import { COLUMN_NAME_PATTERN } from '../../lib/values/column-types';
import { keyLength, resolveKeySegments, type KeySegmentSpec } from './index-keys';
import type { TopicTableView } from './topic-table-view';

export const ID_COLUMN = 'id';
export const ID_INDEX = 'id_pk';

export interface IndexState {
  def: IndexDefinition;
  dbName: string;
  db: IndexDb;
  specs: KeySegmentSpec[];
  keyLength: number;
}

export interface TableState {
  def: TableDefinition;
  dbName: string;
  records: RecordsDb;
  /** Secondary indexes with their own sub-database (`id_pk` is the records sub-database itself). */
  indexes: IndexState[];
  /** Column name → position in `def.columns` (the id column is position 0). */
  columnPos: Map<string, number>;
  /** The next automatic record id. */
  nextId: number;
  /** The next id as last persisted (`['next-id', dbName]`); see saveNextId. */
  persistedNextId: number;
  dropped: boolean;
  /** An LMDB table has none; an integration table is a TopicTableView (topic-table-view.ts). */
  topicId?: undefined;
}

/** A table as the catalog finds it by name: an LMDB table, or a topic's view over the message log. */
export type AnyTable = TableState | TopicTableView;

/** How the catalog reaches the integration-table views of the message log. */
export interface TopicViews {
  table(info: LogTopic): TopicTableView;
  /** Inside a write transaction: removes the topic's messages and entry. */
  drop(ts: TopicTableView): void;
}

/** Persists `ts.nextId` when it moved past the stored value. Call inside the write transaction. */
export function saveNextId(ts: TableState, catalog: CatalogDb): void {
  if (ts.nextId > ts.persistedNextId) {
    catalog.put(['next-id', ts.dbName], ts.nextId);
    ts.persistedNextId = ts.nextId;
  }
}

export interface PersistedTable {
  definition: TableDefinition;
  recordsDb: string;
  indexDbs: Record<string, string>;
}

interface DatabaseEntry {
  name: string;
  createdAt: string;
}

export class Catalog {
  readonly databases = new Map<string, DatabaseEntry>();
  private readonly tables = new Map<string, Map<string, TableState>>();
  readonly topics = new Map<string, LogTopic>();
  /** Grows with every topic added or removed (sorted views compare it). */
  topicsVersion = 0;
  readonly topicsById = new Map<number, LogTopic>();
  /** Integration table name → topic (per database). */
  private readonly topicTables = new Map<string, Map<string, LogTopic>>();
  views: TopicViews | null = null;
  private seq = 0;
  /** The index-key format of the stored indexes; undefined in a folder written before formats were recorded. */
  keyFormat: number | undefined;
  /** Topic ids whose messages a topic delete left to purge (message-log.ts). */
  readonly purgesPending: number[] = [];
  private readonly db: CatalogDb;

  constructor(private readonly env: LmdbEnvironment) {
    this.db = env.catalog;
  }

  /** Loads everything persisted. */
  load(): void {
    for (const { key, value } of this.db.getRange({})) {
      // lmdb-js stores a one-element key (['seq']) as the element itself ('seq'): read both forms.
      const k = (Array.isArray(key) ? key : [key]) as unknown[];
      switch (k[0]) {
        case 'db': {
          const entry = value as DatabaseEntry;
          this.databases.set(entry.name, entry);
          if (!this.tables.has(entry.name)) this.tables.set(entry.name, new Map());
          break;
        }
        case 'table': {
          const persisted = value as PersistedTable;
          const state = this.materialize(persisted);
          let map = this.tables.get(persisted.definition.database);
          if (!map) this.tables.set(persisted.definition.database, map = new Map());
          map.set(persisted.definition.name, state);
          break;
        }
        case 'topic':
        case 'topic-hash': {
          const info = value as LogTopic;
          // An entry without a topic id is from before the message log (a table per topic):
          // that table stays an ordinary read-only table; the topic starts afresh in the log.
          if (typeof info.topicId === 'number') this.registerTopic(info);
          break;
        }
        case 'seq':
          this.seq = value as number;
          break;
        case 'key-format':
          this.keyFormat = value as number;
          break;
        case 'purge':
          this.purgesPending.push(k[1] as number);
          break;
        default:
          break;
      }
    }
  }

  // ---- names -------------------------------------------------------------------------------

  /** Reserves a never-used sub-database name; `persistSeq` (inside the write) records it. */
  newDbName(prefix: 'r' | 'i'): string {
    this.seq += 1;
    return `${prefix}:${this.seq}`;
  }

  persistSeq(): void {
    this.db.put(['seq'], this.seq);
  }

  /** Records the index-key format the indexes are now written in (inside the write). */
  putKeyFormat(format: number): void {
    this.db.put(['key-format'], format);
    this.keyFormat = format;
  }

  // ---- lookups -----------------------------------------------------------------------------

  /** Every table of every database. */
  allTables(): TableState[] {
    const all: TableState[] = [];
    for (const tables of this.tables.values()) all.push(...tables.values());
    return all;
  }

  hasDatabase(name: string): boolean {
    return this.databases.has(normalizeName(name));
  }

  tablesOf(database: string): Map<string, TableState> {
    const db = normalizeName(database);
    const map = this.tables.get(db);
    if (!map || !this.databases.has(db)) throw new EngineError('DATABASE_NOT_FOUND', { database });
    return map;
  }

  table(database: string, table: string): AnyTable {
    const map = this.tablesOf(database);
    const state = map.get(normalizeName(table)) ?? this.topicView(database, table);
    if (!state) throw new EngineError('TABLE_NOT_FOUND', { database: normalizeName(database), table: normalizeName(table) });
    return state;
  }

  findTable(database: string, table: string): AnyTable | undefined {
    return this.tables.get(normalizeName(database))?.get(normalizeName(table)) ?? this.topicView(database, table);
  }

  /** The names of a database's tables, integration tables included (unsorted). */
  tableNames(database: string): string[] {
    const names = [...this.tablesOf(database).keys()];
    const topics = this.topicTables.get(normalizeName(database));
    if (topics) for (const name of topics.keys()) names.push(name);
    return names;
  }

  private topicView(database: string, table: string): TopicTableView | undefined {
    const info = this.topicTables.get(normalizeName(database))?.get(normalizeName(table));
    if (!info || !this.views || !this.databases.has(info.database)) return undefined;
    return this.views.table(info);
  }

  // ---- changes (call inside a write transaction) --------------------------------------------

  /** `createdAt`: the time of the entry that creates it. */
  putDatabase(name: string, createdAt: string): void {
    const entry = { name, createdAt };
    this.db.put(['db', name], entry);
    this.databases.set(name, entry);
    if (!this.tables.has(name)) this.tables.set(name, new Map());
  }

  removeDatabase(name: string): void {
    this.db.remove(['db', name]);
    this.databases.delete(name);
    this.tables.delete(name);
  }

  /** Persists a table's definition (new or changed) and registers the state in memory. */
  putTable(state: TableState): void {
    const def = state.def;
    const indexDbs: Record<string, string> = {};
    for (const index of state.indexes) indexDbs[index.def.name] = index.dbName;
    const persisted: PersistedTable = { definition: def, recordsDb: state.dbName, indexDbs };
    this.db.put(['table', def.database, def.name], persisted);
    let map = this.tables.get(def.database);
    if (!map) this.tables.set(def.database, map = new Map());
    map.set(def.name, state);
  }

  /** Drops a table's sub-databases and catalog entry (an integration table's view goes through its topic: message-log.ts). */
  dropTable(state: AnyTable): void {
    if (state.topicId !== undefined) {
      this.views?.drop(state);
      return;
    }
    const def = state.def;
    for (const index of state.indexes) index.db.dropSync();
    state.records.dropSync();
    this.db.remove(['table', def.database, def.name]);
    this.db.remove(['next-id', state.dbName]);
    this.tables.get(def.database)?.delete(def.name);
    state.dropped = true;
  }

  putTopic(info: LogTopic): void {
    this.db.put(topicCatalogKey(info.topic), info);
    this.registerTopic(info);
  }

  private registerTopic(info: LogTopic): void {
    this.topics.set(info.topic, info);
    this.topicsVersion++;
    this.topicsById.set(info.topicId, info);
    let map = this.topicTables.get(info.database);
    if (!map) this.topicTables.set(info.database, map = new Map());
    map.set(info.table, info);
  }

  removeTopic(topic: string): void {
    const info = this.topics.get(topic);
    this.db.remove(topicCatalogKey(topic));
    this.topics.delete(topic);
    this.topicsVersion++;
    if (info) {
      this.topicsById.delete(info.topicId);
      this.topicTables.get(info.database)?.delete(info.table);
    }
  }

  // ---- building states -----------------------------------------------------------------------

  materialize(persisted: PersistedTable): TableState {
    const def = freezeDefinition(persisted.definition);
    const records = this.env.openRecords(persisted.recordsDb);
    const indexes: IndexState[] = [];
    for (const index of def.indexes) {
      if (index.automatic) continue;
      const dbName = persisted.indexDbs[index.name];
      if (!dbName) continue;
      indexes.push(this.indexState(def, index, dbName));
    }
    const persistedNextId = (this.db.get(['next-id', persisted.recordsDb]) as number | undefined) ?? 1;
    let nextId = persistedNextId;
    for (const key of records.getKeys({ reverse: true, limit: 1 })) nextId = Math.max(nextId, (key as number) + 1);
    return { def, dbName: persisted.recordsDb, records, indexes, columnPos: columnPositions(def), nextId, persistedNextId, dropped: false };
  }

  indexState(def: TableDefinition, index: IndexDefinition, dbName: string, db?: IndexDb): IndexState {
    const specs = resolveKeySegments(def, index.fields, index.name);
    return { def: index, dbName, db: db ?? this.env.openIndex(dbName), specs, keyLength: keyLength(specs) };
  }
}

export function columnPositions(def: TableDefinition): Map<string, number> {
  const map = new Map<string, number>();
  def.columns.forEach((column, i) => map.set(column.name, i));
  return map;
}

/** Deep-freezes a definition so callers of getTable cannot change the catalog by accident. */
export function freezeDefinition(def: TableDefinition): TableDefinition {
  for (const column of def.columns) Object.freeze(column);
  for (const index of def.indexes) {
    for (const field of index.fields) Object.freeze(field);
    Object.freeze(index.fields);
    Object.freeze(index);
  }
  Object.freeze(def.columns);
  Object.freeze(def.indexes);
  return Object.freeze(def);
}

/** Names of databases, tables, indexes and columns are case-insensitive, kept lower-case. */
export function normalizeName(name: string): string {
  return typeof name === 'string' ? name.toLowerCase() : String(name);
}

/**
 * Table and index names: like column names (a letter or `_`, then letters, digits or `_`), and
 * like them never `__proto__`, which a persisted name map could not hold as a key.
 */
export function checkIdentifier(name: unknown, param: string): string {
  if (typeof name !== 'string' || !COLUMN_NAME_PATTERN.test(name)) {
    throw new EngineError('INVALID_PARAMETER', {
      param, reason: 'use 1 to 64 letters, digits or "_", not starting with a digit',
    });
  }
  const lower = name.toLowerCase();
  if (lower === '__proto__') throw new EngineError('INVALID_PARAMETER', { param, reason: '"__proto__" is reserved' });
  return lower;
}

/** Validates a database name: 1 to 64 bytes, no control characters. */
export function checkName(name: unknown, param: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new EngineError('INVALID_PARAMETER', { param, reason: 'a non-empty name is required' });
  }
  if (Buffer.byteLength(name, 'utf8') > 64) {
    throw new EngineError('INVALID_PARAMETER', { param, reason: 'names are at most 64 bytes long' });
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(name)) {
    throw new EngineError('INVALID_PARAMETER', { param, reason: 'names cannot contain control characters' });
  }
  return name.toLowerCase();
}

/** Topics up to this many UTF-8 bytes are catalog keys themselves; longer ones (MQTT allows 65,500) by hash. */
const TOPIC_KEY_BYTES = 1024;

/** The catalog key of a topic: LMDB keys hold at most 1,978 bytes, topics up to 65,500. */
function topicCatalogKey(topic: string): string[] {
  if (Buffer.byteLength(topic, 'utf8') <= TOPIC_KEY_BYTES) return ['topic', topic];
  return ['topic-hash', createHash('sha256').update(topic, 'utf8').digest('hex')];
}
