/**
 * REST shapes of data-command results. Values are already encoded by the commands in
 * REST_FORMAT (dates `MM/DD/CCYY hh:mm:ss.ttt`, hex binary); this file only reshapes.
 */
import type { EncodedRecord } from '../../lib/data/command-types';
import type { ColumnDefinition, IndexDefinition } from '../../kernel/storage/types';

/**
 * Whether REST shows the `id` column: only when the table declares it (TableDefinition.idDeclared),
 * and, with `select`, only when it is selected.
 */
export function showsId(idDeclared: boolean, select?: readonly string[]): boolean {
  if (!idDeclared) return false;
  return select === undefined || select.some((name) => name.toLowerCase() === 'id');
}

/** A single-record GET: the declared columns, `id` only when declared. */
export function restRecord(record: EncodedRecord, fields: readonly ColumnDefinition[], showId: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  copyColumns(record, fields, showId, out);
  return out;
}

/** A query result entry: `_id` first, then the declared (or selected) columns. */
export function restQueryRecord(record: EncodedRecord, fields: readonly ColumnDefinition[], showId: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { _id: typeof record.id === 'string' ? Number(record.id) : record.id };
  copyColumns(record, fields, showId, out);
  return out;
}

// One loop over the result's fields instead of object rest/spread: this runs for every record.
function copyColumns(record: EncodedRecord, fields: readonly ColumnDefinition[], showId: boolean, out: Record<string, unknown>): void {
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i].name;
    if (name === 'id' && !showId) continue;
    out[name] = record[name];
  }
}

export interface RestIndexDefinition {
  unique: boolean;
  fields: Array<{ name: string; ascending: boolean; key?: string; type?: string; size?: number }>;
}

/** GET index: `{unique, fields: [{name, ascending}]}`, plus key/type/size for JSON-property segments. */
export function restIndex(index: IndexDefinition): RestIndexDefinition {
  return {
    unique: index.unique,
    fields: index.fields.map((segment) => {
      const field: RestIndexDefinition['fields'][number] = { name: segment.name, ascending: segment.ascending };
      if (segment.key !== undefined) field.key = segment.key;
      if (segment.type !== undefined) field.type = segment.type;
      if (segment.size !== undefined) field.size = segment.size;
      return field;
    }),
  };
}
