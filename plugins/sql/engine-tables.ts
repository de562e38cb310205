/**
 * Worker side: the engine's tables as SQLite virtual tables (module `engine`), and the read-only
 * catalog tables `systables`, `syscolumns`, `sysindexes` (module `engine_catalog`).
 *
 * xBestIndex maps `=`, `<`, `<=`, `>`, `>=` on an index's leading segments (equalities, then one
 * range) onto a key range of that index, and an ORDER BY on those segments onto index order, so
 * point and range queries never read the whole table. Constraints are never `omit`ted: SQLite
 * checks every row again, so a bound that cannot be expressed exactly (sql-values.ts boundValue)
 * only widens the read. Every read and write goes to the main thread (sync-call.ts), where the
 * data commands authorize and run it.
 */
import type { ColumnDefinition, IndexDefinition, TableDefinition } from '../../kernel/storage/types';
import type { Sqlite3 } from './sqlite-module';
import type { HostRequest, JobError, SqlValue, TableReply } from './sql-protocol';
import { boundValue, declaredType, fromSql } from './sql-values';
import type { FastValues } from './fast-values';
import { BatchColumns, BatchMemory, HeapBatch } from './row-batch-reader';
import { decodeValue, ISO_FORMAT } from '../../lib/values/wire-format';

/** What the module needs from the worker running the job. */
export interface TableHost {
  /** The definition a virtual table is created for (by its name, lower case). */
  definition(table: string): TableDefinition | undefined;
  call(request: HostRequest): unknown;
  tell(request: HostRequest): void;
  /** While true, DROP of a virtual table only forgets it (the catalog changed), it does not drop the engine table. */
  syncing: boolean;
  /** A virtual table's engine table was dropped (DROP TABLE). */
  dropped(table: string): void;
  /** Rows of the catalog tables. */
  catalogRows(name: CatalogName): SqlValue[][];
}

export type CatalogName = 'systables' | 'syscolumns' | 'sysindexes';

/** Thrown by `call` when the main thread answered with an error; the job reports it as is. */
export class HostError extends Error {
  constructor(readonly error: JobError) {
    super(String((error.details as { message?: string }).message ?? error.id));
    // SQLite sees only a failed call; the job reports this error instead of SQLite's text.
    hostErrors.last = this;
  }
}

/** The last HostError thrown inside a virtual-table method (read and cleared by the job). */
export const hostErrors: { last: HostError | undefined } = { last: undefined };

/**
 * Records the running statement's OR REPLACE removed (`table/id`; cleared by the job at each
 * statement): an UPDATE OR REPLACE passes over a row it removed earlier in its own run, as SQLite
 * does for its tables, instead of failing on a record that no longer exists.
 */
export const replacedThisStatement = new Set<string>();

export function unwrap(reply: TableReply): unknown {
  if (reply.ok) return reply.value;
  throw new HostError(reply.error);
}

// SQLITE_INDEX_CONSTRAINT_* operators
const OP_EQ = 2; const OP_GT = 4; const OP_LE = 8; const OP_LT = 16; const OP_GE = 32; const OP_LIMIT = 73; const OP_OFFSET = 74;
const SCAN_UNIQUE = 1;
// sqlite3_vtab_on_conflict answers acted on; the others (ABORT, FAIL, ROLLBACK) fail the statement, which is then undone.
const CONFLICT_IGNORE = 2;
const CONFLICT_REPLACE = 5;
const SQLITE_VTAB_CONSTRAINT_SUPPORT = 1;
/** Returned for a row OR IGNORE passes over: SQLite goes on with the statement and does not count the row. */
const SQLITE_CONSTRAINT = 19;
/** The record-ID index (a duplicate ID is reported as a duplicate in it). */
const ID_INDEX = 'id_pk';

interface Plan {
  index?: string;
  /** Equalities on every segment of a unique index: one record at most. */
  unique?: boolean;
  /** The statement's LIMIT (and OFFSET) come as the last arguments: the first batch needs no more. */
  limit?: boolean;
  offset?: boolean;
  /** Column index (in the vtab) per equality, in segment order, then the range columns. */
  eq: number[];
  lower?: { column: number; inclusive: boolean };
  upper?: { column: number; inclusive: boolean };
  reverse: boolean;
}

