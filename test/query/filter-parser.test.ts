import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import { parseFilter, type FilterNode, type Operand } from '../../lib/query/filter-parser';
import { parsedFilter } from '../../lib/query/parsed-filters';

/** A compact rendering of the AST: (and ...), (or ...), (not x), (op a b), (truth a). */
function show(node: FilterNode): string {
  switch (node.kind) {
    case 'and': case 'or': return `(${node.kind} ${node.operands.map(show).join(' ')})`;
    case 'not': return `(not ${show(node.operand)})`;
    case 'truth': return `(truth ${operand(node.operand)})`;
    default: return `(${node.op} ${operand(node.left)} ${operand(node.right)})`;
  }
}
function operand(o: Operand): string {
  if (o.kind === 'column') return o.name;
  if (o.type === 'string') return JSON.stringify(o.value);
  return String(o.value);
}

const VALID: Array<[string, string]> = [
  ['a == 1', '(== a 1)'],
  ['a = 1', '(== a 1)'],
  ['a != 1', '(!= a 1)'],
  ['a <> 1', '(!= a 1)'],
  ['a < 1', '(< a 1)'],
  ['a <= 1', '(<= a 1)'],
  ['a > 1', '(> a 1)'],
  ['a >= 1', '(>= a 1)'],
  ['a>=-1.5e3', '(>= a -1500)'],
  ['a == .5', '(== a 0.5)'],
  ['a == -.5', '(== a -0.5)'],
  ['a == 1E+2', '(== a 100)'],
  ['Name == "Bob"', '(== name "Bob")'],
  ["name == 'O\\'Brien'", '(== name "O\'Brien")'],
  ['name == "say \\"hi\\"\\n\\u0041"', '(== name "say \\"hi\\"\\nA")'],
  ['1 < a', '(< 1 a)'],
  ['a == b', '(== a b)'],
  ['a == null', '(== a null)'],
  ['a != NULL', '(!= a null)'],
  ['flag == TRUE', '(== flag true)'],
  ['flag == false', '(== flag false)'],
  ['flag', '(truth flag)'],
  ['!flag', '(not (truth flag))'],
  ['not flag', '(not (truth flag))'],
  ['true', '(truth true)'],
  ['a == 1 && b == 2', '(and (== a 1) (== b 2))'],
  ['a == 1 and b == 2 AND c == 3', '(and (== a 1) (== b 2) (== c 3))'],
  ['a == 1 || b == 2', '(or (== a 1) (== b 2))'],
  ['a == 1 or b == 2 && c == 3', '(or (== a 1) (and (== b 2) (== c 3)))'],
  ['(a == 1 or b == 2) && c == 3', '(and (or (== a 1) (== b 2)) (== c 3))'],
  ['!(a == 1) || not b < 2', '(or (not (== a 1)) (not (< b 2)))'],
  ['!!a', '(not (not (truth a)))'],
  ['((((a == 1))))', '(== a 1)'],
  ['  a\t==\n1  ', '(== a 1)'],
  ['_x1 == 0', '(== _x1 0)'],
  ['android == 1', '(== android 1)'], // keyword prefix is still an identifier
  ['notes != "x"', '(!= notes "x")'],
];

const INVALID: Array<[string, number, RegExp]> = [
  ['', 1, /empty/],
  ['   ', 1, /empty/],
  ['a ==', 5, /expected a column name or a value, found the end of the filter/],
  ['== 1', 1, /expected a column name or a value, found "=="/],
  ['a == 1 &&', 10, /expected a column name or a value/],
  ['a == 1 b == 2', 8, /expected "&&", "\|\|" or the end of the filter, found "b"/],
  ['(a == 1', 8, /expected "\)" to close the "\(" at position 1/],
  ['a == 1)', 7, /unmatched "\)"/],
  ['a == "abc', 6, /unterminated string/],
  ["a == 'abc\\", 6, /unterminated string/],
  ['a == "\\q"', 7, /invalid escape "\\q"/],
  ['a == "\\u12"', 7, /invalid \\u escape/],
  ['a & b', 3, /unexpected "&"; did you mean "&&"\?/],
  ['a | b', 3, /did you mean "\|\|"/],
  ['a == 1 # x', 8, /unexpected character "#"/],
  ['a == 1e', 8, /exponent/],
  ['a == 12abc', 8, /unexpected "a" after a number/],
  ['a == == 1', 6, /found "=="/],
  ['a < b < c', 7, /expected "&&"/],
  ['()', 2, /found "\)"/],
  ['a == 1 and', 11, /found the end of the filter/],
  ['not', 4, /found the end of the filter/],
  ["name == 'it''s'", 13, /expected "&&"/],
  ['a = 1 or or b = 2', 10, /found "or"/],
  ['a = 1.2.3', 8, /expected "&&"/],
];

