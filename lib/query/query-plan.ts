/**
 * The query planner: comparisons on an index, as the protocols receive them, become the key
 * bounds storage reads. REST (`find`, `find_record`) and actions (`indexRange`,
 * `indexFieldFilters`) parse their own syntax, then both go through here:
 *
 * 1. `addComparison` turns `key OP values` into a value-order bound (`<` upper exclusive,
 *    `<=` upper inclusive, `=` both inclusive, `>=` lower inclusive, `>` lower exclusive).
 * 2. record.find and cursor.open (query-commands.ts) hand those bounds to `keyOrderBounds`,
 *    which swaps them when the index's first segment is descending: storage walks keys, and a
 *    descending segment stores its largest values first, so "values >= 4" are the keys up to 4's.
 *
 * Whole-key bounds on an index whose segments mix directions follow the first segment's
 * direction (docs/queries.md). Nulls never match a bound: storage leaves them out (KeyRange).
 */
import type { IndexDefinition } from '../../kernel/storage/types';
import type { WireBound, WireValue } from '../data/command-types';

export type ComparisonOperator = '<' | '<=' | '=' | '>=' | '>';

/** Bounds in value order: `lower` <= matching values <= `upper` (each inclusive or not). */
export interface ValueBounds {
  lower?: WireBound;
  upper?: WireBound;
}

const OPERATORS: ReadonlyMap<string, ComparisonOperator> = new Map<string, ComparisonOperator>([
  ['<', '<'], ['<=', '<='], ['=', '='], ['==', '='], ['>=', '>='], ['>', '>'],
]);

/** The comparison an operator names (`==` is `=`); undefined when it names none. */
export function comparisonOperator(operator: string): ComparisonOperator | undefined {
  return OPERATORS.get(operator);
}

/**
 * Adds the bound of `key OPERATOR values` (values of the index's leading segments) to `bounds`.
 * Returns the side that was already bounded (the caller words the error in its own parameter
 * names) and then changes nothing; undefined when the bound was added.
 */
export function addComparison(bounds: ValueBounds, operator: ComparisonOperator, values: WireValue[]): 'lower' | 'upper' | undefined {
  const setsLower = operator === '=' || operator === '>' || operator === '>=';
  const setsUpper = operator === '=' || operator === '<' || operator === '<=';
  if (setsLower && bounds.lower) return 'lower';
  if (setsUpper && bounds.upper) return 'upper';
  if (setsLower) bounds.lower = { values, inclusive: operator !== '>' };
  if (setsUpper) bounds.upper = { values, inclusive: operator !== '<' };
  return undefined;
}

/**
 * Value-order bounds (wire or decoded) as key-order bounds of `index` (undefined: record-ID
 * order, ascending).
 */
export function keyOrderBounds<B>(bounds: { lower?: B; upper?: B }, index: IndexDefinition | undefined): { lower?: B; upper?: B } {
  if (index === undefined || index.fields[0]?.ascending !== false) return bounds;
  const swapped: { lower?: B; upper?: B } = {};
  if (bounds.upper) swapped.lower = bounds.upper;
  if (bounds.lower) swapped.upper = bounds.lower;
  return swapped;
}
