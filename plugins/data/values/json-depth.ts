/**
 * Nesting depth of parsed JSON, measured without recursion: values from clients can be nested
 * thousands deep, which recursive code (JSON.stringify included) turns into a stack overflow.
 */

/** true when `value` nests arrays/objects deeper than `limit` levels. */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current as Record<string, unknown>);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
