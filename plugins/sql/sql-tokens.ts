/**
 * A token-level view of SQL text, used for the two things SQLite itself cannot be asked:
 * which kind of statement this is before it is prepared (DDL the engine must carry out itself),
 * and the product's `SELECT TOP n SKIP m` (rewritten to SQLite's LIMIT/OFFSET, top-skip.ts).
 * Strings, quoted identifiers and comments are single tokens, so nothing inside them is ever
 * read as a keyword.
 */

export interface Token {
  kind: 'word' | 'number' | 'string' | 'quoted' | 'punct' | 'space';
  text: string;
  start: number;
}

export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const start = i;
    const c = sql[i];
    if (/\s/.test(c)) {
      while (i < n && /\s/.test(sql[i])) i++;
      tokens.push({ kind: 'space', text: sql.slice(start, i), start });
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
      tokens.push({ kind: 'space', text: sql.slice(start, i), start });
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      tokens.push({ kind: 'space', text: sql.slice(start, i), start });
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      i++;
      while (i < n) {
        if (sql[i] === close) {
          if (close !== ']' && sql[i + 1] === close) { i += 2; continue; }
          i++;
          break;
        }
        i++;
      }
      tokens.push({ kind: c === "'" ? 'string' : 'quoted', text: sql.slice(start, i), start });
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      while (i < n && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[i])) i++;
      tokens.push({ kind: 'word', text: sql.slice(start, i), start });
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      while (i < n && /[0-9.eE]/.test(sql[i])) i++;
      tokens.push({ kind: 'number', text: sql.slice(start, i), start });
    } else {
      i++;
      tokens.push({ kind: 'punct', text: c, start });
    }
  }
  return tokens;
}

/** The tokens that are not spaces or comments. */
export function significant(tokens: Token[]): Token[] {
  return tokens.filter((token) => token.kind !== 'space');
}

/** The upper-cased leading words (at most `count`), e.g. ['CREATE', 'UNIQUE', 'INDEX']. */
export function leadingWords(sql: string, count: number): string[] {
  const words: string[] = [];
  for (const token of significant(tokenize(sql))) {
    if (token.kind !== 'word' || words.length >= count) break;
    words.push(token.text.toUpperCase());
  }
  return words;
}

/** An identifier token's name: quotes removed ("a""b" → a"b, [x] → x). */
export function identifierName(token: Token): string {
  if (token.kind !== 'quoted') return token.text;
  const inner = token.text.slice(1, -1);
  const quote = token.text[0];
  return quote === '[' ? inner : inner.split(quote + quote).join(quote);
}
