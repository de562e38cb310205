/**
 * Transactions spanning several requests.
 *
 * A transaction buffers its writes in memory: each write is validated when it is made (column
 * values, record existence, declared-id and unique-key collisions against the committed state)
 * and recorded as an operation plus an overlay (record id → new values, or null when deleted)
 * that `getRecords` with the transaction id reads through. Commit replays the operations in one
 * LMDB child transaction with the full checks of ordinary writes: any violation (a unique key
 * taken meanwhile, a record deleted meanwhile) aborts it, nothing is applied, and the error
 * (e.g. DUPLICATE_KEY) is reported. Automatic record ids are reserved when the insert is made,
 * through an `ids.reserve` entry; the buffered writes are entries too, and the commit is one
 * `transaction.commit` entry holding them (apply-entry.ts).
 * Idle expiry is the owner's job (the data commands roll back a transaction left unused for
 * `transaction_idle_timeout_seconds`, on the engine's one clock): a transaction here lives until
 * commit, rollback or close.
 */
import { randomUUID } from 'node:crypto';
import { EngineError } from '../../kernel/errors';
import type {
  EntryTime, RecordsDeleteEntry, RecordsInsertEntry, RecordsUpdateEntry,
} from '../../kernel/storage/operation-entries';
import type { StoredRecord, TransactionSavepoint } from '../../kernel/storage/storage-port';
import type { RecordId, Row } from '../../kernel/storage/types';
import { ID_INDEX, type TableState } from './catalog';
import { canonicalTime, columnHeader, type OperationLog } from './apply-entry';
import { encodeIndexKey, keyHasNull } from './index-keys';
import {
  checkIndexKeys, completeInsertValues, decodeRow, mergeRow, uniqueTaken, type PreparedRow,
} from './records';

type Operation = RecordsInsertEntry | RecordsUpdateEntry | RecordsDeleteEntry;

interface Transaction {
  id: string;
  operations: Operation[];
  overlay: Map<TableState, Map<number, unknown[] | null>>;
  /**
   * What each overlay change replaced (undefined: the record had no entry), kept once a savepoint
   * is taken so that rollbackTo can undo back to it; a transaction without one keeps nothing.
   */
  undo?: Array<{ map: Map<number, unknown[] | null>; id: number; previous: unknown[] | null | undefined }>;
}

export class TransactionManager {
  private readonly open = new Map<string, Transaction>();

  constructor(private readonly operations: OperationLog) {}

  begin(): string {
    const id = randomUUID();
    this.open.set(id, { id, operations: [], overlay: new Map() });
    return id;
  }

  private get(id: string): Transaction {
    const tx = typeof id === 'string' ? this.open.get(id) : undefined;
    if (!tx) throw new EngineError('TRANSACTION_NOT_FOUND', { transactionId: String(id) });
    return tx;
  }

  private take(id: string): Transaction {
    const tx = this.get(id);
    this.open.delete(id);
    return tx;
  }

  /** Throws TRANSACTION_NOT_FOUND when the id is unknown or closed. */
  assert(id: string): void {
    this.get(id);
  }

  /**
   * The transaction's uncommitted view of a table (record id → values, or null when deleted), for
   * range reads to merge with the committed data; undefined when it has not written the table.
   * Throws TRANSACTION_NOT_FOUND.
   */
  overlayFor(id: string, ts: TableState): ReadonlyMap<number, unknown[] | null> | undefined {
    const overlay = this.get(id).overlay.get(ts);
    return overlay && overlay.size > 0 ? overlay : undefined;
  }

  /** Sets an overlay entry, remembering what it replaced when a savepoint may undo it. */
  private setOverlay(tx: Transaction, map: Map<number, unknown[] | null>, id: number, values: unknown[] | null): void {
    if (tx.undo) tx.undo.push({ map, id, previous: map.has(id) ? map.get(id)! : undefined });
    map.set(id, values);
  }

