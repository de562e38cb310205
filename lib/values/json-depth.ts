/**
 * Nesting depth of JSON, measured without recursion: values from clients can be nested
 * thousands deep, which recursive code (JSON.stringify included) turns into a stack overflow.
 */

/**
 * How many arrays/objects a JSON value may nest: the most a json column or a json variant
 * accepts, and the most a stored JSON value may nest to be returned as a JSON value (deeper
 * stored JSON, e.g. an MQTT payload, is returned as its text: docs/values.md). Far below the
 * depth at which JSON.stringify runs out of stack (a few thousand).
 */
export const MAX_JSON_DEPTH = 512;

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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * true when valid JSON `text` nests arrays/objects deeper than `limit` levels; a scan of the
 * text, so a value too deep to return is never built. Each level takes two characters, so text
 * of at most 2 × limit characters is answered without reading it (stored payloads mostly are).
 */
export function jsonTextDepthExceeds(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}