interface VtabState {
  /** The connection (sqlite3*): xUpdate asks it for the statement's ON CONFLICT mode. */
  db: number;
  def: TableDefinition;
  columns: ColumnDefinition[];
  batchColumns: BatchColumns;
}

interface CursorState {
  vtab: VtabState;
  /** The current batch of stored records (row-batch-reader.ts). */
  rows: HeapBatch;
  position: number;
  /** The scan to continue (0: none, or it has ended). */
  scanId: number;
  /** Records to ask for in the next batch. */
  batch: number;
}

/**
 * Records of a scan's first batch: a few for a point lookup, more for anything else, most for a
 * range bounded on both sides (the statement asked for those rows: one call to the main thread
 * brings a 1,000-row range); each later batch is 4× the one before, up to MAX_BATCH.
 */
const POINT_BATCH = 4;
const FIRST_BATCH = 256;
const BOUNDED_BATCH = 1024;
const MAX_BATCH = 4096;

function createTableSql(columns: Array<{ name: string; type: string }>): string {
  return `CREATE TABLE x(${columns.map((column) => `"${column.name.replace(/"/g, '""')}" ${column.type}`).join(', ')})`;
}

/** A plan for the constraints SQLite offers: the best index, or the record-ID order. */
function choosePlan(def: TableDefinition, usable: Array<{ column: number; op: number }>, orderBy: Array<{ column: number; desc: boolean }>): { plan: Plan; cost: number; rows: number; unique: boolean; consumesOrder: boolean; uses: Array<{ column: number; op: number }> } {
  const columnIndex = new Map(def.columns.map((column, i) => [column.name, i]));
  let best = { plan: { eq: [], reverse: false } as Plan, cost: 1e9, rows: 1e6, unique: false, consumesOrder: false, uses: [] as Array<{ column: number; op: number }> };
  const indexes: Array<IndexDefinition | undefined> = [undefined, ...def.indexes];
  for (const index of indexes) {
    // Segments as vtab columns; the record-ID order behaves like an ascending index on `id`.
    const segments = index ? index.fields.map((field) => (field.key === undefined ? columnIndex.get(field.name) : undefined)) : [0];
    const plan: Plan = { eq: [], reverse: false, ...(index ? { index: index.name } : {}) };
    const uses: Array<{ column: number; op: number }> = [];
    let s = 0;
    for (; s < segments.length; s++) {
      const column = segments[s];
      if (column === undefined) break;
      const eq = usable.find((c) => c.column === column && c.op === OP_EQ);
      if (!eq) break;
      plan.eq.push(column);
      uses.push(eq);
    }
    const rangeColumn = segments[s];
    const ascending = index ? index.fields[s]?.ascending !== false : true;
    if (rangeColumn !== undefined && ascending) {
      const lower = usable.find((c) => c.column === rangeColumn && (c.op === OP_GT || c.op === OP_GE));
      const upper = usable.find((c) => c.column === rangeColumn && (c.op === OP_LT || c.op === OP_LE));
      if (lower) { plan.lower = { column: rangeColumn, inclusive: lower.op === OP_GE }; uses.push(lower); }
      if (upper) { plan.upper = { column: rangeColumn, inclusive: upper.op === OP_LE }; uses.push(upper); }
    }
    const unique = (index ? index.unique : true) && plan.eq.length === segments.length;
    let rows = 1e6;
    if (unique) rows = 1;
    else if (plan.eq.length > 0) rows = 1e6 / Math.pow(100, plan.eq.length) + (plan.lower || plan.upper ? 0 : 10);
    if (!unique && (plan.lower || plan.upper)) rows = rows / (plan.lower && plan.upper ? 16 : 4);
    // ORDER BY on the segments after the equalities, all in index order or all reversed.
    let consumesOrder = false;
    if (orderBy.length > 0 && orderBy.length <= segments.length - plan.eq.length) {
      const directions = orderBy.map((term, k) => {
        const segment = plan.eq.length + k;
        if (segments[segment] !== term.column) return undefined;
        const segmentAscending = index ? index.fields[segment].ascending !== false : true;
        return term.desc === !segmentAscending ? 'forward' : 'backward';
      });
      if (directions.every((d) => d === 'forward')) consumesOrder = true;
      else if (directions.every((d) => d === 'backward')) { consumesOrder = true; plan.reverse = true; }
    }
    let cost = rows * (index && index.automatic === false ? 1.1 : 1);
    if (orderBy.length > 0 && !consumesOrder) cost += rows * Math.log2(rows + 2);
    if (unique) plan.unique = true;
    if (cost < best.cost) best = { plan, cost, rows, unique, consumesOrder, uses };
  }
  return best;
}

