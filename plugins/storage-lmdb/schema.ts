/**
 * Databases, tables and indexes on LMDB: definitions checked and built, their sub-databases
 * created or dropped, and the catalog entries written in the same commit (docs/storage.md).
 * The write methods apply operation entries (apply-entry.ts calls them; the store's own methods
 * build the entries): a `createdAt` is the entry's time. They check what they can before
 * queueing their write and throw at once (not a rejection), so a refused call makes no entry.
 */
import { EngineError } from '../../kernel/errors';
import type {
  ColumnDefinition, ColumnInput, IndexDefinition, IndexInput, IndexSegment, TableDefinition,
} from '../../kernel/storage/types';
import { normalizeColumn } from '../../lib/values/column-types';
import { resolveKeySegments } from './index-keys';
import {
  Catalog, checkIdentifier, checkName, columnPositions, freezeDefinition, ID_COLUMN, ID_INDEX, normalizeName,
  type AnyTable, type IndexState, type TableState,
} from './catalog';
import type { LmdbEnvironment } from './environment';
import { buildIndex, INTEGER_TYPES } from './records';

function invalidTable(reason: string): EngineError {
  return new EngineError('INVALID_TABLE_DEFINITION', { reason });
}

export function checkArray<T>(value: T[], param: string): T[] {
  if (!Array.isArray(value)) throw new EngineError('INVALID_PARAMETER', { param, reason: 'an array is required' });
  return value;
}

/**
 * The index-key format this build writes (plugins/storage-lmdb/index-keys.ts). Raise it whenever the
 * bytes of a key change; a data folder with an older (or no) format gets its indexes rebuilt
 * at open, since their keys would compare and sort wrongly.
 * 2: whole-value text keys with length bytes, exact JSON integers, null flags (issue 7).
 */
export const INDEX_KEY_FORMAT = 2;

export class LmdbSchema {
  constructor(
    private readonly env: LmdbEnvironment,
    private readonly catalog: Catalog,
    private readonly defaultDatabase: string,
  ) {}

  createDatabase(name: string, time: string): Promise<void> {
    const db = checkName(name, 'database');
    if (this.catalog.hasDatabase(db)) throw new EngineError('DATABASE_EXISTS', { database: db });
    return this.env.write(() => {
      if (this.catalog.hasDatabase(db)) throw new EngineError('DATABASE_EXISTS', { database: db });
      this.catalog.putDatabase(db, time);
    });
  }

  listDatabases(): string[] {
    return [...this.catalog.databases.keys()].sort();
  }

  hasDatabase(name: string): boolean {
    return this.catalog.hasDatabase(name);
  }

  deleteDatabase(name: string): Promise<void> {
    const db = normalizeName(name);
    if (db === this.defaultDatabase) {
      throw new EngineError('DATABASE_IN_USE', { database: db, reason: 'it is the default database' });
    }
    this.catalog.tablesOf(db);
    return this.env.write(() => {
      const tables = this.catalog.tablesOf(db);
      for (const ts of [...tables.values()]) this.catalog.dropTable(ts);
      this.catalog.removeDatabase(db);
    });
  }

  // tables

  createTable(database: string, table: string, columns: ColumnInput[], time: string): Promise<TableDefinition> {
    const db = checkName(database, 'database');
    const name = checkIdentifier(table, 'table');
    this.catalog.tablesOf(db);
    if (this.catalog.findTable(db, name)) throw new EngineError('TABLE_EXISTS', { database: db, table: name });
    const def = this.buildDefinition(db, name, columns, time);
    return this.createTableInternal(def, []).then((ts) => ts.def);
  }

