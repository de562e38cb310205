/**
 * What a new database may be called: 1 to 64 letters, digits, `_` or `-`, starting with a letter,
 * a digit or `_`. A database name is a part of resource patterns (`database:<db>`,
 * `table:<db>/<table>`, docs/roles.md) and of URLs and the explorer's pages: a `/`, `*`, `..`, `<`
 * or a control character would make a grant on one name cover another, or reach a page as markup.
 * Databases an older release created under other names keep working (listed, read, deleted); only
 * new ones are held to this.
 */
import { EngineError } from '../../kernel/errors';

const DATABASE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

/** Throws INVALID_PARAMETER (12012) naming `database` unless `name` may name a new database. */
export function checkNewDatabaseName(name: string): void {
  if (!DATABASE_NAME.test(name)) {
    throw new EngineError('INVALID_PARAMETER', {
      param: 'database',
      reason: 'a database name is 1 to 64 letters, digits, "_" or "-", not starting with "-"',
    });
  }
  if (name.toLowerCase() === '__proto__') throw new EngineError('INVALID_PARAMETER', { param: 'database', reason: '"__proto__" is reserved' });
}