/** The `engine` module of one connection; `fast`: the runner's value helpers (one scratch area per thread). */
export function engineModule(sqlite3: Sqlite3, host: TableHost, fast: FastValues): unknown {
  const { capi, wasm } = sqlite3;
  const memory = new BatchMemory(sqlite3, fast);
  const vtab = sqlite3.vtab;
  const states = new Map<number, VtabState>();
  const cursors = new Map<number, CursorState>();
  /** Plans by their text (xBestIndex's idxStr), parsed once. */
  const plans = new Map<string, Plan>();

  const connect = (pDb: number, _pAux: number, argc: number, argv: number, ppVtab: number, _pzErr: number): number => {
    const args = wasm.cArgvToJs(argc, argv) ?? [];
    const name = String(args[2]).toLowerCase();
    const def = host.definition(name);
    if (!def) throw new Error(`no such table: ${name}`);
    const rc = capi.sqlite3_declare_vtab(pDb, createTableSql(def.columns.map((column) => ({ name: column.name, type: declaredType(column) }))));
    if (rc !== 0) return rc;
    // xUpdate handles OR IGNORE and OR REPLACE itself (a failed write changes nothing), so SQLite passes the mode on.
    capi.sqlite3_vtab_config(pDb, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
    const table = vtab.xVtab.create(ppVtab);
    states.set(table.pointer as unknown as number, { db: pDb, def, columns: def.columns, batchColumns: new BatchColumns(def.columns) });
    return 0;
  };

  const fetchBatch = (cursor: CursorState, request: HostRequest): void => {
    // The batch's bytes are valid until the next call: copied into SQLite's memory at once.
    cursor.rows.load(unwrap(host.call(request) as TableReply) as Uint8Array);
    cursor.position = 0;
    cursor.scanId = cursor.rows.scanId;
    cursor.batch = Math.min(cursor.batch * 4, MAX_BATCH);
  };

  /**
   * OR REPLACE: removes the records that hold the key of unique index `index` the row written
   * would take (SQL values `row`, by vtab column), except `self` (the record an UPDATE changes).
   * False when there is none to remove, or the key cannot be read exactly from the row.
   */
  const removeHolders = (state: VtabState, index: string, row: SqlValue[], self: number | undefined): boolean => {
    const table = state.def.name;
    let ids: number[];
    if (index === ID_INDEX) {
      ids = row[0] === null || row[0] === undefined ? [] : [Number(row[0])];
    } else {
      const def = state.def.indexes.find((candidate) => candidate.name === index);
      if (def === undefined) return false;
      const key: unknown[] = [];
      for (const field of def.fields) {
        const column = field.key === undefined ? state.columns.findIndex((c) => c.name === field.name) : -1;
        const value = column < 0 ? undefined : storedKeyValue(state.columns[column], row[column]);
        if (value === undefined) return false;
        key.push(value);
      }
      const probe: CursorState = { vtab: state, rows: new HeapBatch(memory, state.batchColumns), position: 0, scanId: 0, batch: POINT_BATCH };
      try {
        fetchBatch(probe, { op: 'scan', table, index, lower: { values: key, inclusive: true }, upper: { values: key, inclusive: true }, reverse: false, batch: POINT_BATCH });
        ids = Array.from({ length: probe.rows.count }, (_, i) => probe.rows.id(i));
        if (probe.scanId !== 0) host.tell({ op: 'close', scanId: probe.scanId });
      } finally {
        probe.rows.free();
      }
    }
    ids = ids.filter((id) => id !== self);
    for (const id of ids) {
      unwrap(host.call({ op: 'delete', table, id }) as TableReply);
      replacedThisStatement.add(`${table}/${id}`);
    }
    return ids.length > 0;
  };

  /**
   * Runs an INSERT's or UPDATE's write under the statement's ON CONFLICT mode: IGNORE passes a row
   * over that would repeat a unique key; REPLACE removes the records holding it, then writes again
   * (at most once per unique index and the ID). Every other failure, and every other mode, fails
   * the statement. Answers xUpdate's return code.
   */
  const writeResolving = (state: VtabState, row: SqlValue[], self: number | undefined, write: () => void): number => {
    const mode = capi.sqlite3_vtab_on_conflict(state.db);
    if (mode !== CONFLICT_IGNORE && mode !== CONFLICT_REPLACE) {
      write();
      return 0;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        write();
        return 0;
      } catch (error) {
        if (mode === CONFLICT_REPLACE && self !== undefined && error instanceof HostError && error.error.id === 'RECORD_NOT_FOUND'
          && replacedThisStatement.has(`${state.def.name}/${self}`)) {
          // An UPDATE row this statement's REPLACE already removed: nothing left to change.
          hostErrors.last = undefined;
          return 0;
        }
        if (!(error instanceof HostError) || error.error.id !== 'DUPLICATE_KEY' || attempt > state.def.indexes.length) throw error;
        // Resolved here: the job must not report it.
        hostErrors.last = undefined;
        if (mode === CONFLICT_IGNORE) return SQLITE_CONSTRAINT;
        const index = String((error.error.details as { index?: unknown }).index ?? '');
        if (!removeHolders(state, index, row, self)) {
          hostErrors.last = error;
          throw error;
        }
      }
    }
  };

  /**
   * The value the store will keep for `value` written to `column`, as the insert decodes it (so its
   * index key is exactly the one that repeated); undefined for NULL (a NULL repeats no key) or a
   * value the write itself would refuse.
   */
  const storedKeyValue = (column: ColumnDefinition, value: SqlValue): unknown => {
    if (value === null) return undefined;
    try {
      const stored = decodeValue(column, fromSql(column, value), ISO_FORMAT);
      return stored === null ? undefined : stored;
    } catch {
      return undefined;
    }
  };

  const methods = {
    xCreate: connect,
    xConnect: (pDb: number, pAux: number, argc: number, argv: number, ppVtab: number, pzErr: number): number => connect(pDb, pAux, argc, argv, ppVtab, pzErr),
    xDisconnect(pVtab: number): number {
      states.delete(pVtab);
      vtab.xVtab.dispose(pVtab);
      return 0;
    },
    xDestroy(pVtab: number): number {
      const state = states.get(pVtab);
      if (state && !host.syncing) {
        unwrap(host.call({ op: 'dropTable', table: state.def.name }) as TableReply);
        host.dropped(state.def.name);
      }
      states.delete(pVtab);
      vtab.xVtab.dispose(pVtab);
      return 0;
    },
    xBestIndex(pVtab: number, pIdxInfo: number): number {
      const state = states.get(pVtab)!;
      const info = vtab.xIndexInfo(pIdxInfo) as any;
      const usable: Array<{ column: number; op: number; at: number }> = [];
      for (let i = 0; i < info.$nConstraint; i++) {
        const constraint = info.nthConstraint(i);
        if (constraint.$usable && constraint.$iColumn >= 0) usable.push({ column: constraint.$iColumn, op: constraint.$op, at: i });
        else if (constraint.$usable && constraint.$iColumn === -1) usable.push({ column: 0, op: constraint.$op, at: i });
      }
      const orderBy: Array<{ column: number; desc: boolean }> = [];
      for (let i = 0; i < info.$nOrderBy; i++) {
        const term = info.nthOrderBy(i);
        orderBy.push({ column: term.$iColumn < 0 ? 0 : term.$iColumn, desc: term.$desc !== 0 });
      }
      const best = choosePlan(state.def, usable, orderBy);
      // Arguments in plan order: equalities, then lower, then upper.
      const ordered = best.uses;
      ordered.forEach((use, k) => {
        const at = (use as unknown as { at: number }).at;
        const usage = info.nthConstraintUsage(at);
        usage.$argvIndex = k + 1;
        usage.$omit = 0;
      });
      // SQLite offers LIMIT/OFFSET only when the table is read alone and in the order asked.
      let next = ordered.length;
      const limit = usable.find((c) => c.op === OP_LIMIT);
      const offset = usable.find((c) => c.op === OP_OFFSET);
      if (limit) {
        info.nthConstraintUsage(limit.at).$argvIndex = ++next;
        best.plan.limit = true;
        if (offset) {
          info.nthConstraintUsage(offset.at).$argvIndex = ++next;
          best.plan.offset = true;
        }
      }
      const text = JSON.stringify(best.plan);
      info.$idxStr = wasm.allocCString(text, false);
      info.$needToFreeIdxStr = 1;
      info.$estimatedCost = best.cost;
      info.$estimatedRows = BigInt(Math.max(1, Math.round(best.rows)));
      if (best.unique) info.$idxFlags = SCAN_UNIQUE;
      info.$orderByConsumed = best.consumesOrder ? 1 : 0;
      info.dispose();
      return 0;
    },
    xOpen(pVtab: number, ppCursor: number): number {
      const cursor = vtab.xCursor.create(ppCursor);
      const state = states.get(pVtab)!;
      cursors.set(cursor.pointer as unknown as number, { vtab: state, rows: new HeapBatch(memory, state.batchColumns), position: 0, scanId: 0, batch: FIRST_BATCH });
      return 0;
    },
    xClose(pCursor: number): number {
      const cursor = cursors.get(pCursor);
      if (cursor && cursor.scanId !== 0) host.tell({ op: 'close', scanId: cursor.scanId });
      cursor?.rows.free();
      cursors.delete(pCursor);
      vtab.xCursor.dispose(pCursor);
      return 0;
    },
    xFilter(pCursor: number, _idxNum: number, idxStr: number, argc: number, argv: number): number {
      const cursor = cursors.get(pCursor)!;
      if (cursor.scanId !== 0) host.tell({ op: 'close', scanId: cursor.scanId });
      cursor.scanId = 0;
      const planText = wasm.cstrToJs(idxStr) ?? '{}';
      let plan = plans.get(planText);
      if (!plan) {
        plan = JSON.parse(planText) as Plan;
        if (plans.size >= 1024) plans.clear();
        plans.set(planText, plan);
      }
      cursor.batch = plan.unique ? POINT_BATCH : plan.lower && plan.upper ? BOUNDED_BATCH : FIRST_BATCH;
      const args = (capi.sqlite3_values_to_js(argc, argv) ?? []) as SqlValue[];
      const columns = cursor.vtab.columns;
      // Equalities: bound values for the leading segments; a value that cannot bound the index ends the bounds there.
      const prefix: unknown[] = [];
      let exact = true;
      let k = 0;
      for (const column of plan.eq) {
        const value = boundValue(columns[column], args[k++]);
        if (value === undefined || !exact) { exact = false; continue; }
        prefix.push(value);
      }
      if (plan.eq.some((_, i) => args[i] === null)) {
        // `= NULL` is never true: nothing to read.
        cursor.rows.clear();
        cursor.position = 0;
        return 0;
      }
      let lower = prefix.length > 0 ? { values: [...prefix], inclusive: true } : undefined;
      let upper = prefix.length > 0 ? { values: [...prefix], inclusive: true } : undefined;
      // Arguments in plan order: equalities, lower, upper, LIMIT, OFFSET (each consumed whether it bounds the read or not).
      const lowerArg = plan.lower ? args[k++] : null;
      const upperArg = plan.upper ? args[k++] : null;
      if (exact && plan.lower) {
        const value = boundValue(columns[plan.lower.column], lowerArg);
        if (value !== undefined) lower = { values: [...prefix, value], inclusive: plan.lower.inclusive };
      }
      if (exact && plan.upper) {
        const value = boundValue(columns[plan.upper.column], upperArg);
        if (value !== undefined) upper = { values: [...prefix, value], inclusive: plan.upper.inclusive };
      }
      if (plan.limit) {
        const wanted = Number(args[k++] ?? 0) + (plan.offset ? Number(args[k++] ?? 0) : 0);
        if (Number.isFinite(wanted) && wanted >= 0) cursor.batch = Math.min(MAX_BATCH, Math.max(POINT_BATCH, wanted));
      }
      const request: HostRequest = {
        op: 'scan',
        table: cursor.vtab.def.name,
        ...(plan.index !== undefined ? { index: plan.index } : {}),
        ...(lower ? { lower } : {}),
        ...(upper ? { upper } : {}),
        reverse: plan.reverse,
        batch: cursor.batch,
      };
      fetchBatch(cursor, request);
      return 0;
    },
    xNext(pCursor: number): number {
      const cursor = cursors.get(pCursor)!;
      cursor.position++;
      if (cursor.position >= cursor.rows.count && cursor.scanId !== 0) {
        fetchBatch(cursor, { op: 'more', scanId: cursor.scanId, batch: cursor.batch });
      }
      return 0;
    },
    xEof(pCursor: number): number {
      const cursor = cursors.get(pCursor)!;
      return cursor.position >= cursor.rows.count ? 1 : 0;
    },
    xColumn(pCursor: number, pContext: number, column: number): number {
      const cursor = cursors.get(pCursor)!;
      cursor.rows.result(pContext, cursor.position, column);
      return 0;
    },
    xRowid(pCursor: number, pRowid: number): number {
      const cursor = cursors.get(pCursor)!;
      vtab.xRowid(pRowid, cursor.rows.id(cursor.position));
      return 0;
    },
    xUpdate(pVtab: number, argc: number, argv: number, pRowid: number): number {
      const state = states.get(pVtab)!;
      const args = (capi.sqlite3_values_to_js(argc, argv) ?? []) as SqlValue[];
      const table = state.def.name;
      if (argc === 1) {
        unwrap(host.call({ op: 'delete', table, id: Number(args[0]) }) as TableReply);
        return 0;
      }
      const row = args.slice(2);
      const values: Record<string, unknown> = {};
      state.columns.forEach((column, c) => {
        if (c === 0 && !state.def.idDeclared) return;
        values[column.name] = fromSql(column, row[c]);
      });
      if (args[0] === null) {
        if (!state.def.idDeclared || values.id === null) delete values.id;
        // Columns left out of the INSERT come as NULL: leave them out so defaults and automatic values apply.
        for (const column of state.columns) if (values[column.name] === null && (column.defaultValue !== null || column.autoValue !== 'none')) delete values[column.name];
        return writeResolving(state, row, undefined, () => {
          const id = unwrap(host.call({ op: 'insert', table, record: values }) as TableReply) as number;
          vtab.xRowid(pRowid, id);
        });
      }
      if (args[0] !== args[1] && Number(args[0]) !== Number(args[1])) {
        throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sql', reason: 'a record ID cannot be changed by UPDATE' } });
      }
      delete values.id;
      const id = Number(args[0]);
      return writeResolving(state, row, id, () => { unwrap(host.call({ op: 'update', table, id, values }) as TableReply); });
    },
  };
  return (vtab.setupModule as unknown as (options: unknown) => unknown)({ methods, catchExceptions: true });
}

