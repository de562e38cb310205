/**
 * Runs SQL jobs in one SQLite (WebAssembly) instance: one connection per (database, owner) with
 * the engine's tables as virtual tables in a schema named after the owner (so `admin.orders` and
 * `orders` both resolve), and the catalog tables beside them. One runner per thread (the state
 * is this module's): each SQL worker thread has one (sql-worker.ts), and the main thread has one
 * for short reads in bounded slices (main-slice.ts). Virtual tables reach the engine's tables
 * through the runner's transport: a blocking call to the main thread in a worker, a direct call
 * on the main thread.
 */
import { performance } from 'node:perf_hooks';
import type { TableDefinition } from '../../kernel/storage/types';
import type { Sqlite3 } from './sqlite-module';
import { CATALOG_TABLES, catalogModule, engineModule, HostError, hostErrors, replacedThisStatement, unwrap, type CatalogName, type TableHost } from './engine-tables';
import type { CatalogUpdate, JobError, ResultColumn, SqlJob, SqlValue, StatementOutcome, TableReply, TableRequest, Touched } from './sql-protocol';
import { rewriteTopSkip } from './top-skip';
import { encodeRowValues, recordsOf, resultFields } from './result-rows';
import { fastValues, type FastValues } from './fast-values';
import { identifierName, leadingWords, significant, tokenize } from './sql-tokens';
import { columnTypeOf, fromSql } from './sql-values';

type DB = InstanceType<Sqlite3['oo1']['DB']>;

type Statement = ReturnType<DB['prepare']>;

interface Connection {
  db: DB;
  database: string;
  owner: string;
  defs: Map<string, TableDefinition>;
  /** Prepared SELECTs by text, with the tables they touch (the authorizer runs only at prepare). */
  statements: Map<string, CachedStatement>;
}

interface CachedStatement {
  stmt: Statement;
  touched: typeof touched;
  /** Its result columns, when none is typed by its first value (they are the same every run then). */
  columns?: ResultColumn[];
}

/** Prepared statements kept per connection (the most recently used). */
const STATEMENT_CACHE = 64;

function forgetStatements(conn: Connection): void {
  for (const { stmt } of conn.statements.values()) stmt.finalize();
  conn.statements.clear();
}

// SQLite authorizer action codes
const SQLITE_CREATE_INDEX = 1;
const SQLITE_CREATE_TABLE = 2;
const SQLITE_DELETE = 9;
const SQLITE_INSERT = 18;
const SQLITE_READ = 20;
const SQLITE_UPDATE = 23;

const SQLITE_DENY = 1;
/** Authorizer actions refused in clients' statements (sqlite3.h action codes), with what they are. */
const REFUSED_ACTIONS = new Map<number, string>([
  [1, 'CREATE INDEX on a SQLite table'], [2, 'CREATE TABLE in SQLite'], [3, 'CREATE TEMP INDEX'], [4, 'CREATE TEMP TABLE'],
  [5, 'CREATE TEMP TRIGGER'], [6, 'CREATE TEMP VIEW'], [7, 'CREATE TRIGGER'], [8, 'CREATE VIEW'],
  [12, 'DROP TEMP INDEX'], [13, 'DROP TEMP TABLE'], [14, 'DROP TEMP TRIGGER'], [15, 'DROP TEMP VIEW'],
  [16, 'DROP TRIGGER'], [17, 'DROP VIEW'], [19, 'PRAGMA'], [22, 'transaction control (the call is one transaction)'],
  [24, 'ATTACH'], [25, 'DETACH'], [26, 'ALTER TABLE'], [27, 'REINDEX'], [28, 'ANALYZE'], [29, 'CREATE VIRTUAL TABLE'],
  [32, 'SAVEPOINT'],
]);
/** True while a client's statement is prepared (the authorizer refuses REFUSED_ACTIONS then). */
let preparingClientSql = false;
/** What the authorizer last refused, for the error message. */
let refused: string | undefined;

/** How the virtual tables' requests reach the engine's tables. */
export interface Transport {
  call(request: TableRequest): TableReply;
  tell(request: TableRequest): void;
}

let sqlite3: Sqlite3;
let fast: FastValues;
let caller: Transport;
/** VM instructions between two checks of the deadline (SQLite's progress handler). */
let progressEvery = 10_000;

