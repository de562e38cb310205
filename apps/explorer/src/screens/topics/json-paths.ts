/**
 * JSON paths of numbers, in the syntax the Chart reads (format.ts parseJsonPath): `temp`,
 * `axis.x`, `values[0]`, `["odd key"]`. Used to offer a payload's numeric fields for charting and
 * to make the numbers of the pretty view clickable.
 */
const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

export function childPath(parent: string, step: string | number): string {
  if (typeof step === 'number') return `${parent}[${step}]`;
  if (IDENTIFIER.test(step)) return parent === '' ? step : `${parent}.${step}`;
  return `${parent}[${JSON.stringify(step)}]`;
}

/** The paths of the numbers in a JSON value, in document order, at most `limit` (arrays: their first 8 items). */
export function numericPaths(value: unknown, limit = 40): string[] {
  const found: string[] = [];
  const walk = (node: unknown, path: string, depth: number): void => {
    if (found.length >= limit || depth > 16) return;
    if (typeof node === 'number') {
      if (Number.isFinite(node)) found.push(path);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (let i = 0; i < Math.min(node.length, 8); i++) walk(node[i], childPath(path, i), depth + 1);
      return;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) walk(child, childPath(path, key), depth + 1);
  };
  walk(value, '', 0);
  return found;
}

/** The numeric fields of a few messages' JSON, merged in first-seen order. */
export function numericFieldsOf(values: unknown[], limit = 40): string[] {
  const seen = new Set<string>();
  for (const value of values) {
    for (const path of numericPaths(value, limit)) {
      seen.add(path);
      if (seen.size >= limit) return [...seen];
    }
  }
  return [...seen];
}
