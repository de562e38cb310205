/**
 * Compiles a filter AST against a table into a row predicate.
 *
 * Comparisons happen in the column's type; literals are converted once, at compile time.
 * Null semantics: `col == null` / `col != null` test for null; any ordered comparison involving
 * null is false; a null value is `!=` every non-null literal (`!=` is the negation of `==`).
 * Values of different kinds (a variant holding a string compared with a number) are not equal and
 * not ordered. See docs/queries.md.
 */
import { EngineError } from '../../kernel/errors';
import type { CanonicalValue, ColumnDefinition, ColumnType, Row, TableDefinition, VariantValue } from '../../kernel/storage/types';
import { parseDate, parseTime, parseTimestamp } from '../values/timestamps';
import { jsonTextDepthExceeds } from '../values/json-depth';
import type { ColumnOperand, CompareOp, FilterNode, LiteralOperand, Operand } from './filter-parser';

export type RowPredicate = (row: Row) => boolean;

/** Compares two non-null values: negative, 0, positive, or NaN when they cannot be compared. */
type Comparator = (a: any, b: any) => number;

type Family = 'numeric' | 'bit' | 'string' | 'date' | 'time' | 'timestamp' | 'binary' | 'json' | 'variant';

const FAMILY: Readonly<Record<ColumnType, Family>> = {
  bit: 'bit',
  tinyint: 'numeric', smallint: 'numeric', integer: 'numeric', bigint: 'numeric',
  real: 'numeric', float: 'numeric', money: 'numeric', number: 'numeric',
  date: 'date', time: 'time', timestamp: 'timestamp',
  char: 'string', varchar: 'string', lvarchar: 'string',
  binary: 'binary', varbinary: 'binary', lvarbinary: 'binary',
  json: 'json', variant: 'variant',
};

function filterError(position: number, reason: string): EngineError {
  return new EngineError('FILTER_SYNTAX', { position, reason });
}

// ---------------------------------------------------------------------------------------------
// Comparators

const compareNumbers: Comparator = (a, b) => (a < b ? -1 : a > b ? 1 : a == b ? 0 : NaN); // eslint-disable-line eqeqeq

/** Ordinary string order (ASCII for canonical dates). */
const compareAscii: Comparator = (a, b) => (a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN);

/** Code point order, which is the UTF-8 byte order index keys use (UTF-16 order differs only above U+D7FF). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates (D800-DFFF, code points above FFFF) sort after E000-FFFF in code point order.
      if (x >= 0xd800 && y >= 0xd800) {
        const sx = x <= 0xdfff;
        const sy = y <= 0xdfff;
        if (sx !== sy) return sx ? 1 : -1;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

const compareStringValues: Comparator = (a, b) => (typeof a === 'string' ? compareStrings(a, b) : NaN);

const compareBits: Comparator = (a, b) => {
  const x = a === true || a === 1;
  const y = b === true || b === 1;
  return x === y ? 0 : x ? 1 : -1;
};

const compareBytes: Comparator = (a, b) => (a instanceof Uint8Array ? Buffer.compare(a, b) : NaN);

/** A literal on the JSON side: compares like with like (numbers, strings, booleans); objects/arrays by JSON text for equality. */
function compareJsonValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return compareNumbers(a, b);
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return compareBits(a, b);
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    return JSON.stringify(a) === JSON.stringify(b) ? 0 : NaN;
  }
  return NaN;
}

const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** A literal prepared for comparison with variants. */
interface VariantLiteral {
  value: string | number | boolean;
  /** The literal as JSON text (for equality with json variants holding objects etc.). */
  json: string;
  /** For string literals that are valid hex: the bytes (to compare with binary variants). */
  bytes: Buffer | null;
}

function compareVariant(variant: VariantValue, literal: VariantLiteral): number {
  const lit = literal.value;
  switch (variant.type) {
    case 'string':
      return typeof lit === 'string' ? compareStrings(variant.value, lit) : NaN;
    case 'boolean':
      return typeof lit === 'boolean' ? compareBits(variant.value, lit) : NaN;
    case 'binary':
      return literal.bytes !== null ? Buffer.compare(variant.value, literal.bytes) : NaN;
    case 'json': {
      const text = variant.value;
      if (typeof lit === 'number') {
        return NUMBER_TEXT.test(text) ? compareNumbers(Number(text), lit) : NaN;
      }
      if (typeof lit === 'string') {
        if (text.charCodeAt(0) !== 34) return NaN;
        return compareStrings(JSON.parse(text) as string, lit);
      }
      if (typeof lit === 'boolean') {
        return text === 'true' ? compareBits(true, lit) : text === 'false' ? compareBits(false, lit) : NaN;
      }
      return text === literal.json ? 0 : NaN;
    }
    default:
      return NaN;
  }
}