  /** A new table's definition, created at `time` (an ISO timestamp). */
  buildDefinition(database: string, name: string, columns: ColumnInput[], time: string): TableDefinition {
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
      createdAt: time,
    };
  }

  /** Creates the sub-databases and the catalog entries of a new table in one commit. */
  createTableInternal(
    def: TableDefinition, extraIndexes: Array<{ name: string; input: IndexInput }>,
  ): Promise<TableState> {
    const indexDefs = extraIndexes.map(({ name, input }) => indexDefinition(name, input));
    for (const index of indexDefs) resolveKeySegments(def, index.fields);
    def.indexes.push(...indexDefs);
    freezeDefinition(def);
    const recordsName = this.catalog.newDbName('r');
    const records = this.env.openRecords(recordsName);
    const indexes: IndexState[] = indexDefs.map((index) => this.catalog.indexState(def, index, this.catalog.newDbName('i')));
    const ts: TableState = { def, dbName: recordsName, records, indexes, columnPos: columnPositions(def), nextId: 1, persistedNextId: 1, dropped: false };
    return this.env.write(() => {
      let error: EngineError | null = null;
      if (!this.catalog.databases.has(def.database)) error = new EngineError('DATABASE_NOT_FOUND', { database: def.database });
      else if (this.catalog.findTable(def.database, def.name)) error = new EngineError('TABLE_EXISTS', { database: def.database, table: def.name });
      if (error !== null) {
        for (const index of indexes) index.db.dropSync();
        records.dropSync();
        throw error;
      }
      this.catalog.persistSeq();
      this.catalog.putTable(ts);
      return ts;
    });
  }

  getTable(database: string, table: string): TableDefinition {
    return this.catalog.table(database, table).def;
  }

  listTables(database: string): string[] {
    return this.catalog.tableNames(database).sort();
  }

  deleteTables(database: string, tables: string[]): Promise<void> {
    checkArray(tables, 'tables');
    const names = [...new Set(tables.map((t) => normalizeName(t)))];
    for (const name of names) this.catalog.table(database, name);
    return this.env.write(() => {
      const states = names.map((name) => this.catalog.table(database, name));
      for (const ts of states) this.catalog.dropTable(ts);
    });
  }

  addColumns(database: string, table: string, columns: ColumnInput[]): Promise<TableDefinition> {
    const ts = this.catalog.table(database, table);
    if (ts.topicId !== undefined) throw invalidTable(`"${ts.def.name}" is an integration table (a view over the message log): its columns are fixed`);
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
    return this.env.write(() => {
      if (ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
      for (const column of added) {
        if (ts.columnPos.has(column.name)) throw invalidTable(`column "${column.name}" already exists`);
      }
      ts.def = freezeDefinition({ ...ts.def, columns: [...ts.def.columns, ...added] });
      ts.columnPos = columnPositions(ts.def);
      this.catalog.putTable(ts);
      return ts.def;
    });
  }

  // indexes

  createIndex(database: string, table: string, index: string, definition: IndexInput): Promise<IndexDefinition> {
    const ts = this.catalog.table(database, table);
    refuseViewIndexes(ts);
    const name = checkIdentifier(index, 'index');
    if (ts.def.indexes.some((x) => x.name === name)) throw new EngineError('INDEX_EXISTS', { index: name, table: ts.def.name });
    const def = indexDefinition(name, definition);
    resolveKeySegments(ts.def, def.fields);
    const state = this.catalog.indexState(ts.def, def, this.catalog.newDbName('i'));
    return this.env.write(() => {
      let error: EngineError | null = null;
      if (ts.dropped) error = new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
      else if (ts.def.indexes.some((x) => x.name === name)) error = new EngineError('INDEX_EXISTS', { index: name, table: ts.def.name });
      else error = buildIndex(ts, state);
      if (error !== null) {
        state.db.dropSync();
        throw error;
      }
      ts.indexes = [...ts.indexes, state];
      ts.def = freezeDefinition({ ...ts.def, indexes: [...ts.def.indexes, def] });
      this.catalog.persistSeq();
      this.catalog.putTable(ts);
      return def;
    });
  }

  deleteIndexes(database: string, table: string, indexes: string[]): Promise<void> {
    const ts = this.catalog.table(database, table);
    refuseViewIndexes(ts);
    checkArray(indexes, 'indexes');
    const names = [...new Set(indexes.map((i) => normalizeName(i)))];
    for (const name of names) {
      if (name === ID_INDEX) {
        throw new EngineError('INVALID_INDEX_DEFINITION', { reason: `the automatic index "${ID_INDEX}" cannot be deleted` });
      }
      if (!ts.indexes.some((x) => x.def.name === name)) throw new EngineError('INDEX_NOT_FOUND', { index: name, table: ts.def.name });
    }
    return this.env.write(() => {
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

  /**
   * Rebuilds every index of a folder written in an older key format, in one all-or-nothing
   * commit, and records the current format. Returns how many indexes were rebuilt. An index
   * whose stored rows no longer fit its key (e.g. a value longer than its segment size) stops
   * the open naming it: nothing is changed, and an older build can still read the folder.
   */
  async upgradeIndexKeys(): Promise<number> {
    if (this.catalog.keyFormat === INDEX_KEY_FORMAT) return 0;
    let rebuilt = 0;
    await this.env.writeAtomic(() => {
      for (const ts of this.catalog.allTables()) {
        for (const index of ts.indexes) {
          index.db.clearSync();
          const error = buildIndex(ts, index);
          if (error !== null) {
            throw new EngineError('INVALID_INDEX_DEFINITION', {
              reason: `index "${index.def.name}" of table "${ts.def.database}.${ts.def.name}" was written in an older key format and cannot be rebuilt: ${error.message}`,
            });
          }
          rebuilt++;
        }
      }
      this.catalog.putKeyFormat(INDEX_KEY_FORMAT);
    });
    return rebuilt;
  }
}

/** Integration tables are views over the message log: their indexes (`id_pk`, `create_ts_idx`) are the log's own. */
function refuseViewIndexes(ts: AnyTable): asserts ts is TableState {
  if (ts.topicId !== undefined) {
    throw new EngineError('INVALID_INDEX_DEFINITION', {
      reason: `"${ts.def.name}" is an integration table (a view over the message log): its indexes are fixed (id_pk, create_ts_idx)`,
    });
  }
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
