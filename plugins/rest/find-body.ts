/**
 * Translates a REST query body (`find` or `advanced_find`) into the value bounds of
 * `record.find`. Pure: the index definition comes from the caller. The body's shape is already
 * checked by the route schema; this file checks what a schema cannot (names of the index,
 * exclusive pairs).
 *
 * Operators map to bounds as the query planner says (lib/query/query-plan.ts; values compare
 * in the column's type, whatever the segment's direction): `<`, `<=`, `=`/`==`, `>=`, `>`, and
 * `between` with its lower bound from `lowervalue` (inclusive) or `excludelowervalue`
 * (exclusive) and its upper bound from `uppervalue` or `excludeuppervalue`. With another
 * operator the bound properties may add the bound on the side the operator leaves open
 * (`{operator: ">=", value: 10, excludeuppervalue: 20}`); two bounds on one side are an error.
 * The planner turns the bounds into key order (a descending index swaps them); `find_record`
 * compares whole keys in value order of the first segment's direction.
 */
import { EngineError } from '../../kernel/errors';
import type { RecordFindParams, WireBound } from '../../lib/data/command-types';
import { addComparison, comparisonOperator, type ValueBounds } from '../../lib/query/query-plan';
import type { IndexDefinition, IndexSegment } from '../../kernel/storage/types';

export interface FindCondition {
  operator: string;
  value?: unknown;
  lowervalue?: unknown;
  excludelowervalue?: unknown;
  uppervalue?: unknown;
  excludeuppervalue?: unknown;
}

export interface QueryBody {
  find?: Record<string, FindCondition>;
  advanced_find?: {
    find_set?: { length: number; fields: Record<string, unknown> };
    find_record?: { operator: string; fields: Record<string, unknown> };
  };
  filter?: string;
  reverse?: boolean;
  select?: string[];
}

export type FindBounds = Pick<RecordFindParams, 'lower' | 'upper' | 'prefix'>;

function invalid(reason: string): EngineError {
  return new EngineError('INVALID_QUERY', { reason });
}

/** The names a segment answers to: `column`, or for a JSON property its `key`, `column.key` (and `column` when unambiguous). */
function segmentNames(segments: readonly IndexSegment[], position: number): string[] {
  const segment = segments[position];
  if (segment.key === undefined) return [segment.name.toLowerCase()];
  const names = [segment.key.toLowerCase(), `${segment.name}.${segment.key}`.toLowerCase()];
  if (segments.filter((s) => s.name.toLowerCase() === segment.name.toLowerCase()).length === 1) names.push(segment.name.toLowerCase());
  return names;
}

/** The position of the segment `name` addresses, or -1. */
export function segmentPosition(segments: readonly IndexSegment[], name: string): number {
  const wanted = name.toLowerCase();
  for (let i = 0; i < segments.length; i++) if (segmentNames(segments, i).includes(wanted)) return i;
  return -1;
}

function displayName(segment: IndexSegment): string {
  return segment.key === undefined ? segment.name : segment.key;
}

/** Values of `fields` by segment position; every name must belong to the index. */
function valuesBySegment(fields: Record<string, unknown>, index: IndexDefinition, where: string): Map<number, unknown> {
  const values = new Map<number, unknown>();
  for (const [name, value] of Object.entries(fields)) {
    const position = segmentPosition(index.fields, name);
    if (position < 0) {
      throw invalid(`${where} names "${name}", which is not a field of index "${index.name}" (fields: ${index.fields.map(displayName).join(', ')})`);
    }
    if (values.has(position)) throw invalid(`${where} gives field "${displayName(index.fields[position])}" twice`);
    values.set(position, value);
  }
  return values;
}

