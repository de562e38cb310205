/**
 * The one rewrite before SQLite: `SELECT TOP n [SKIP m]` as `LIMIT n [OFFSET m]` at the end of
 * that SELECT, on tokens (strings, quoted names and comments are never read as keywords).
 */
import assert from 'node:assert/strict';
import { rewriteTopSkip } from '../../plugins/sql/top-skip';
import { leadingWords } from '../../plugins/sql/sql-tokens';

describe('sql: TOP/SKIP rewrite', function () {
  const cases: Array<[string, string, string]> = [
    ['TOP n', 'SELECT TOP 5 * FROM t', 'SELECT * FROM t LIMIT 5'],
    ['TOP n SKIP m with ORDER BY', 'SELECT TOP 2 SKIP 10 a FROM t ORDER BY a', 'SELECT a FROM t ORDER BY a LIMIT 2 OFFSET 10'],
    ['SKIP alone', 'select skip 3 a from t', 'select a from t LIMIT -1 OFFSET 3'],
    ['DISTINCT before TOP', 'SELECT DISTINCT TOP 1 a FROM t', 'SELECT DISTINCT a FROM t LIMIT 1'],
    ['TOP (n)', 'SELECT TOP (4) a FROM t', 'SELECT a FROM t LIMIT 4'],
    ['before a final semicolon and spaces', 'SELECT TOP 1 a FROM t ;  ', 'SELECT a FROM t LIMIT 1 ;  '],
    ['in a subquery, before its closing parenthesis', 'SELECT * FROM (SELECT TOP 2 a FROM t ORDER BY a) x', 'SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 2) x'],
    ['outer and inner', 'SELECT TOP 1 * FROM (SELECT TOP 2 a FROM t)', 'SELECT * FROM (SELECT a FROM t LIMIT 2) LIMIT 1'],
    ['a TOP inside a string stays', "SELECT 'SELECT TOP 5' AS s FROM t", "SELECT 'SELECT TOP 5' AS s FROM t"],
    ['a TOP in a comment stays', 'SELECT /* TOP 5 */ a FROM t -- SELECT TOP 1\n', 'SELECT /* TOP 5 */ a FROM t -- SELECT TOP 1\n'],
    ['a column named top stays', 'SELECT top FROM t', 'SELECT top FROM t'],
    ['a quoted name stays', 'SELECT "TOP" FROM t', 'SELECT "TOP" FROM t'],
    ['TOP ? SKIP ?: the placeholders numbered in text order', 'SELECT TOP ? SKIP ? a FROM t WHERE b = ?', 'SELECT a FROM t WHERE b = ?3 LIMIT ?1 OFFSET ?2'],
    ['TOP ? SKIP ? with the SELECT\'s own LIMIT ? OFFSET ? (the SQLAlchemy dialect): the clause goes', 'SELECT TOP ? SKIP ? a FROM t WHERE b = ?\n LIMIT ? OFFSET ?', 'SELECT a FROM t WHERE b = ?\n LIMIT ? OFFSET ?'],
    ['TOP -1 SKIP ? with its own LIMIT -1 OFFSET ? (the dialect\'s OFFSET alone): the clause goes', 'SELECT TOP -1 SKIP ? a FROM t ORDER BY a\n LIMIT -1 OFFSET ?', 'SELECT a FROM t ORDER BY a\n LIMIT -1 OFFSET ?'],
    ['TOP n SKIP m with the same LIMIT n OFFSET m (the dialect with literal values): the clause goes', 'SELECT TOP 3 SKIP 5 a FROM t LIMIT 3 OFFSET 5', 'SELECT a FROM t LIMIT 3 OFFSET 5'],
    ['TOP -1 SKIP m: no limit', 'SELECT TOP -1 SKIP 4 a FROM t', 'SELECT a FROM t LIMIT -1 OFFSET 4'],
    ['TOP n beside a different LIMIT is left for SQLite to refuse', 'SELECT TOP 2 a FROM t LIMIT 3', 'SELECT a FROM t LIMIT 3 LIMIT 2'],
    ['TOP ? with a named parameter is left to SQLite (a move would renumber the name)', 'SELECT * FROM (SELECT TOP ? a FROM t WHERE b = :b) WHERE a > ?', 'SELECT * FROM (SELECT TOP ? a FROM t WHERE b = :b) WHERE a > ?'],
  ];
  for (const [name, given, expected] of cases) {
    it(`rewrites ${name}`, function () {
      assert.equal(rewriteTopSkip(given), expected);
    });
  }

  it('reads leading words past comments and spaces', function () {
    assert.deepEqual(leadingWords('  /* x */ create -- y\n unique INDEX i ON t(a)', 3), ['CREATE', 'UNIQUE', 'INDEX']);
  });
});
