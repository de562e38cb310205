/**
 * record.find: a page of records read through an index (or in record-ID order).
 *
 * Bounds compare values (`lower` <= value <= `upper`), whatever the direction of the index:
 * query-plan.ts turns them into key order. Bound values are wire values of the index segments,
 * decoded with the segment's column (the table column, or for a JSON property segment its typed
 * key column) in the request's format: REST passes `dateFormat: 'rest'`. A bound with no values
 * or more values than the index has segments is INVALID_QUERY. The filter is parsed and checked
 * against the table once per request. `more` is true when another matching record follows the
 * page (limit + 1 are read).
 */
import { EngineError } from '../../kernel/errors';
import { compileFilter } from '../../lib/query/filter-eval';
import type { FilterNode } from '../../lib/query/filter-parser';
import { parsedFilter } from '../../lib/query/parsed-filters';
import type { KeyBound, KeyRange, ReadOptions, ReadSlices, StoragePort } from '../../kernel/storage/storage-port';
import { readAll } from '../../kernel/storage/stored-values';
import type { CanonicalValue, ColumnDefinition, IndexDefinition, TableDefinition } from '../../kernel/storage/types';
import { decodeValue, type ValueFormat } from '../../lib/values/wire-format';
import type { EncodedRecord, FormatParam, RecordFindParams, RecordFindResult, WireBound, WireValue } from '../../lib/data/command-types';
import { lower, tableCall, tableResource, type DataContext } from './data-context';
import { findIndex } from '../../lib/data/find-index';
import { ID, RecordEncoder, resolveFormat } from './record-codec';
import { keyOrderBounds } from '../../lib/query/query-plan';
import { MAX_PAGE, inTable, readProperties } from './schemas';

export const ID_INDEX = 'id_pk';

interface KeyLayout {
  /** The index read through; undefined for record-ID order (the ascending `id_pk`). */
  index: IndexDefinition | undefined;
  /** Columns to decode bound values with, one per segment (nullable). */
  columns: ColumnDefinition[];
  /** User-visible key bytes (find_set length), when known. */
  byteLength: number | undefined;
}

const layouts = new WeakMap<IndexDefinition, KeyLayout>();

function keyLayout(storage: StoragePort, table: TableDefinition, indexName: string | undefined): KeyLayout {
  if (indexName === undefined || indexName === ID_INDEX) {
    const id = table.columns.find((c) => c.name === ID) ?? table.columns[0];
    return { index: undefined, columns: [{ ...id, nullable: true }], byteLength: 8 };
  }
  const index = findIndex(table, indexName);
  let layout = layouts.get(index);
  if (!layout) {
    const key = storage.indexKeyLayout(table, index);
    layout = { index, columns: key.columns.map((column) => ({ ...column, nullable: true })), byteLength: key.byteLength };
    layouts.set(index, layout);
  }
  return layout;
}

function decodeValues(what: string, values: readonly WireValue[], layout: KeyLayout, index: string, format: ValueFormat): CanonicalValue[] {
  if (values.length === 0) throw new EngineError('INVALID_QUERY', { reason: `the ${what} has no values` });
  if (values.length > layout.columns.length) {
    throw new EngineError('INVALID_QUERY', {
      reason: `the ${what} has ${values.length} values but index "${index}" has ${layout.columns.length} segment(s)`,
    });
  }
  const decoded = new Array<CanonicalValue>(values.length);
  // A value that does not fit its segment's column is 4031 naming that column, which is what
  // every protocol's client wrote (REST `find`, actions `indexRange`…), not this command's terms.
  for (let i = 0; i < values.length; i++) decoded[i] = decodeValue(layout.columns[i], values[i], format);
  return decoded;
}

function decodeBound(what: string, bound: WireBound, layout: KeyLayout, index: string, format: ValueFormat): KeyBound {
  return { values: decodeValues(what, bound.values, layout, index, format), inclusive: bound.inclusive !== false };
}

export type ReadParams = Omit<RecordFindParams, 'limit' | 'skip' | 'transactionId' | 'countTotal'>;

