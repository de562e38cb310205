/**
 * The product's `SELECT [DISTINCT|ALL] TOP n [SKIP m] …` as SQLite's `SELECT … LIMIT n OFFSET m`
 * (also `SELECT SKIP m …` alone). SQLite has no TOP, and the public clients send it (the
 * SQLAlchemy dialect turns every LIMIT/OFFSET into TOP/SKIP), so this one small step runs before
 * SQLite sees the text; nothing else is rewritten (docs/sql.md, "TOP and SKIP").
 *
 * Works on tokens (sql-tokens.ts): TOP and SKIP count only right after SELECT (and DISTINCT /
 * ALL), their values are integer literals (optionally in parentheses), and the LIMIT goes at the
 * end of that SELECT: before the parenthesis closing its subquery, or at the end of the statement
 * (before a final semicolon).
 */
import { tokenize, type Token } from './sql-tokens';

interface Edit { at: number; remove: number; insert: string }

function nextSignificant(tokens: Token[], from: number): number {
  let i = from;
  while (i < tokens.length && tokens[i].kind === 'space') i++;
  return i;
}

/** A bare `?` (not `?NNN`) at token i. */
function isBarePlaceholder(tokens: Token[], i: number): boolean {
  return tokens[i]?.text === '?' && tokens[i].kind === 'punct' && !(tokens[i + 1]?.kind === 'number' && tokens[i + 1].start === tokens[i].start + 1);
}

/** Reads `n`, `-n`, `(n)` or a bare `?` at token i; returns the value, the index after it and where a `?` is. */
function integerAt(tokens: Token[], i: number): { value: string; next: number; placeholder?: number } | undefined {
  const at = nextSignificant(tokens, i);
  const token = tokens[at];
  if (isBarePlaceholder(tokens, at)) return { value: '?', next: at + 1, placeholder: at };
  if (token?.kind === 'number' && /^[0-9]+$/.test(token.text)) return { value: token.text, next: at + 1 };
  // `-1`, which the SQLAlchemy dialect copies from SQLite's `LIMIT -1` (no limit) for an OFFSET alone.
  const digits = tokens[at + 1];
  if (token?.text === '-' && token.kind === 'punct' && digits?.kind === 'number' && digits.start === token.start + 1 && /^[0-9]+$/.test(digits.text)) {
    return { value: `-${digits.text}`, next: at + 2 };
  }
  if (token?.text === '(') {
    const inner = nextSignificant(tokens, at + 1);
    const close = nextSignificant(tokens, inner + 1);
    if (tokens[inner]?.kind === 'number' && /^[0-9]+$/.test(tokens[inner].text) && tokens[close]?.text === ')') {
      return { value: tokens[inner].text, next: close + 1 };
    }
  }
  return undefined;
}

/** Where the SELECT starting at token `from` ends: the index of the closing parenthesis of its level, or of the final `;`, or the end. */
function endOfSelect(tokens: Token[], from: number): number {
  let depth = 0;
  let end = tokens.length;
  for (let i = from; i < tokens.length; i++) {
    const text = tokens[i].text;
    if (tokens[i].kind !== 'punct') continue;
    if (text === '(') depth++;
    else if (text === ')') {
      if (depth === 0) return i;
      depth--;
    } else if (text === ';' && depth === 0) {
      end = i;
      break;
    }
  }
  // Before trailing spaces, so the LIMIT follows the last word.
  while (end > from && tokens[end - 1].kind === 'space') end--;
  return end;
}

/**
 * The SELECT's own `LIMIT n [OFFSET m]` between tokens from and end (at its level, not a
 * subquery's): its values as written (`?`, a number, `-1`; `undefined` for one that is not such a
 * value), or undefined when it has no LIMIT.
 */
function ownLimit(tokens: Token[], from: number, end: number): { limit?: string; offset?: string } | undefined {
  let depth = 0;
  for (let i = from; i < end; i++) {
    if (tokens[i].text === '(' && tokens[i].kind === 'punct') depth++;
    else if (tokens[i].text === ')' && tokens[i].kind === 'punct') depth--;
    else if (depth === 0 && tokens[i].kind === 'word' && tokens[i].text.toUpperCase() === 'LIMIT') {
      const limit = integerAt(tokens, i + 1);
      if (!limit) return {};
      const keyword = nextSignificant(tokens, limit.next);
      const offset = tokens[keyword]?.kind === 'word' && tokens[keyword].text.toUpperCase() === 'OFFSET' ? integerAt(tokens, keyword + 1) : undefined;
      return { limit: limit.value, offset: offset?.value };
    }
  }
  return undefined;
}

/**
 * SQLite's number for each placeholder token, in text order (`?` is one more than the largest so
 * far, `?NNN` is NNN), skipping the tokens in `dropped`; undefined when the statement has a named
 * parameter.
 */