describe('query/filter-parser', () => {
  describe('valid filters', () => {
    for (const [text, expected] of VALID) {
      it(JSON.stringify(text), () => assert.equal(show(parseFilter(text)), expected));
    }
  });

  describe('invalid filters', () => {
    for (const [text, position, pattern] of INVALID) {
      it(`${JSON.stringify(text)} at ${position}`, () => {
        assert.throws(() => parseFilter(text), (error: unknown) => {
          assert.ok(error instanceof EngineError, String(error));
          assert.equal(error.id, 'FILTER_SYNTAX');
          assert.equal(error.details.position, position);
          assert.match(String(error.details.reason), pattern);
          assert.match(error.message, new RegExp(`^filter error at position ${position}: `));
          return true;
        });
      });
    }
  });

  it('records 1-based positions of columns, literals and operators', () => {
    const node = parseFilter('x == "a" && yy >= 10');
    assert.equal(node.kind, 'and');
    if (node.kind !== 'and') return;
    const [first, second] = node.operands;
    assert.ok(first.kind === 'compare' && second.kind === 'compare');
    if (first.kind !== 'compare' || second.kind !== 'compare') return;
    assert.equal(first.left.position, 1);
    assert.equal(first.position, 3);
    assert.equal(first.right.position, 6);
    assert.equal(second.left.position, 13);
    assert.equal(second.position, 16);
    assert.equal(second.right.position, 19);
    assert.deepEqual(second.right, { kind: 'literal', type: 'number', value: 10, text: '10', position: 19 });
  });

  it('keeps the text of number literals for exact big integers', () => {
    const node = parseFilter('a == 9223372036854775807');
    assert.ok(node.kind === 'compare' && node.right.kind === 'literal');
    if (node.kind === 'compare' && node.right.kind === 'literal') assert.equal(node.right.text, '9223372036854775807');
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    assert.throws(() => parseFilter(`${'('.repeat(500)}a == 1${')'.repeat(500)}`), /nested more than/);
    assert.throws(() => parseFilter(`${'!'.repeat(500)}a`), /nested more than/);
  });

  it('rejects a non-string filter', () => {
    assert.throws(() => parseFilter(42 as unknown as string), /must be a string/);
  });
});

describe('parsedFilter (parsed trees shared by text)', () => {
  it('returns the same frozen tree for the same text, so its compiled predicate is reused too', () => {
    const a = parsedFilter("city == 'Oslo' && age > 30");
    assert.equal(parsedFilter("city == 'Oslo' && age > 30"), a);
    assert.ok(Object.isFrozen(a));
    assert.notEqual(parsedFilter("city == 'Rome' && age > 30"), a);
  });

  it('keeps a bounded number of texts, dropping the least recently used', () => {
    const first = parsedFilter('n == 0');
    const kept = parsedFilter('n == 1');
    for (let i = 2; i < 300; i++) {
      parsedFilter(`n == ${i}`);
      if (i % 100 === 0) assert.equal(parsedFilter('n == 1'), kept, 'recently used stays');
    }
    assert.notEqual(parsedFilter('n == 0'), first, 'evicted: parsed anew');
    assert.deepEqual(parsedFilter('n == 0'), first);
  });

  it('does not keep long texts (memory stays bounded by count and length)', () => {
    const long = `${'n == 1 || '.repeat(300)}n == 2`;
    assert.notEqual(parsedFilter(long), parsedFilter(long));
    assert.deepEqual(parsedFilter(long), parsedFilter(long));
  });

  it('caches no error: a bad filter fails every time', () => {
    assert.throws(() => parsedFilter('n == '), EngineError);
    assert.throws(() => parsedFilter('n == '), EngineError);
  });
});
