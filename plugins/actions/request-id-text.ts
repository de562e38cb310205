/**
 * The exact text of a request's top-level `requestId`, so that it is echoed unchanged (docs/actions.md, "Envelope"):
 * JSON.parse turns 9007199254740993 into 9007199254740992 and 1.50 into 1.5. Strings, booleans
 * and null survive parsing exactly, so the text is only looked for when the parsed requestId
 * holds a number.
 *
 * It runs on a body JSON.parse has accepted, so it skips values without validating them. When the
 * key appears more than once (nested, repeated) or escapes could spell it, a scan of the outer
 * object crosses strings and containers with native regular-expression searches and, like
 * JSON.parse, keeps the last of repeated keys.
 */

/** Whether `value` is or contains a number (its text may differ from what JSON.stringify writes). */
export function holdsNumber(value: unknown): boolean {
  if (typeof value === 'number') return true;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (holdsNumber(item)) return true;
  return false;
}

const KEY = '"requestId"';

/** The text of the top-level `requestId` value of a JSON object text, or undefined. */
export function requestIdText(text: string): string | undefined {
  // The common case in two native searches: the key appears once, and not written with \u
  // escapes (the only way to escape its letters), so that one is the top-level key.
  const at = text.indexOf(KEY);
  if (at !== -1 && text.indexOf(KEY, at + KEY.length) === -1 && text.indexOf('\\u') === -1) {
    const start = skipWhitespace(text, skipWhitespace(text, at + KEY.length) + 1); // past the colon
    return text.slice(start, endOfValue(text, start));
  }
  return scanTopLevel(text);
}

/** The top-level scan: every key of the outer object, keeping the last `requestId`. */
function scanTopLevel(text: string): string | undefined {
  let i = skipWhitespace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipWhitespace(text, i + 1);
  let found: string | undefined;
  while (text.charCodeAt(i) === QUOTE) {
    const keyEnd = stringEnd(text, i);
    const key = text.slice(i, keyEnd);
    i = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1); // past the colon
    const valueEnd = endOfValue(text, i);
    if (key === KEY || (key.includes('\\') && JSON.parse(key) === 'requestId')) found = text.slice(i, valueEnd);
    i = skipWhitespace(text, valueEnd);
    if (text.charCodeAt(i) !== COMMA) break;
    i = skipWhitespace(text, i + 1);
  }
  return found;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
/** The next quote, brace or bracket (what nesting depends on). */
const STRUCTURE = /["{}[\]]/g;
/** The next quote or backslash inside a string. */
const STRING_STOP = /["\\]/g;

function skipWhitespace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** The index after the string whose opening quote is at `i`. */
function stringEnd(text: string, i: number): number {
  STRING_STOP.lastIndex = i + 1;
  for (;;) {
    const stop = STRING_STOP.exec(text)!;
    if (text.charCodeAt(stop.index) === QUOTE) return stop.index + 1;
    STRING_STOP.lastIndex = stop.index + 2; // a backslash escapes the next character
  }
}

/** The index after the object or array that opens at `i`. */
function containerEnd(text: string, i: number): number {
  let depth = 0;
  STRUCTURE.lastIndex = i;
  for (;;) {
    const found = STRUCTURE.exec(text)!;
    const c = text.charCodeAt(found.index);
    if (c === QUOTE) STRUCTURE.lastIndex = stringEnd(text, found.index);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (--depth === 0) return found.index + 1;
  }
}

/** The index after the value that starts at `i` (a number or literal ends at a delimiter). */
function endOfValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return containerEnd(text, i);
  let end = i;
  for (;;) {
    const d = text.charCodeAt(end);
    if (Number.isNaN(d) || d === COMMA || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) return end;
    end++;
  }
}