const CATALOG_COLUMNS: Record<CatalogName, Array<{ name: string; type: string }>> = {
  systables: [
    { name: 'tbl', type: 'VARCHAR(64)' }, { name: 'owner', type: 'VARCHAR(64)' }, { name: 'tbltype', type: 'CHAR(1)' },
    { name: 'tblid', type: 'INTEGER' }, { name: 'creator', type: 'VARCHAR(64)' }, { name: 'has_pcnstrs', type: 'CHAR(1)' },
    { name: 'topic', type: 'VARCHAR(65500)' },
  ],
  syscolumns: [
    { name: 'tbl', type: 'VARCHAR(64)' }, { name: 'owner', type: 'VARCHAR(64)' }, { name: 'col', type: 'VARCHAR(64)' },
    { name: 'id', type: 'INTEGER' }, { name: 'coltype', type: 'VARCHAR(32)' }, { name: 'width', type: 'INTEGER' },
    { name: 'scale', type: 'INTEGER' }, { name: 'nullflag', type: 'CHAR(1)' }, { name: 'dflt_value', type: 'VARCHAR(256)' },
  ],
  sysindexes: [
    { name: 'tbl', type: 'VARCHAR(64)' }, { name: 'tblowner', type: 'VARCHAR(64)' }, { name: 'idxname', type: 'VARCHAR(64)' },
    { name: 'idxowner', type: 'VARCHAR(64)' }, { name: 'colname', type: 'VARCHAR(64)' }, { name: 'idxseq', type: 'INTEGER' },
    { name: 'asc_desc', type: 'CHAR(1)' }, { name: 'idxtype', type: 'CHAR(1)' },
  ],
};