  private overlayOf(tx: Transaction, ts: TableState): Map<number, unknown[] | null> {
    let map = tx.overlay.get(ts);
    if (!map) tx.overlay.set(ts, map = new Map());
    return map;
  }

  /** The values of a record as the transaction sees them (undefined: absent). */
  private current(tx: Transaction, ts: TableState, id: number): unknown[] | undefined {
    const overlay = tx.overlay.get(ts);
    if (overlay && overlay.has(id)) return overlay.get(id) ?? undefined;
    return ts.records.get(id);
  }

  read(id: string, ts: TableState, ids: RecordId[]): Array<Row | undefined> {
    const tx = this.get(id);
    return ids.map((recordId) => {
      const values = typeof recordId === 'number' ? this.current(tx, ts, recordId) : undefined;
      return values === undefined ? undefined : decodeRow(ts, recordId, values);
    });
  }

  /** Buffers an insert; its rows' automatic ids are reserved now (an `ids.reserve` entry, durable before the answer). */
  async insert(id: string, ts: TableState, rows: PreparedRow[], time: EntryTime): Promise<RecordId[]> {
    let tx = this.get(id);
    const now = canonicalTime(time);
    for (const row of rows) completeInsertValues(ts, row.id, row.values, now);
    const seen = new Set<number>();
    let maxDeclared = 0;
    let missing = 0;
    for (const row of rows) {
      if (row.id === null) { missing++; continue; }
      if (seen.has(row.id) || this.current(tx, ts, row.id) !== undefined) {
        throw new EngineError('DUPLICATE_KEY', { index: ID_INDEX, table: ts.def.name });
      }
      seen.add(row.id);
      if (row.id > maxDeclared) maxDeclared = row.id;
    }
    const numbered = (first: number): PreparedRow[] => rows.map((row) => ({ id: row.id ?? first++, values: row.values }));
    let fixed = numbered(Math.max(ts.nextId, maxDeclared + 1));
    // Checked before ids are reserved: a refused insert uses up no ids (as before entries).
    for (const row of fixed) checkIndexKeys(ts, row.id!, row.values);
    this.checkUnique(tx, ts, fixed);
    if (missing > 0) {
      fixed = numbered(await this.operations.submit<number>({ op: 'ids.reserve', database: ts.def.database, table: ts.def.name, count: missing, above: maxDeclared }));
      tx = this.get(id); // rolled back meanwhile: TRANSACTION_NOT_FOUND
      // Again with the reserved ids (a key may hold the id), against what the transaction wrote meanwhile.
      for (const row of fixed) checkIndexKeys(ts, row.id!, row.values);
      this.checkUnique(tx, ts, fixed);
    }
    const overlay = this.overlayOf(tx, ts);
    for (const row of fixed) this.setOverlay(tx, overlay, row.id!, row.values);
    const ids = fixed.map((row) => row.id!);
    tx.operations.push({
      op: 'records.insert', database: ts.def.database, table: ts.def.name, columns: columnHeader(ts), ids, values: fixed.map((row) => row.values), time,
    });
    return ids;
  }

  update(id: string, ts: TableState, records: StoredRecord[], mode: 'replace' | 'patch', time: EntryTime): void {
    const tx = this.get(id);
    const now = canonicalTime(time);
    const changed: PreparedRow[] = [];
    const staged = new Map<number, unknown[]>();
    for (const record of records) {
      const current = staged.get(record.id) ?? (typeof record.id === 'number' ? this.current(tx, ts, record.id) : undefined);
      if (current === undefined) throw new EngineError('RECORD_NOT_FOUND', { id: String(record.id), table: ts.def.name });
      const values = mergeRow(ts, record.id, current, record.row, mode, now);
      staged.set(record.id, values);
    }
    for (const [recordId, values] of staged) changed.push({ id: recordId, values });
    for (const row of changed) checkIndexKeys(ts, row.id!, row.values);
    this.checkUnique(tx, ts, changed);
    const overlay = this.overlayOf(tx, ts);
    for (const [recordId, values] of staged) this.setOverlay(tx, overlay, recordId, values);
    tx.operations.push({
      op: mode === 'replace' ? 'records.replace' : 'records.patch', database: ts.def.database, table: ts.def.name,
      records: records.map((r) => ({ id: r.id, row: { ...r.row } })), time,
    });
  }