/** SQLite's limits (sqlite3_limit id → value) set on this thread's connections; none: SQLite's own. */
let connectionLimits: ReadonlyArray<readonly [number, number]> = [];

/**
 * Sets the runner up in this thread; `checkEvery`: VM instructions between deadline checks;
 * `limits`: sqlite3_limit values for this thread's connections (beyond one a statement fails,
 * e.g. "string or blob too big").
 */
export function startRunner(loaded: Sqlite3, transport: Transport, checkEvery = 10_000, limits: ReadonlyArray<readonly [number, number]> = []): void {
  sqlite3 = loaded;
  fast = fastValues(loaded);
  caller = transport;
  progressEvery = checkEvery;
  connectionLimits = limits;
}
const connections = new Map<string, Connection>();
let job: SqlJob | undefined;
let connection: Connection | undefined;
let deadline = Infinity;
/** Progress-handler calls left to the job (a slice's budget of VM instructions; Infinity on a worker). */
let checksLeft = Infinity;
/** The last job was stopped because it used its checks (not by its deadline). */
export const budget = { exhausted: false };
/** Tables the statement being prepared reads and writes (from SQLite's authorizer). */
let touched: { reads: Set<string>; writes: Map<string, string> } = { reads: new Set(), writes: new Map() };

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The statement's tables, not yet authorized: they ride on the statement's first request to the
 * main thread (which authorizes them before it answers), or go alone when the statement made
 * none. No row of an engine table reaches the statement before that first answer.
 */
let unauthorized: Touched | undefined;

/**
 * A statement of runSqlStatements has a savepoint: its first write asks the main thread to mark
 * the transaction first, and a failing statement that wrote undoes its own writes back to that
 * mark (the others' stay; `atEnd` then decides).
 */
const statementWrites = { pending: false, wrote: false };
const WRITE_OPS: ReadonlySet<string> = new Set(['insert', 'update', 'delete']);

const host: TableHost = {
  definition: (table) => connection?.defs.get(table),
  call: (request) => {
    const authorize = unauthorized;
    unauthorized = undefined;
    const savepoint = statementWrites.pending && WRITE_OPS.has(request.op);
    if (savepoint) {
      statementWrites.pending = false;
      statementWrites.wrote = true;
    }
    return caller.call({ ...request, jobId: job!.id, ...(authorize ? { authorize } : {}), ...(savepoint ? { savepoint: true } : {}) } as never);
  },
  tell: (request) => caller.tell({ ...request, jobId: job!.id } as never),
  syncing: false,
  dropped: (table) => { connection?.defs.delete(table); },
  catalogRows: (name) => catalogRows(name),
};

