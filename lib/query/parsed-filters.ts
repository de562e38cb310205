/**
 * Parsed filters by their text, so a query repeated with the same filter (a dashboard polling,
 * a client paging) neither parses it again nor compiles it again: filter-eval.ts keeps the
 * compiled predicate per parsed tree and table, and this keeps the tree. Trees are frozen, since
 * requests share them. Bounded: at most MAX_FILTERS texts of at most MAX_CACHED_LENGTH characters
 * (longer filters are parsed each time), the least recently used going first.
 */
import type { FilterNode } from '../../kernel/storage/filter-ast';
import { parseFilter } from './filter-parser';

const MAX_FILTERS = 256;
const MAX_CACHED_LENGTH = 2048;
const byText = new Map<string, FilterNode>();

export function parsedFilter(text: string): FilterNode {
  const known = byText.get(text);
  if (known !== undefined) {
    byText.delete(text); // most recently used goes last
    byText.set(text, known);
    return known;
  }
  if (text.length > MAX_CACHED_LENGTH) return parseFilter(text);
  const parsed = deepFreeze(parseFilter(text));
  if (byText.size >= MAX_FILTERS) byText.delete(byText.keys().next().value as string);
  byText.set(text, parsed);
  return parsed;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
