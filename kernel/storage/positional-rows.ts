/**
 * Rows by column name as PositionalRows (`StoragePort.insertValues`), for writers that hold rows
 * that way (tools, tests). Nothing is checked here: values decoded against the table's current
 * definition are trusted by the store, so they must already be canonical values of their columns
 * (plugins/data's RecordDecoder is the checked way in).
 */
import type { PositionalRows } from './storage-port';
import type { Row, TableDefinition } from './types';

/** `id` only where a row gives it; a column a row leaves out is `undefined` (its default or automatic value applies). */
export function positionalRows(table: TableDefinition, rows: Row[]): PositionalRows {
  const columns = table.columns;
  return {
    table,
    ids: rows.map((row) => (row.id === undefined || row.id === null ? null : row.id as number)),
    values: rows.map((row) => {
      const values = new Array<unknown>(columns.length - 1);
      for (let c = 1; c < columns.length; c++) values[c - 1] = Object.hasOwn(row, columns[c].name) ? row[columns[c].name] : undefined;
      return values;
    }),
  };
}
