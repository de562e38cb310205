/**
 * The parsed form of a filter, as the storage port receives it (`scan` / `openCursor` options).
 * The filter language and its parser live in lib/query/filter-parser.ts; a store only evaluates
 * this tree (lib/query/filter-eval.ts compiles it to a row predicate).
 */
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

export interface ColumnOperand {
  kind: 'column';
  /** Lower-case column name. */
  name: string;
  /** The identifier as written. */
  text: string;
  position: number;
}

export interface LiteralOperand {
  kind: 'literal';
  type: 'string' | 'number' | 'boolean' | 'null';
  value: string | number | boolean | null;
  /** Source text of the literal (number literals keep their digits for exact bigint comparison). */
  text: string;
  position: number;
}

export type Operand = ColumnOperand | LiteralOperand;

export type FilterNode =
  | { kind: 'or'; operands: FilterNode[]; position: number }
  | { kind: 'and'; operands: FilterNode[]; position: number }
  | { kind: 'not'; operand: FilterNode; position: number }
  | { kind: 'compare'; op: CompareOp; left: Operand; right: Operand; position: number }
  | { kind: 'truth'; operand: Operand; position: number };