/** Column-to-column comparison of two variants: same type only. */
function compareVariants(a: VariantValue, b: VariantValue): number {
  if (a.type !== b.type) return NaN;
  switch (a.type) {
    case 'string': return compareStrings(a.value, b.value as string);
    case 'boolean': return compareBits(a.value, b.value);
    case 'binary': return Buffer.compare(a.value, b.value as Uint8Array);
    default: {
      // JSON too deep to compare as values (JSON.stringify would run out of stack) is compared as text.
      if (jsonTextDepthExceeds(a.value) || jsonTextDepthExceeds(b.value as string)) return a.value === b.value ? 0 : NaN;
      const x = JSON.parse(a.value) as unknown;
      const y = JSON.parse(b.value as string) as unknown;
      return compareJsonValues(x, y);
    }
  }
}

function comparatorFor(family: Family): Comparator {
  switch (family) {
    case 'numeric': return compareNumbers;
    case 'bit': return compareBits;
    case 'string': return compareStringValues;
    case 'date': case 'time': case 'timestamp': return compareAscii;
    case 'binary': return compareBytes;
    case 'json': return compareJsonValues;
    default: return compareVariants;
  }
}

// ---------------------------------------------------------------------------------------------
// Literal conversion (compile time)

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

function literalNumber(literal: LiteralOperand): number | bigint | null {
  if (literal.type === 'number') {
    const value = literal.value as number;
    if (Number.isInteger(value) && !Number.isSafeInteger(value) && /^-?\d+$/.test(literal.text)) return BigInt(literal.text);
    return value;
  }
  if (literal.type === 'string') {
    const text = (literal.value as string).trim();
    if (/^[+-]?\d+$/.test(text)) {
      const big = BigInt(text);
      return Number.isSafeInteger(Number(big)) ? Number(big) : big;
    }
    if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) return Number(text);
  }
  return null;
}