function catalogRows(name: CatalogName): SqlValue[][] {
  const readable = new Set(unwrap(host.call({ op: 'readable' }) as TableReply) as string[]);
  const owner = connection!.owner;
  const rows: SqlValue[][] = [];
  let tableId = 0;
  for (const def of [...connection!.defs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    // Numbered among the readable ones only: a gap would tell that a hidden table is there.
    if (!readable.has(def.name)) continue;
    tableId++;
    if (name === 'systables') rows.push([def.name, owner, 'T', tableId, owner, def.indexes.some((index) => index.unique) ? 'y' : 'n', def.topic]);
    else if (name === 'syscolumns') {
      def.columns.forEach((column, i) => rows.push([def.name, owner, column.name, i, column.type, column.length, column.scale, column.nullable ? 'Y' : 'N', column.defaultValue === null ? null : JSON.stringify(column.defaultValue)]));
    } else {
      for (const index of def.indexes) {
        index.fields.forEach((field, i) => rows.push([def.name, owner, index.name, owner, field.name, i, field.ascending ? 'A' : 'D', index.unique ? 'U' : 'D']));
      }
    }
  }
  return rows;
}

function connectionFor(database: string, owner: string): Connection {
  const key = `${database}\u0000${owner}`;
  let found = connections.get(key);
  if (found) return found;
  const db = new sqlite3.oo1.DB(':memory:');
  const { capi } = sqlite3;
  for (const [id, value] of connectionLimits) capi.sqlite3_limit(db.pointer!, id as Parameters<typeof capi.sqlite3_limit>[1], value);
  db.exec(`ATTACH ':memory:' AS ${quote(owner)}`);
  capi.sqlite3_create_module(db.pointer!, 'engine', engineModule(sqlite3, host, fast) as never, 0);
  capi.sqlite3_create_module(db.pointer!, 'engine_catalog', catalogModule(sqlite3, host) as never, 0);
  for (const name of CATALOG_TABLES) db.exec(`CREATE VIRTUAL TABLE ${quote(owner)}.${name} USING engine_catalog`);
  capi.sqlite3_progress_handler(db.pointer!, progressEvery, () => {
    if (--checksLeft < 0) {
      budget.exhausted = true;
      return 1;
    }
    return performance.now() > deadline ? 1 : 0;
  }, 0);
  capi.sqlite3_set_authorizer(db.pointer!, (_arg: number, action: number, a1: string | 0, a2: string | 0) => {
    // A client's statement may not change the connection itself, which the worker shares between
    // callers: no views, triggers, temporary tables, ATTACH, PRAGMA or transaction control.
    if (preparingClientSql && REFUSED_ACTIONS.has(action)) {
      refused = REFUSED_ACTIONS.get(action);
      return SQLITE_DENY;
    }
    const table = typeof a1 === 'string' ? a1.toLowerCase() : '';
    if (table === '' || table.startsWith('sqlite_') || (CATALOG_TABLES as string[]).includes(table)) return 0;
    if (action === SQLITE_READ) touched.reads.add(table);
    else if (action === SQLITE_INSERT) touched.writes.set(`${table} insert`, table);
    else if (action === SQLITE_UPDATE && a2 !== 0) touched.writes.set(`${table} update`, table);
    else if (action === SQLITE_DELETE) touched.writes.set(`${table} delete`, table);
    return 0;
  }, 0);
  found = { db, database, owner, defs: new Map(), statements: new Map() };
  connections.set(key, found);
  return found;
}

/** Makes a virtual table match its definition (created, or dropped and created again). */
function defineVtab(conn: Connection, def: TableDefinition): void {
  forgetStatements(conn);
  host.syncing = true;
  try {
    if (conn.defs.has(def.name)) conn.db.exec(`DROP TABLE IF EXISTS ${quote(conn.owner)}.${quote(def.name)}`);
    conn.defs.set(def.name, def);
    conn.db.exec(`CREATE VIRTUAL TABLE ${quote(conn.owner)}.${quote(def.name)} USING engine`);
  } finally {
    host.syncing = false;
  }
}

function applyCatalog(conn: Connection, update: CatalogUpdate): void {
  for (const name of update.removed) {
    if (!conn.defs.has(name)) continue;
    forgetStatements(conn);
    host.syncing = true;
    try {
      conn.db.exec(`DROP TABLE IF EXISTS ${quote(conn.owner)}.${quote(name)}`);
    } finally {
      host.syncing = false;
    }
    conn.defs.delete(name);
  }
  for (const def of update.changed) defineVtab(conn, def);
}

// ------------------------------------------------------------------------------------- errors

function sqliteError(conn: Connection, error: unknown): JobError {
  if (hostErrors.last) {
    const hostError = hostErrors.last.error;
    hostErrors.last = undefined;
    return hostError;
  }
  if (error instanceof HostError) return error.error;
  const { capi } = sqlite3;
  const code = (error as { resultCode?: number }).resultCode;
  const message = conn.db.pointer ? capi.sqlite3_errmsg(conn.db.pointer) : String((error as Error).message);
  if (code === capi.SQLITE_INTERRUPT || message === 'interrupted') return { id: 'SQL_TIMEOUT', details: { ms: job!.timeoutMs } };
  if (message === 'not authorized' && refused !== undefined) return { id: 'SQL_ERROR', details: { reason: `${refused} is not supported` } };
  const table = /^no such table: (?:[^.]+\.)?(.+)$/.exec(message);
  if (table) return { id: 'TABLE_NOT_FOUND', details: { table: table[1], database: conn.database } };
  if (/syntax error|incomplete input|unrecognized token/.test(message)) {
    const offset = capi.sqlite3_error_offset(conn.db.pointer!);
    return { id: 'SQL_SYNTAX_ERROR', details: { position: offset >= 0 ? offset : 'unknown', reason: message } };
  }
  return { id: 'SQL_ERROR', details: { reason: message } };
}

// ------------------------------------------------------------------------------------- statements

function bindParams(stmt: ReturnType<DB['prepare']>, params: unknown[]): void {
  const { capi } = sqlite3;
  const toBindable = (value: unknown): SqlValue => {
    if (value === undefined || value === null) return null;
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (typeof value === 'string') {
      // SQLite's UTF-8 would store a lone surrogate as U+FFFD: refused, as the store refuses it (4031).
      if (!value.isWellFormed()) throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sqlParams', reason: 'a text value holds an unpaired surrogate (not valid Unicode)' } });
      return value;
    }
    if (typeof value === 'number' || typeof value === 'bigint') return value;
    return JSON.stringify(value);
  };
  const count = stmt.parameterCount;
  if (count === 0 && params.length === 0) return;
  // Which parameters got a value: SQLite would run one without as NULL, so a client that does not
  // send its values (the SQLAlchemy dialect sends none to runSqlStatements) would store rows of NULLs.
  const bound = new Uint8Array(count + 1);
  let position = 0;
  for (const param of params) {
    if (param !== null && typeof param === 'object' && !Array.isArray(param) && typeof (param as { name?: unknown }).name === 'string') {
      const { name, value } = param as { name: string; value: unknown };
      const candidates = /^[:@$?]/.test(name) ? [name] : [`:${name}`, `@${name}`, `$${name}`];
      const index = candidates.map((candidate) => capi.sqlite3_bind_parameter_index(stmt.pointer!, candidate)).find((i) => i > 0);
      // A name the statement does not have fills its next `?` (clients name positional values p1, p2 …).
      if (index === undefined && position < count && sqlite3.capi.sqlite3_bind_parameter_name(stmt.pointer!, position + 1) === null) {
        position++;
        stmt.bind(position, toBindable(value) as never);
        bound[position] = 1;
        continue;
      }
      if (index === undefined) throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sqlParams', reason: `the statement has no parameter named "${name}"` } });
      stmt.bind(index, toBindable(value) as never);
      bound[index] = 1;
    } else {
      position++;
      if (position > count) throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sqlParams', reason: `the statement has ${count} parameters` } });
      stmt.bind(position, toBindable(param) as never);
      bound[position] = 1;
    }
  }
  for (let index = 1; index <= count; index++) {
    if (bound[index] === 1) continue;
    const name = capi.sqlite3_bind_parameter_name(stmt.pointer!, index);
    throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sqlParams', reason: `the statement has ${count} parameters and ${params.length} values were given: ${name ? `"${name}"` : `parameter ${index}`} has none` } });
  }
}

function inferredType(value: SqlValue): string {
  if (typeof value === 'bigint') return 'bigint';
  if (typeof value === 'number') return Number.isInteger(value) ? 'bigint' : 'float';
  if (value instanceof Uint8Array) return 'varbinary';
  return 'varchar';
}

/** The statement's result columns; `inferred` when one is typed by the first row's value. */
function resultColumns(conn: Connection, stmt: ReturnType<DB['prepare']>, firstRow: SqlValue[] | undefined): { columns: ResultColumn[]; inferred: boolean } {
  const { capi } = sqlite3;
  const columns: ResultColumn[] = [];
  let inferred = false;
  for (let i = 0; i < stmt.columnCount; i++) {
    const name = stmt.getColumnName(i) ?? `column${i + 1}`;
    const tableName = capi.sqlite3_column_table_name(stmt.pointer!, i);
    const origin = (capi as unknown as { sqlite3_column_origin_name?: (s: number, n: number) => string | null }).sqlite3_column_origin_name?.(stmt.pointer! as never, i);
    const def = tableName ? conn.defs.get(tableName.toLowerCase()) : undefined;
    const column = def && origin ? def.columns.find((c) => c.name === origin.toLowerCase()) : undefined;
    if (column) {
      columns.push({ name, type: column.type, length: column.length, scale: column.scale, nullable: column.nullable });
      continue;
    }
    const declared = capi.sqlite3_column_decltype(stmt.pointer!, i);
    const typed = declared ? columnTypeOf(declared) : undefined;
    const value = firstRow?.[i] ?? null;
    if (!typed) inferred = true;
    columns.push({ name, type: typed?.type ?? inferredType(value), length: typed?.length ?? null, scale: typed?.scale ?? null, nullable: true });
  }
  return { columns, inferred };
}

/** Queues the statement's tables for authorization with its first request (see `unauthorized`). */
function authorizeTouched(): void {
  const writes = [...touched.writes.entries()].map(([key, table]) => ({ table, command: key.slice(table.length + 1) }));
  unauthorized = touched.reads.size === 0 && writes.length === 0 ? undefined : { reads: [...touched.reads], writes };
}

/** Authorizes what no request carried (a statement that read no row), before its outcome is reported. */
function authorizeRest(): void {
  if (unauthorized) unwrap(host.call({ op: 'authorize' }) as TableReply);
}

/** A SELECT from the connection's cache, or prepared now (and cached when it only reads). */
function prepared(conn: Connection, sql: string, current: SqlJob): { stmt: Statement; cached?: CachedStatement } {
  const hit = current.kind === 'query' ? conn.statements.get(sql) : undefined;
  if (hit) {
    conn.statements.delete(sql);
    conn.statements.set(sql, hit);
    touched = hit.touched;
    return { stmt: hit.stmt, cached: hit };
  }
  touched = { reads: new Set(), writes: new Map() };
  preparingClientSql = true;
  refused = undefined;
  let stmt: Statement;
  try {
    stmt = conn.db.prepare(sql);
  } finally {
    preparingClientSql = false;
  }
  if (current.kind !== 'query' || !sqlite3.capi.sqlite3_stmt_readonly(stmt.pointer!)) return { stmt };
  const entry: CachedStatement = { stmt, touched };
  conn.statements.set(sql, entry);
  if (conn.statements.size > STATEMENT_CACHE) {
    const [oldest, entry] = conn.statements.entries().next().value!;
    conn.statements.delete(oldest);
    entry.stmt.finalize();
  }
  return { stmt, cached: entry };
}

function runSql(conn: Connection, sql: string, current: SqlJob, original: string, params: unknown[]): StatementOutcome {
  const { stmt, cached } = prepared(conn, sql, current);
  try {
    if (current.kind === 'query' && !sqlite3.capi.sqlite3_stmt_readonly(stmt.pointer!)) {
      throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sql', reason: 'getRecordsUsingSql runs one SELECT; use runSqlStatements for other statements' } });
    }
    authorizeTouched();
    bindParams(stmt, params);
    const rows: SqlValue[][] = [];
    let first: SqlValue[] | undefined;
    let seen = 0;
    let more = false;
    const skip = current.kind === 'query' ? current.skipRows : 0;
    // Stepped and read through the WebAssembly exports (fast-values.ts): the library's wrappers cost more than SQLite's own step.
    const stmtPointer = stmt.pointer!;
    const dbPointer = conn.db.pointer!;
    const columnCount = stmt.columnCount;
    while (fast.step(stmtPointer, dbPointer)) {
      seen++;
      if (seen <= skip) continue;
      const row = fast.row(stmtPointer, columnCount);
      first ??= row;
      if (rows.length < current.maxRows) rows.push(row);
      else {
        more = true;
        if (!current.countAll) break;
      }
    }
    authorizeRest();
    const isQuery = stmt.columnCount > 0;
    const outcome: StatementOutcome = { sql: original, affectedRows: isQuery ? 0 : sqlite3.capi.sqlite3_changes(conn.db.pointer!) };
    if (isQuery) {
      if (cached?.columns) outcome.columns = cached.columns;
      else {
        const described = resultColumns(conn, stmt, first);
        outcome.columns = described.columns;
        if (cached && !described.inferred) cached.columns = described.columns;
      }
      // Encoded here, off the main thread, when the caller's format is known.
      // The rows are this statement's own (and described above): encoded where they are.
      if (current.format) {
        const fields = resultFields(outcome.columns);
        const encoded = encodeRowValues(fields, rows, current.format, true);
        // As the response's JSON text: the main thread writes it as it is (no clone of the rows, no shaping, no JSON.stringify there).
        if (current.json !== undefined) {
          outcome.json = JSON.stringify(current.json === 'objects' ? recordsOf(fields, encoded) : encoded);
          outcome.count = encoded.length;
        } else outcome.encoded = encoded;
      } else outcome.rows = rows;
      outcome.more = more;
      if (current.countAll) outcome.total = seen;
    }
    return outcome;
  } finally {
    if (cached) {
      // The bindings go first: reset() throws the failed step's error again, and a cached
      // statement (shared by every caller of this database and owner) must never keep a value.
      stmt.clearBindings();
      try {
        stmt.reset();
      } catch {
        // the step's own error is what is reported
      }
    } else {
      stmt.finalize();
    }
  }
}

// ------------------------------------------------------------------------------------- DDL

/** Runs DDL in a scratch SQLite database so that SQLite parses it; returns the scratch and what the authorizer saw. */
function scratchRun(conn: Connection, sql: string, prepare?: (scratch: DB, missing: string, schema: string | undefined) => void): { scratch: DB; created?: { name: string; table: string; schema: string } } {
  const scratch = new sqlite3.oo1.DB(':memory:');
  scratch.exec(`ATTACH ':memory:' AS ${quote(conn.owner)}`);
  let created: { name: string; table: string; schema: string } | undefined;
  sqlite3.capi.sqlite3_set_authorizer(scratch.pointer!, (_arg: number, action: number, a1: string | 0, a2: string | 0, a3: string | 0) => {
    if (action === SQLITE_CREATE_TABLE && typeof a1 === 'string') created = { name: a1, table: a1, schema: String(a3) };
    if (action === SQLITE_CREATE_INDEX && typeof a1 === 'string') created = { name: a1, table: String(a2), schema: String(a3) };
    return 0;
  }, 0);
  for (let attempt = 0; ; attempt++) {
    try {
      scratch.exec(sql);
      break;
    } catch (error) {
      const missing = /^no such table: (?:([^.]+)\.)?(.+)$/.exec(sqlite3.capi.sqlite3_errmsg(scratch.pointer!));
      if (!missing || !prepare || attempt > 0) {
        const mapped = sqliteError({ ...conn, db: scratch }, error);
        scratch.close();
        throw new HostError(mapped);
      }
      prepare(scratch, missing[2], missing[1]);
    }
  }
  return { scratch, created };
}

function pragmaRows(db: DB, sql: string): SqlValue[][] {
  return db.exec({ sql, returnValue: 'resultRows', rowMode: 'array' }) as SqlValue[][];
}

function createTable(conn: Connection, sql: string): number {
  const words = leadingWords(sql, 6);
  const ifNotExists = words.slice(0, 5).join(' ') === 'CREATE TABLE IF NOT EXISTS';
  const { scratch, created } = scratchRun(conn, sql);
  try {
    if (!created) throw new HostError({ id: 'SQL_ERROR', details: { reason: 'CREATE TABLE … AS SELECT and other forms are not supported' } });
    const name = created.table.toLowerCase();
    if (ifNotExists && conn.defs.has(name)) return 0;
    const info = pragmaRows(scratch, `PRAGMA ${quote(created.schema)}.table_xinfo(${quote(created.table)})`);
    const fields: Array<Record<string, unknown>> = [];
    const keyColumns: string[] = [];
    for (const [, colName, declared, notNull, defaultText, pk] of info) {
      const column = String(colName);
      const typed = columnTypeOf(String(declared ?? ''));
      if (!typed) throw new HostError({ id: 'INVALID_TABLE_DEFINITION', details: { reason: `column "${column}": unknown type "${String(declared ?? '')}"` } });
      if (Number(pk) > 0) keyColumns.push(column);
      const field: Record<string, unknown> = { name: column, type: typed.type, nullable: Number(notNull) === 0 };
      if (typed.length !== undefined) field.length = typed.length;
      if (typed.scale !== undefined) field.scale = typed.scale;
      if (column.toLowerCase() === 'id') { field.type = 'bigint'; field.primaryKey = 1; delete field.length; }
      if (defaultText !== null && defaultText !== undefined) {
        const [[value]] = pragmaRows(scratch, `SELECT ${String(defaultText)}`);
        field.defaultValue = fromSql({ name: column, type: typed.type, length: typed.length ?? null, scale: typed.scale ?? null, nullable: true, primaryKey: 0, defaultValue: null, autoValue: 'none' }, value);
      }
      fields.push(field);
    }
    const def = unwrap(host.call({ op: 'createTable', table: name, fields }) as TableReply) as TableDefinition;
    defineVtab(conn, def);
    // PRIMARY KEY (other than the record ID) and UNIQUE constraints become unique indexes.
    let latest = def;
    const uniques = pragmaRows(scratch, `PRAGMA ${quote(created.schema)}.index_list(${quote(created.table)})`);
    let n = 0;
    for (const [, indexName, unique, origin] of uniques) {
      if (Number(unique) !== 1) continue;
      const columns = pragmaRows(scratch, `PRAGMA ${quote(created.schema)}.index_xinfo(${quote(String(indexName))})`).filter((row) => Number(row[5]) === 1);
      if (columns.length === 1 && String(columns[0][2]).toLowerCase() === 'id') continue;
      n++;
      latest = unwrap(host.call({
        op: 'createIndex', table: name, index: `${name}_${origin === 'pk' ? 'pk' : `uk${n}`}`, unique: true,
        fields: columns.map((row) => ({ name: String(row[2]).toLowerCase(), ascending: Number(row[3]) === 0 })),
      }) as TableReply) as TableDefinition;
    }
    if (keyColumns.length === 1 && keyColumns[0].toLowerCase() !== 'id' && !uniques.length) {
      latest = unwrap(host.call({ op: 'createIndex', table: name, index: `${name}_pk`, unique: true, fields: [{ name: keyColumns[0].toLowerCase(), ascending: true }] }) as TableReply) as TableDefinition;
    }
    if (latest !== def) defineVtab(conn, latest);
    return 0;
  } finally {
    scratch.close();
  }
}

function createIndex(conn: Connection, sql: string): number {
  const { scratch, created } = scratchRun(conn, sql, (db, missing, schema) => {
    const def = conn.defs.get(missing.toLowerCase());
    if (!def) throw new HostError({ id: 'TABLE_NOT_FOUND', details: { table: missing, database: conn.database } });
    db.exec(`CREATE TABLE ${schema ? `${quote(schema)}.` : ''}${quote(missing)} (${def.columns.map((column) => quote(column.name)).join(', ')})`);
  });
  try {
    if (!created) throw new HostError({ id: 'SQL_ERROR', details: { reason: 'not a CREATE INDEX statement' } });
    const unique = pragmaRows(scratch, `PRAGMA ${quote(created.schema)}.index_list(${quote(created.table)})`).some((row) => String(row[1]) === created.name && Number(row[2]) === 1);
    const columns = pragmaRows(scratch, `PRAGMA ${quote(created.schema)}.index_xinfo(${quote(created.name)})`).filter((row) => Number(row[5]) === 1);
    if (columns.some((row) => row[2] === null)) throw new HostError({ id: 'INVALID_INDEX_DEFINITION', details: { reason: 'an index on an expression is not supported' } });
    const def = unwrap(host.call({
      op: 'createIndex', table: created.table.toLowerCase(), index: created.name.toLowerCase(), unique,
      fields: columns.map((row) => ({ name: String(row[2]).toLowerCase(), ascending: Number(row[3]) === 0 })),
    }) as TableReply) as TableDefinition;
    defineVtab(conn, def);
    return 0;
  } finally {
    scratch.close();
  }
}

/** DROP INDEX [IF EXISTS] [schema.]name: SQLite knows no index of a virtual table, so the engine drops it. */
function dropIndex(conn: Connection, sql: string): number {
  const tokens = significant(tokenize(sql)).filter((token) => token.text !== ';');
  let i = 2;
  const ifExists = tokens[i]?.text.toUpperCase() === 'IF' && tokens[i + 1]?.text.toUpperCase() === 'EXISTS';
  if (ifExists) i += 2;
  if (tokens[i + 1]?.text === '.') i += 2;
  const name = tokens[i] ? identifierName(tokens[i]).toLowerCase() : '';
  if (name === '' || tokens.length > i + 1) throw new HostError({ id: 'SQL_SYNTAX_ERROR', details: { position: tokens[i]?.start ?? sql.length, reason: 'expected DROP INDEX [IF EXISTS] name' } });
  const def = [...conn.defs.values()].find((table) => table.indexes.some((index) => index.name === name));
  if (!def) {
    if (ifExists) return 0;
    throw new HostError({ id: 'SQL_ERROR', details: { reason: `no such index: ${name}` } });
  }
  const updated = unwrap(host.call({ op: 'dropIndex', table: def.name, index: name }) as TableReply) as TableDefinition;
  defineVtab(conn, updated);
  return 0;
}

// ------------------------------------------------------------------------------------- jobs

/** Statements as SQLite reads them (TOP/SKIP rewritten) with their leading words, by text: a repeated statement is not tokenized again. */
const rewrites = new Map<string, { sql: string; words: string[] }>();
const REWRITES_KEPT = 256;

function rewritten(original: string): { sql: string; words: string[] } {
  let found = rewrites.get(original);
  if (found) return found;
  const sql = rewriteTopSkip(original);
  found = { sql, words: leadingWords(sql, 3) };
  if (rewrites.size >= REWRITES_KEPT) rewrites.clear();
  rewrites.set(original, found);
  return found;
}

function runStatement(conn: Connection, current: SqlJob, original: string, params: unknown[]): StatementOutcome {
  hostErrors.last = undefined;
  replacedThisStatement.clear();
  unauthorized = undefined;
  statementWrites.pending = current.kind === 'statements';
  statementWrites.wrote = false;
  try {
    const { sql, words } = rewritten(original);
    const ddl = words[0] === 'CREATE' && (words[1] === 'TABLE' || words[1] === 'INDEX' || (words[1] === 'UNIQUE' && words[2] === 'INDEX'))
      || (words[0] === 'DROP' && words[1] === 'INDEX');
    if (ddl) {
      if (current.kind === 'query') throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sql', reason: 'getRecordsUsingSql runs one SELECT; use runSqlStatements for other statements' } });
      if (words[0] === 'DROP') dropIndex(conn, sql);
      else if (words[1] === 'TABLE') createTable(conn, sql);
      else createIndex(conn, sql);
      return { sql: original, affectedRows: 0 };
    }
    return runSql(conn, sql, current, original, params);
  } catch (error) {
    const reported = sqliteError(conn, error);
    // "incomplete input" has no token to point at: the error is at the end of the statement.
    if (reported.id === 'SQL_SYNTAX_ERROR' && reported.details.position === 'unknown') reported.details.position = original.length;
    if (statementWrites.wrote) unwrap(host.call({ op: 'rollbackStatement' }) as TableReply);
    return { sql: original, affectedRows: 0, error: reported };
  } finally {
    statementWrites.pending = false;
    statementWrites.wrote = false;
    replacedThisStatement.clear();
  }
}

/**
 * Runs a job's statements; `timeoutMs` of the job bounds it, and on the main thread a slice:
 * `sliceMs` and `sliceChecks` progress-handler calls (VM instructions, counted the same on a busy
 * machine as on an idle one).
 */
export function runJob(current: SqlJob, catalog: CatalogUpdate, sliceMs?: number, sliceChecks = Infinity): StatementOutcome[] {
  job = current;
  const conn = connectionFor(current.database, current.owner);
  connection = conn;
  applyCatalog(conn, catalog);
  deadline = performance.now() + Math.min(current.timeoutMs, sliceMs ?? Infinity);
  checksLeft = sliceChecks;
  budget.exhausted = false;
  const outcomes: StatementOutcome[] = [];
  try {
    for (const [i, sql] of current.statements.entries()) {
      const params = current.kind === 'query' ? current.params : current.statementParams?.[i] ?? [];
      const outcome = runStatement(conn, current, sql, params);
      outcomes.push(outcome);
      if (outcome.error && current.onError === 'stop') break;
    }
  } finally {
    deadline = Infinity;
    checksLeft = Infinity;
    job = undefined;
  }
  return outcomes;
}