  delete(id: string, ts: TableState, ids: RecordId[], mustExist: boolean): number {
    const tx = this.get(id);
    const existing = new Set<number>();
    for (const recordId of ids) {
      if (typeof recordId === 'number' && this.current(tx, ts, recordId) !== undefined) existing.add(recordId);
      else if (mustExist) throw new EngineError('RECORD_NOT_FOUND', { id: String(recordId), table: ts.def.name });
    }
    const overlay = this.overlayOf(tx, ts);
    for (const recordId of existing) this.setOverlay(tx, overlay, recordId, null);
    tx.operations.push({ op: 'records.delete', database: ts.def.database, table: ts.def.name, ids: [...existing], mustExist: false });
    return existing.size;
  }

  /** Unique keys of `rows` against the committed state and the transaction's own rows. */
  private checkUnique(tx: Transaction, ts: TableState, rows: PreparedRow[]): void {
    const unique = ts.indexes.filter((index) => index.def.unique);
    if (unique.length === 0) return;
    const overlay = this.overlayOf(tx, ts);
    const writing = new Set<number>(rows.map((row) => row.id!));
    const changing = new Set<number>(overlay.keys());
    for (const recordId of writing) changing.add(recordId);
    for (const index of unique) {
      const keys = new Map<string, number>();
      for (const [recordId, values] of overlay) {
        if (values === null || writing.has(recordId)) continue;
        keys.set(encodeIndexKey(index.specs, decodeRow(ts, recordId, values)).toString('latin1'), recordId);
      }
      for (const row of rows) {
        const key = encodeIndexKey(index.specs, decodeRow(ts, row.id!, row.values));
        if (keyHasNull(index.specs, key)) continue;
        const s = key.toString('latin1');
        if (keys.has(s) || uniqueTaken(index, key, changing)) {
          throw new EngineError('DUPLICATE_KEY', { index: index.def.name, table: ts.def.name });
        }
        keys.set(s, row.id!);
      }
    }
  }

  /** Applies every buffered write in one durable, all-or-nothing commit (a `transaction.commit` entry). */
  async commit(id: string): Promise<void> {
    const tx = this.take(id);
    if (tx.operations.length === 0) return;
    // The entry names its tables: one deleted since (even if created again) fails the commit here, as it always did.
    for (const ts of tx.overlay.keys()) {
      if (ts.dropped) throw new EngineError('TABLE_NOT_FOUND', { database: ts.def.database, table: ts.def.name });
    }
    await this.operations.submit({ op: 'transaction.commit', operations: tx.operations });
  }

  rollback(id: string): void {
    this.take(id);
  }

  /** Marks where the transaction stands now: rollbackTo undoes every write made after it. */
  savepoint(id: string): TransactionSavepoint {
    const tx = this.get(id);
    tx.undo ??= [];
    return { operations: tx.operations.length, undo: tx.undo.length };
  }

  /** Undoes the writes made since `savepoint` (automatic ids reserved meanwhile stay used). */
  rollbackTo(id: string, savepoint: TransactionSavepoint): void {
    const tx = this.get(id);
    const undo = tx.undo;
    if (!undo || savepoint.undo > undo.length || savepoint.operations > tx.operations.length) {
      throw new EngineError('INVALID_PARAMETER', { param: 'savepoint', reason: 'not a savepoint of this transaction' });
    }
    while (undo.length > savepoint.undo) {
      const change = undo.pop()!;
      if (change.previous === undefined) change.map.delete(change.id);
      else change.map.set(change.id, change.previous);
    }
    tx.operations.length = savepoint.operations;
  }

  close(): void {
    this.open.clear();
  }
}