export interface PreparedRead {
  table: TableDefinition;
  format: ValueFormat;
  encoder: RecordEncoder;
  /** ReadOptions without skip, limit and transactionId. */
  options: ReadOptions;
}

/** Everything a read needs, validated and decoded once (record.find and cursor.open). */
export function prepareRead(storage: StoragePort, table: TableDefinition, p: ReadParams, baseFormat?: FormatParam): PreparedRead {
  const format = resolveFormat(p.format ?? baseFormat);
  const encoder = RecordEncoder.for(table, p.select, format);
  const index = p.index === undefined ? undefined : lower(p.index);
  const layout = keyLayout(storage, table, index);
  const indexName = index ?? ID_INDEX;
  let range: KeyRange | undefined;
  if (p.lower || p.upper || p.prefix) {
    range = keyOrderBounds({
      ...(p.lower ? { lower: decodeBound('lower bound', p.lower, layout, indexName, format) } : {}),
      ...(p.upper ? { upper: decodeBound('upper bound', p.upper, layout, indexName, format) } : {}),
    }, layout.index);
    if (p.prefix) {
      const { byteLength } = p.prefix;
      if (byteLength !== undefined && layout.byteLength !== undefined && byteLength > layout.byteLength) {
        throw new EngineError('INVALID_QUERY', {
          reason: `a key prefix of ${byteLength} bytes is longer than the ${layout.byteLength} key bytes of index "${indexName}"`,
        });
      }
      range.prefix = { values: decodeValues('prefix', p.prefix.values, layout, indexName, format), ...(byteLength !== undefined ? { byteLength } : {}) };
    }
  }
  let filter: FilterNode | undefined;
  if (p.filter !== undefined && p.filter.trim() !== '') {
    filter = parsedFilter(p.filter);
    compileFilter(filter, table); // unknown columns and mistyped literals fail here, not mid-scan
  }
  const options: ReadOptions = {};
  if (index !== undefined) options.index = index;
  if (range) options.range = range;
  if (filter) options.filter = filter;
  if (p.reverse) options.reverse = true;
  return { table, format, encoder, options };
}

/**
 * Entries a read visits before it lets the event loop run others (well under a millisecond: the
 * broker shares this loop).
 */
export const VISITS_PER_TURN = 1000;

/** Resolves after the event loop has served what was waiting (I/O included): between two slices. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Runs a read in slices of VISITS_PER_TURN entries, letting the event loop run between them;
 * `between` runs after each pause (a cursor checks it is still open).
 */
export async function readInSlices<T>(read: ReadSlices<T>, between?: () => void): Promise<T> {
  for (;;) {
    const step = read.next(VISITS_PER_TURN);
    if (step.done) return step.value;
    await nextTurn();
    between?.();
  }
}

export function registerQueryCommands(data: DataContext): void {
  data.engine.bus.register<RecordFindParams, RecordFindResult>({
    name: 'record.find',
    reads: true,
    summary: 'A page of records through an index (or record-ID order): bounds, prefix, filter, reverse, skip, limit.',
    params: inTable({ ...readProperties, limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE } }, ['limit']),
    resource: tableResource,
    handler: async (p, ctx) => {
      const { storage, database, table, transactionId } = tableCall(data, ctx, p);
      const read = prepareRead(storage, table, p);
      const options: ReadOptions = read.options;
      options.skip = p.skip ?? 0;
      options.limit = p.limit + 1;
      if (transactionId) options.transactionId = transactionId;
      const reading = storage.readRecords(database, table.name, options);
      // May visit far more entries than it returns: in slices, letting others run between them.
      // Otherwise in one call (the query hot path).
      const page = options.filter !== undefined || options.skip > VISITS_PER_TURN ? await readInSlices(reading) : readAll(reading);
      const more = page.length > p.limit;
      const records = new Array<EncodedRecord>(more ? p.limit : page.length);
      for (let i = 0; i < records.length; i++) records[i] = read.encoder.encodeStored(page[i].id, page[i].values);
      const result: RecordFindResult = { fields: read.encoder.fields, records, more, idDeclared: table.idDeclared };
      if (p.countTotal) result.total = storage.countRecords(database, table.name);
      return result;
    },
  });
}