/** The catalog tables: read-only, rows from the worker's copy of the catalog. */
export function catalogModule(sqlite3: Sqlite3, host: TableHost): unknown {
  const { capi, wasm } = sqlite3;
  const vtab = sqlite3.vtab;
  const names = new Map<number, CatalogName>();
  const cursors = new Map<number, { rows: SqlValue[][]; position: number }>();
  const connect = (pDb: number, _pAux: number, argc: number, argv: number, ppVtab: number): number => {
    const args = wasm.cArgvToJs(argc, argv) ?? [];
    const name = String(args[2]).toLowerCase() as CatalogName;
    const rc = capi.sqlite3_declare_vtab(pDb, createTableSql(CATALOG_COLUMNS[name]));
    if (rc !== 0) return rc;
    const table = vtab.xVtab.create(ppVtab);
    names.set(table.pointer as unknown as number, name);
    return 0;
  };
  const methods = {
    xCreate: connect,
    xConnect: (pDb: number, pAux: number, argc: number, argv: number, ppVtab: number): number => connect(pDb, pAux, argc, argv, ppVtab),
    xDisconnect(pVtab: number): number { names.delete(pVtab); vtab.xVtab.dispose(pVtab); return 0; },
    xDestroy(pVtab: number): number {
      if (!host.syncing) throw new HostError({ id: 'INVALID_PARAMETER', details: { param: 'sql', reason: 'the catalog tables are read-only' } });
      names.delete(pVtab); vtab.xVtab.dispose(pVtab); return 0;
    },
    xBestIndex(_pVtab: number, pIdxInfo: number): number {
      const info = vtab.xIndexInfo(pIdxInfo) as any;
      info.$estimatedCost = 1000;
      info.dispose();
      return 0;
    },
    xOpen(pVtab: number, ppCursor: number): number {
      const cursor = vtab.xCursor.create(ppCursor);
      cursors.set(cursor.pointer as unknown as number, { rows: host.catalogRows(names.get(pVtab)!), position: 0 });
      return 0;
    },
    xClose(pCursor: number): number { cursors.delete(pCursor); vtab.xCursor.dispose(pCursor); return 0; },
    xFilter(pCursor: number): number { cursors.get(pCursor)!.position = 0; return 0; },
    xNext(pCursor: number): number { cursors.get(pCursor)!.position++; return 0; },
    xEof(pCursor: number): number { const c = cursors.get(pCursor)!; return c.position >= c.rows.length ? 1 : 0; },
    xColumn(pCursor: number, pContext: number, column: number): number {
      const c = cursors.get(pCursor)!;
      capi.sqlite3_result_js(pContext, c.rows[c.position][column] as never);
      return 0;
    },
    xRowid(pCursor: number, pRowid: number): number { vtab.xRowid(pRowid, cursors.get(pCursor)!.position + 1); return 0; },
  };
  return (vtab.setupModule as unknown as (options: unknown) => unknown)({ methods, catchExceptions: true });
}

export const CATALOG_TABLES: CatalogName[] = ['systables', 'syscolumns', 'sysindexes'];
