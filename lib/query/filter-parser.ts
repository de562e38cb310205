/**
 * The filter language: a tokenizer and a recursive-descent parser producing a typed AST.
 *
 *   expression := or
 *   or         := and (("||" | "or") and)*
 *   and        := unary (("&&" | "and") unary)*
 *   unary      := ("!" | "not") unary | primary
 *   primary    := "(" expression ")" | operand [compareOp operand]
 *   operand    := identifier | string | number | "true" | "false" | "null"
 *   compareOp  := "==" | "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
 *
 * Keywords and identifiers are case-insensitive. Positions are 1-based character offsets.
 * An operand without a comparison is a truth test (a bit column, or true/false).
 * See docs/queries.md.
 */
import { EngineError } from '../../kernel/errors';

export type { ColumnOperand, CompareOp, FilterNode, LiteralOperand, Operand } from '../../kernel/storage/filter-ast';
import type { CompareOp, FilterNode, Operand } from '../../kernel/storage/filter-ast';

type TokenKind =
  | 'ident' | 'string' | 'number' | 'true' | 'false' | 'null'
  | 'and' | 'or' | 'not' | 'op' | '(' | ')' | 'end';

interface Token {
  kind: TokenKind;
  /** For 'op': the normalized operator; for 'string': the unescaped value; else the source text. */
  value: string;
  /** Source text. */
  text: string;
  position: number;
}

/** Deepest nesting of parentheses and negations. */
const MAX_DEPTH = 200;

// A Map, not an object literal: `constructor` or `__proto__` must read as column names.
const KEYWORDS: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ['and', 'and'], ['or', 'or'], ['not', 'not'], ['true', 'true'], ['false', 'false'], ['null', 'null'],
]);

function syntaxError(position: number, reason: string): EngineError {
  return new EngineError('FILTER_SYNTAX', { position, reason });
}

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', 0: '\0', '\\': '\\', "'": "'", '"': '"', '/': '/',
};

