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

/** Reads `n` or `(n)` at token i; returns the value and the index after it. */
function integerAt(tokens: Token[], i: number): { value: string; next: number } | undefined {
  const at = nextSignificant(tokens, i);
  const token = tokens[at];
  if (token?.kind === 'number' && /^[0-9]+$/.test(token.text)) return { value: token.text, next: at + 1 };
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

export function rewriteTopSkip(sql: string): string {
  const tokens = tokenize(sql);
  const edits: Edit[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].kind !== 'word' || tokens[i].text.toUpperCase() !== 'SELECT') continue;
    let at = nextSignificant(tokens, i + 1);
    const quantifier = tokens[at]?.kind === 'word' ? tokens[at].text.toUpperCase() : '';
    if (quantifier === 'DISTINCT' || quantifier === 'ALL') at = nextSignificant(tokens, at + 1);
    let top: string | undefined;
    let skip: string | undefined;
    const clauseStart = at;
    let clauseEnd = at;
    if (tokens[at]?.kind === 'word' && tokens[at].text.toUpperCase() === 'TOP') {
      const value = integerAt(tokens, at + 1);
      if (value) {
        top = value.value;
        clauseEnd = value.next;
        at = nextSignificant(tokens, value.next);
      }
    }
    if (tokens[at]?.kind === 'word' && tokens[at].text.toUpperCase() === 'SKIP') {
      const value = integerAt(tokens, at + 1);
      if (value) {
        skip = value.value;
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
    const endChar2 = end < tokens.length ? tokens[end].start : sql.length;
    const limit = ` LIMIT ${top ?? '-1'}${skip !== undefined ? ` OFFSET ${skip}` : ''}`;
    edits.push({ at: endChar2, remove: 0, insert: limit });
  }
  if (edits.length === 0) return sql;
  // Apply from the end so earlier positions stay valid (an insert before a removal at the same place keeps order).
  edits.sort((a, b) => b.at - a.at || a.remove - b.remove);
  let out = sql;
  for (const edit of edits) out = out.slice(0, edit.at) + edit.insert + out.slice(edit.at + edit.remove);
  return out;
}