function findBounds(find: Record<string, FindCondition>, index: IndexDefinition): FindBounds {
  const entries = Object.entries(find);
  if (entries.length !== 1) throw invalid('"find" must hold exactly one entry: the first field of the index');
  const [name, condition] = entries[0];
  if (segmentPosition(index.fields, name) !== 0) {
    throw invalid(`"find" must name the first field of index "${index.name}" ("${displayName(index.fields[0])}"), not "${name}"`);
  }
  if (condition.lowervalue !== undefined && condition.excludelowervalue !== undefined) {
    throw invalid('"lowervalue" and "excludelowervalue" are mutually exclusive');
  }
  if (condition.uppervalue !== undefined && condition.excludeuppervalue !== undefined) {
    throw invalid('"uppervalue" and "excludeuppervalue" are mutually exclusive');
  }
  const bound = (value: unknown, inclusive: boolean): WireBound => ({ values: [value], inclusive });
  const bounds: ValueBounds = {};
  if (condition.lowervalue !== undefined) bounds.lower = bound(condition.lowervalue, true);
  if (condition.excludelowervalue !== undefined) bounds.lower = bound(condition.excludelowervalue, false);
  if (condition.uppervalue !== undefined) bounds.upper = bound(condition.uppervalue, true);
  if (condition.excludeuppervalue !== undefined) bounds.upper = bound(condition.excludeuppervalue, false);

  if (condition.operator.toLowerCase() === 'between') {
    if (!bounds.lower && !bounds.upper) {
      throw invalid('"between" needs a lower bound (lowervalue or excludelowervalue) or an upper bound (uppervalue or excludeuppervalue)');
    }
    return bounds;
  }
  const operator = comparisonOperator(condition.operator);
  if (operator === undefined) throw invalid(`unknown operator "${condition.operator}" (use <, <=, =, >=, > or between)`);
  if (condition.value === undefined) throw new EngineError('MISSING_PARAMETER', { param: `find.${name}.value` });
  const taken = addComparison(bounds, operator, [condition.value]);
  if (taken === 'lower') throw invalid(`operator "${condition.operator}" sets the lower bound; do not also give lowervalue or excludelowervalue`);
  if (taken === 'upper') throw invalid(`operator "${condition.operator}" sets the upper bound; do not also give uppervalue or excludeuppervalue`);
  return bounds;
}

function findSetBounds(findSet: { length: number; fields: Record<string, unknown> }, index: IndexDefinition): FindBounds {
  const values = valuesBySegment(findSet.fields, index, 'find_set.fields');
  const leading: unknown[] = [];
  while (values.has(leading.length)) leading.push(values.get(leading.length));
  if (leading.length !== values.size) {
    const missing = displayName(index.fields[leading.length]);
    throw invalid(`find_set.fields must give the leading fields of index "${index.name}" in order: "${missing}" is missing`);
  }
  return { prefix: { values: leading, byteLength: findSet.length } };
}

function findRecordBounds(findRecord: { operator: string; fields: Record<string, unknown> }, index: IndexDefinition): FindBounds {
  const values = valuesBySegment(findRecord.fields, index, 'find_record.fields');
  const all: unknown[] = [];
  for (let i = 0; i < index.fields.length; i++) {
    if (!values.has(i)) throw invalid(`find_record.fields must give every field of index "${index.name}": "${displayName(index.fields[i])}" is missing`);
    all.push(values.get(i));
  }
  const operator = comparisonOperator(findRecord.operator);
  if (operator === undefined) throw invalid(`unknown find_record operator "${findRecord.operator}" (use <, <=, =, >= or >)`);
  const bounds: ValueBounds = {};
  addComparison(bounds, operator, all);
  return bounds;
}

/** The `record.find` bounds (in value order) of a query body on `index`. */
export function boundsOf(body: QueryBody, index: IndexDefinition): FindBounds {
  const hasFind = body.find !== undefined;
  const hasAdvanced = body.advanced_find !== undefined;
  if (hasFind === hasAdvanced) throw invalid('the body must hold exactly one of "find" and "advanced_find"');
  if (hasFind) return findBounds(body.find!, index);
  const { find_set: findSet, find_record: findRecord } = body.advanced_find!;
  if ((findSet === undefined) === (findRecord === undefined)) {
    throw invalid('"advanced_find" must hold exactly one of "find_set" and "find_record"');
  }
  return findSet ? findSetBounds(findSet, index) : findRecordBounds(findRecord!, index);
}
