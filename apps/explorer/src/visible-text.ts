/**
 * Text that clients chose (topic names, client ids, payloads, MQTT properties) is shown with the
 * characters that reorder or hide text made visible: the bidirectional embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069) and the direction marks (U+200E, U+200F, U+061C) appear
 * as their escapes (`\u202E`, class `hidden-char`). Otherwise `a/\u202Efdp.exe` would show as
 * another topic's name, and a payload could show other text than it holds.
 * Copying still copies the real text; only what is on screen changes.
 */
import { html } from './html.js';

const HIDDEN_CHARS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const HIDDEN_CHARS_ALL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `\u202E` for U+202E. */
function escapeOf(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** For attributes (title, aria-label) and other plain strings: each such character as its escape. */
export function visibleText(text: string): string {
  return HIDDEN_CHARS.test(text) ? text.replace(HIDDEN_CHARS_ALL, escapeOf) : text;
}

/** For the page: the text itself when it has none of them, else its parts with each one as a marked escape. */
export function visible(text: string): string | unknown[] {
  if (!HIDDEN_CHARS.test(text)) return text;
  const parts: unknown[] = [];
  let at = 0;
  for (const match of text.matchAll(HIDDEN_CHARS_ALL)) {
    const index = match.index!;
    if (index > at) parts.push(text.slice(at, index));
    parts.push(html`<span class="hidden-char" title="An invisible direction control character">${escapeOf(match[0])}</span>`);
    at = index + 1;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}