function placeholderNumbers(tokens: Token[], dropped: Set<number>): Map<number, number> | undefined {
  const numbers = new Map<number, number>();
  const names = new Map<string, number>();
  let largest = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind !== 'punct' || dropped.has(i)) continue;
    const next = tokens[i + 1];
    const adjacent = next !== undefined && next.start === token.start + 1;
    if (token.text === '?') {
      if (adjacent && next.kind === 'number') largest = Math.max(largest, Number(next.text));
      else numbers.set(i, ++largest);
    } else if ((token.text === ':' || token.text === '@' || token.text === '$') && adjacent && next.kind === 'word') {
      const name = token.text + next.text;
      if (!names.has(name)) names.set(name, ++largest);
    }
  }
  // A named parameter takes its number where it first appears: after a move its number would
  // change, so such a statement is left to SQLite (which reports the `?` after TOP).
  return names.size > 0 ? undefined : numbers;
}

export function rewriteTopSkip(sql: string): string {
  const tokens = tokenize(sql);
  const edits: Edit[] = [];
  // `TOP ?` / `SKIP ?`: their values are the first positional parameters of that SELECT, so every
  // bare `?` gets its number (`?N`) before the values move to the end. The SQLAlchemy dialect
  // sends `SELECT TOP ? SKIP ? … LIMIT ? OFFSET ?` with values only for the LIMIT and OFFSET (its
  // rewrite copies the `?` and keeps the LIMIT): there the TOP/SKIP clause is dropped, and its
  // `?` counts for nothing.
  const dropped = new Set<number>();
  const moved: Array<{ limitEdit: Edit; top?: string; skip?: string; topAt?: number; skipAt?: number }> = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].kind !== 'word' || tokens[i].text.toUpperCase() !== 'SELECT') continue;
    let at = nextSignificant(tokens, i + 1);
    const quantifier = tokens[at]?.kind === 'word' ? tokens[at].text.toUpperCase() : '';
    if (quantifier === 'DISTINCT' || quantifier === 'ALL') at = nextSignificant(tokens, at + 1);
    let top: string | undefined;
    let skip: string | undefined;
    let topAt: number | undefined;
    let skipAt: number | undefined;
    const clauseStart = at;
    let clauseEnd = at;
    if (tokens[at]?.kind === 'word' && tokens[at].text.toUpperCase() === 'TOP') {
      const value = integerAt(tokens, at + 1);
      if (value) {
        top = value.value;
        topAt = value.placeholder;
        clauseEnd = value.next;
        at = nextSignificant(tokens, value.next);
      }
    }
    if (tokens[at]?.kind === 'word' && tokens[at].text.toUpperCase() === 'SKIP') {
      const value = integerAt(tokens, at + 1);
      if (value) {
        skip = value.value;
        skipAt = value.placeholder;
        clauseEnd = value.next;
      }
    }
    if (top === undefined && skip === undefined) continue;
    const startChar = tokens[clauseStart].start;
    // The clause and the spaces after it go: `SELECT TOP 5 *` becomes `SELECT *`.
    const after = nextSignificant(tokens, clauseEnd);
    const endChar = after < tokens.length ? tokens[after].start : sql.length;
    edits.push({ at: startChar, remove: endChar - startChar, insert: '' });
    const end = endOfSelect(tokens, clauseEnd);
    const own = ownLimit(tokens, clauseEnd, end);
    // The dialect's copy of the SELECT's own LIMIT/OFFSET: a `?` in it, or the same values
    // (`TOP -1 SKIP 5 … LIMIT -1 OFFSET 5`). Any other TOP beside a LIMIT is left for SQLite to refuse.
    const copied = own !== undefined && (topAt !== undefined || skipAt !== undefined || ((top ?? '-1') === own.limit && skip === own.offset));
    if (copied) {
      for (const at of [topAt, skipAt]) if (at !== undefined) dropped.add(at);
      continue;
    }
    const endChar2 = end < tokens.length ? tokens[end].start : sql.length;
    const limitEdit: Edit = { at: endChar2, remove: 0, insert: '' };
    edits.push(limitEdit);
    moved.push({ limitEdit, top, skip, topAt, skipAt });
  }
  if (edits.length === 0) return sql;
  const movedAt = new Set(moved.flatMap((entry) => [entry.topAt, entry.skipAt]).filter((at): at is number => at !== undefined));
  const numbers = movedAt.size > 0 ? placeholderNumbers(tokens, dropped) : undefined;
  if (movedAt.size > 0 && numbers === undefined) return sql;
  for (const { limitEdit, top, skip, topAt, skipAt } of moved) {
    const value = (given: string | undefined, at: number | undefined): string | undefined => (at !== undefined ? `?${numbers!.get(at)}` : given);
    const limitValue = value(top, topAt);
    const offsetValue = value(skip, skipAt);
    limitEdit.insert = ` LIMIT ${limitValue ?? '-1'}${offsetValue !== undefined ? ` OFFSET ${offsetValue}` : ''}`;
  }
  if (numbers) {
    for (const [at, number] of numbers) if (!movedAt.has(at)) edits.push({ at: tokens[at].start, remove: 1, insert: `?${number}` });
  }
  // Apply from the end so earlier positions stay valid (an insert before a removal at the same place keeps order).
  edits.sort((a, b) => b.at - a.at || a.remove - b.remove);
  let out = sql;
  for (const edit of edits) out = out.slice(0, edit.at) + edit.insert + out.slice(edit.at + edit.remove);
  return out;
}