/** Converts a non-null literal to a canonical value of `column`'s family. */
function convertLiteral(column: ColumnDefinition, literal: LiteralOperand): unknown {
  const fail = (expected: string): never => {
    throw filterError(literal.position, `column "${column.name}" is ${column.type}: expected ${expected}, not ${literal.text}`);
  };
  switch (FAMILY[column.type]) {
    case 'numeric': {
      const value = literalNumber(literal);
      return value === null ? fail('a number') : value;
    }
    case 'bit':
      if (literal.type === 'boolean') return literal.value;
      if (literal.value === 1 || literal.value === '1' || literal.value === 'true') return true;
      if (literal.value === 0 || literal.value === '0' || literal.value === 'false') return false;
      return fail('true or false');
    case 'date': {
      const value = literal.type === 'string' ? parseDate(literal.value as string) : null;
      return value ?? fail('a date "MM/DD/CCYY" or "CCYY-MM-DD"');
    }
    case 'time': {
      const value = literal.type === 'string' ? parseTime(literal.value as string) : null;
      return value ?? fail('a time "hh:mm:ss.ttt"');
    }
    case 'timestamp': {
      const value = literal.type === 'string' ? parseTimestamp(literal.value as string) : null;
      return value ?? fail('a timestamp "MM/DD/CCYY hh:mm:ss.ttt" or "CCYY-MM-DDThh:mm:ss.ttt"');
    }
    case 'string':
      // Numbers and booleans compare as the text written.
      return literal.type === 'string' ? literal.value : literal.text;
    case 'binary': {
      if (literal.type !== 'string' || !HEX.test(literal.value as string)) return fail('a hex string');
      const bytes = Buffer.from(literal.value as string, 'hex');
      if (column.type === 'binary' && column.length !== null && bytes.length < column.length) {
        const padded = Buffer.alloc(column.length); // stored binary values are padded with 0x00
        bytes.copy(padded);
        return padded;
      }
      return bytes;
    }
    case 'json':
      return literal.value;
    default: {
      const value = literal.value as string | number | boolean;
      const prepared: VariantLiteral = {
        value,
        json: JSON.stringify(value),
        bytes: typeof value === 'string' && HEX.test(value) ? Buffer.from(value, 'hex') : null,
      };
      return prepared;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Compilation

function flip(op: CompareOp): CompareOp {
  switch (op) {
    case '<': return '>';
    case '<=': return '>=';
    case '>': return '<';
    case '>=': return '<=';
    default: return op;
  }
}

function testFor(op: CompareOp): (c: number) => boolean {
  switch (op) {
    case '==': return (c) => c === 0;
    case '!=': return (c) => c !== 0;
    case '<': return (c) => c < 0;
    case '<=': return (c) => c <= 0;
    case '>': return (c) => c > 0;
    default: return (c) => c >= 0;
  }
}

const ALWAYS: RowPredicate = () => true;
const NEVER: RowPredicate = () => false;

class Compiler {
  private readonly columns = new Map<string, ColumnDefinition>();

  constructor(table: TableDefinition) {
    for (const column of table.columns) this.columns.set(column.name, column);
    // REST results call the record ID `_id`.
    if (!this.columns.has('_id') && this.columns.has('id')) this.columns.set('_id', this.columns.get('id')!);
  }

  private column(operand: ColumnOperand): ColumnDefinition {
    const column = this.columns.get(operand.name);
    if (column === undefined) throw filterError(operand.position, `unknown column "${operand.text}"`);
    return column;
  }

  compile(node: FilterNode): RowPredicate {
    switch (node.kind) {
      case 'and': return this.compileAnd(node.operands.map((operand) => this.compile(operand)));
      case 'or': return this.compileOr(node.operands.map((operand) => this.compile(operand)));
      case 'not': {
        const inner = this.compile(node.operand);
        return (row) => !inner(row);
      }
      case 'truth': return this.compileTruth(node.operand);
      default: return this.compileCompare(node.op, node.left, node.right, node.position);
    }
  }

  private compileAnd(parts: RowPredicate[]): RowPredicate {
    if (parts.length === 2) {
      const [a, b] = parts;
      return (row) => a(row) && b(row);
    }
    return (row) => {
      for (let i = 0; i < parts.length; i++) if (!parts[i](row)) return false;
      return true;
    };
  }

  private compileOr(parts: RowPredicate[]): RowPredicate {
    if (parts.length === 2) {
      const [a, b] = parts;
      return (row) => a(row) || b(row);
    }
    return (row) => {
      for (let i = 0; i < parts.length; i++) if (parts[i](row)) return true;
      return false;
    };
  }

  private compileTruth(operand: Operand): RowPredicate {
    if (operand.kind === 'literal') {
      if (operand.type === 'boolean') return operand.value ? ALWAYS : NEVER;
      throw filterError(operand.position, `expected a condition, found ${operand.text}`);
    }
    const column = this.column(operand);
    if (column.type !== 'bit') {
      throw filterError(operand.position, `column "${operand.text}" is ${column.type}, not bit: compare it with an operator`);
    }
    const name = column.name;
    return (row) => row[name] === true;
  }

  private compileCompare(op: CompareOp, left: Operand, right: Operand, position: number): RowPredicate {
    if (left.kind === 'literal' && right.kind === 'column') return this.compileCompare(flip(op), right, left, position);
    if (left.kind === 'literal' && right.kind === 'literal') return this.foldLiterals(op, left, right);
    const column = this.column(left as ColumnOperand);
    const name = column.name;
    if (right.kind === 'column') return this.compileColumns(op, column, this.column(right), position);

    // column vs literal
    if (right.type === 'null') {
      if (op === '==') return (row) => row[name] == null; // eslint-disable-line eqeqeq
      if (op === '!=') return (row) => row[name] != null; // eslint-disable-line eqeqeq
      return NEVER;
    }
    const literal = convertLiteral(column, right);
    const family = FAMILY[column.type];
    const compare: Comparator = family === 'variant'
      ? (a: VariantValue, b: VariantLiteral) => compareVariant(a, b)
      : comparatorFor(family);
    switch (op) {
      case '==': return (row) => { const v = row[name]; return v != null && compare(v, literal) === 0; };
      case '!=': return (row) => { const v = row[name]; return v == null || compare(v, literal) !== 0; };
      case '<': return (row) => { const v = row[name]; return v != null && compare(v, literal) < 0; };
      case '<=': return (row) => { const v = row[name]; return v != null && compare(v, literal) <= 0; };
      case '>': return (row) => { const v = row[name]; return v != null && compare(v, literal) > 0; };
      default: return (row) => { const v = row[name]; return v != null && compare(v, literal) >= 0; };
    }
  }

  private compileColumns(op: CompareOp, a: ColumnDefinition, b: ColumnDefinition, position: number): RowPredicate {
    const family = FAMILY[a.type];
    if (family !== FAMILY[b.type]) {
      throw filterError(position, `cannot compare column "${a.name}" (${a.type}) with column "${b.name}" (${b.type})`);
    }
    const compare = comparatorFor(family);
    const test = testFor(op);
    const x = a.name;
    const y = b.name;
    return (row) => {
      const u = row[x] as CanonicalValue | undefined;
      const v = row[y] as CanonicalValue | undefined;
      const uNull = u === null || u === undefined;
      const vNull = v === null || v === undefined;
      if (uNull || vNull) {
        if (op === '==') return uNull && vNull;
        if (op === '!=') return uNull !== vNull;
        return false;
      }
      return test(compare(u, v));
    };
  }

  private foldLiterals(op: CompareOp, a: LiteralOperand, b: LiteralOperand): RowPredicate {
    const aNull = a.value === null;
    const bNull = b.value === null;
    let result: boolean;
    if (aNull || bNull) result = op === '==' ? aNull && bNull : op === '!=' ? aNull !== bNull : false;
    else result = testFor(op)(compareJsonValues(a.value, b.value));
    return result ? ALWAYS : NEVER;
  }
}

/**
 * A predicate for rows of `table`. Throws FILTER_SYNTAX {position, reason} for an unknown column,
 * a literal that does not fit its column's type, or columns of incomparable types.
 */
// A query's filter is checked by the data command and compiled again by the store for the scan:
// the second compile of the same parsed filter over the same table definition is free.
const compiled = new WeakMap<FilterNode, WeakMap<TableDefinition, RowPredicate>>();

export function compileFilter(node: FilterNode, table: TableDefinition): RowPredicate {
  let byTable = compiled.get(node);
  if (byTable === undefined) compiled.set(node, byTable = new WeakMap());
  let predicate = byTable.get(table);
  if (predicate === undefined) byTable.set(table, predicate = new Compiler(table).compile(node));
  return predicate;
}