/** Splits filter text into tokens; the last token is 'end'. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    const position = i + 1;
    // whitespace
    if (c === 32 || c === 9 || c === 10 || c === 13) { i++; continue; }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(text.charCodeAt(j))) j++;
      const word = text.slice(i, j);
      const keyword = KEYWORDS.get(word.toLowerCase());
      tokens.push({ kind: keyword ?? 'ident', value: word, text: word, position });
      i = j;
      continue;
    }
    const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
    if (isDigit(c) || ((c === 45 || c === 46) && (isDigit(next) || (c === 45 && next === 46 && isDigit(i + 2 < n ? text.charCodeAt(i + 2) : -1))))) {
      // number: -?digits[.digits][e[+-]digits] or -?.digits
      let j = i;
      if (text.charCodeAt(j) === 45) j++;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      if (j < n && text.charCodeAt(j) === 46) {
        j++;
        while (j < n && isDigit(text.charCodeAt(j))) j++;
      }
      if (j < n && (text.charCodeAt(j) === 101 || text.charCodeAt(j) === 69)) {
        let k = j + 1;
        if (k < n && (text.charCodeAt(k) === 43 || text.charCodeAt(k) === 45)) k++;
        if (k >= n || !isDigit(text.charCodeAt(k))) throw syntaxError(k + 1, 'expected digits in the exponent of a number');
        while (k < n && isDigit(text.charCodeAt(k))) k++;
        j = k;
      }
      if (j < n && isIdentPart(text.charCodeAt(j))) {
        throw syntaxError(j + 1, `unexpected "${text[j]}" after a number`);
      }
      const literal = text.slice(i, j);
      tokens.push({ kind: 'number', value: literal, text: literal, position });
      i = j;
      continue;
    }
    if (c === 34 || c === 39) {
      const quote = text[i];
      let value = '';
      let j = i + 1;
      let closed = false;
      while (j < n) {
        const ch = text[j];
        if (ch === quote) { closed = true; j++; break; }
        if (ch === '\\') {
          if (j + 1 >= n) break;
          const escape = text[j + 1];
          if (escape === 'u') {
            const hex = text.slice(j + 2, j + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw syntaxError(j + 1, 'invalid \\u escape: expected 4 hex digits');
            value += String.fromCharCode(parseInt(hex, 16));
            j += 6;
            continue;
          }
          const replacement = ESCAPES[escape];
          if (replacement === undefined) throw syntaxError(j + 1, `invalid escape "\\${escape}" in a string`);
          value += replacement;
          j += 2;
          continue;
        }
        value += ch;
        j++;
      }
      if (!closed) throw syntaxError(position, 'unterminated string');
      tokens.push({ kind: 'string', value, text: text.slice(i, j), position });
      i = j;
      continue;
    }
    // operators and punctuation
    const two = text.slice(i, i + 2);
    let op: string | null = null;
    let length = 2;
    switch (two) {
      case '==': op = '=='; break;
      case '!=': case '<>': op = '!='; break;
      case '<=': op = '<='; break;
      case '>=': op = '>='; break;
      case '&&': tokens.push({ kind: 'and', value: two, text: two, position }); i += 2; continue;
      case '||': tokens.push({ kind: 'or', value: two, text: two, position }); i += 2; continue;
      default:
        length = 1;
        switch (text[i]) {
          case '=': op = '=='; break;
          case '<': op = '<'; break;
          case '>': op = '>'; break;
          case '!': tokens.push({ kind: 'not', value: '!', text: '!', position }); i++; continue;
          case '(': case ')': tokens.push({ kind: text[i] as '(' | ')', value: text[i], text: text[i], position }); i++; continue;
          default: break;
        }
    }
    if (op === null) {
      if (text[i] === '&' || text[i] === '|') throw syntaxError(position, `unexpected "${text[i]}"; did you mean "${text[i]}${text[i]}"?`);
      throw syntaxError(position, `unexpected character "${text[i]}"`);
    }
    tokens.push({ kind: 'op', value: op, text: text.slice(i, i + length), position });
    i += length;
  }
  tokens.push({ kind: 'end', value: '', text: '', position: n + 1 });
  return tokens;
}

function describeToken(token: Token): string {
  return token.kind === 'end' ? 'the end of the filter' : `"${token.text}"`;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token { return this.tokens[this.index]; }
  private take(): Token { return this.tokens[this.index++]; }

  parse(): FilterNode {
    if (this.peek().kind === 'end') throw syntaxError(1, 'the filter is empty');
    const node = this.parseOr();
    const rest = this.peek();
    if (rest.kind !== 'end') {
      throw syntaxError(rest.position, rest.kind === ')'
        ? 'unmatched ")"'
        : `expected "&&", "||" or the end of the filter, found ${describeToken(rest)}`);
    }
    return node;
  }

  private parseOr(): FilterNode {
    const first = this.parseAnd();
    if (this.peek().kind !== 'or') return first;
    const operands = [first];
    while (this.peek().kind === 'or') {
      this.take();
      operands.push(this.parseAnd());
    }
    return { kind: 'or', operands, position: first.position };
  }

  private parseAnd(): FilterNode {
    const first = this.parseUnary();
    if (this.peek().kind !== 'and') return first;
    const operands = [first];
    while (this.peek().kind === 'and') {
      this.take();
      operands.push(this.parseUnary());
    }
    return { kind: 'and', operands, position: first.position };
  }

  private enter(token: Token): void {
    if (++this.depth > MAX_DEPTH) throw syntaxError(token.position, `the filter is nested more than ${MAX_DEPTH} levels deep`);
  }

  private parseUnary(): FilterNode {
    const token = this.peek();
    if (token.kind === 'not') {
      this.take();
      this.enter(token);
      const operand = this.parseUnary();
      this.depth--;
      return { kind: 'not', operand, position: token.position };
    }
    return this.parsePrimary();
  }

  private parsePrimary(): FilterNode {
    const token = this.peek();
    if (token.kind === '(') {
      this.take();
      this.enter(token);
      const inner = this.parseOr();
      this.depth--;
      const close = this.peek();
      if (close.kind !== ')') throw syntaxError(close.position, `expected ")" to close the "(" at position ${token.position}, found ${describeToken(close)}`);
      this.take();
      return inner;
    }
    const left = this.parseOperand();
    const opToken = this.peek();
    if (opToken.kind !== 'op') return { kind: 'truth', operand: left, position: left.position };
    this.take();
    const right = this.parseOperand();
    return { kind: 'compare', op: opToken.value as CompareOp, left, right, position: opToken.position };
  }

  private parseOperand(): Operand {
    const token = this.take();
    switch (token.kind) {
      case 'ident':
        return { kind: 'column', name: token.value.toLowerCase(), text: token.value, position: token.position };
      case 'string':
        return { kind: 'literal', type: 'string', value: token.value, text: token.text, position: token.position };
      case 'number':
        return { kind: 'literal', type: 'number', value: Number(token.value), text: token.text, position: token.position };
      case 'true': case 'false':
        return { kind: 'literal', type: 'boolean', value: token.kind === 'true', text: token.text, position: token.position };
      case 'null':
        return { kind: 'literal', type: 'null', value: null, text: token.text, position: token.position };
      default:
        throw syntaxError(token.position, `expected a column name or a value, found ${describeToken(token)}`);
    }
  }
}

/** Parses filter text into an AST. Throws FILTER_SYNTAX {position, reason}. */
export function parseFilter(text: string): FilterNode {
  if (typeof text !== 'string') throw syntaxError(1, 'the filter must be a string');
  return new Parser(tokenize(text)).parse();
}
