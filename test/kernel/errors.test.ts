import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS, EngineError, toEngineError } from '../../kernel/errors';

const ROOT = join(__dirname, '..', '..', '..');

describe('kernel/errors', () => {
  it('gives every error a unique numeric code', () => {
    const codes = Object.values(ERRORS).map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length);
  });

  it('uses the codes the established product fixes (docs/errors.md)', () => {
    const expected: Record<string, number> = {
      INVALID_TOKEN: 12031, BAD_CREDENTIALS: 12033, MISSING_PARAMETER: 12025, INVALID_PARAMETER: 12012,
      UNKNOWN_ACTION: 14701, NOT_AUTHORIZED: 12030, DATABASE_NOT_FOUND: 4094, TABLE_NOT_FOUND: 4023,
      TABLE_EXISTS: 4022, INDEX_NOT_FOUND: 4045, INDEX_EXISTS: 4051, COLUMN_NOT_FOUND: 4014, DUPLICATE_KEY: 2,
      RECORD_NOT_FOUND: 101, FILTER_SYNTAX: 4072, CONTENT_TOO_LARGE: 12028, MQ_SESSION_NOT_FOUND: 14237,
      INVALID_TOPIC: 14243, CLIENT_NAME_IN_USE: 14221,
    };
    for (const [id, code] of Object.entries(expected)) assert.equal(ERRORS[id as keyof typeof ERRORS].code, code, id);
  });

  it('lists every error in docs/errors.md with its code and status', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    for (const [id, definition] of Object.entries(ERRORS)) {
      const row = doc.split('\n').find((line) => line.includes(`ENGINE_ERR_${id} `) || line.includes(`ENGINE_ERR_${id}\``));
      assert.ok(row, `docs/errors.md has no row for ENGINE_ERR_${id}`);
      assert.match(row, new RegExp(`\\|\\s*${definition.code}\\s*\\|\\s*${definition.status}\\s*\\|`), `row of ${id} shows code ${definition.code} and status ${definition.status}`);
    }
  });

  it('fills message templates from details and keeps the symbolic name', () => {
    const error = new EngineError('TABLE_NOT_FOUND', { table: 'orders', database: 'main' });
    assert.equal(error.message, 'table "orders" does not exist in database "main"');
    assert.equal(error.code, 4023);
    assert.equal(error.status, 404);
    assert.equal(error.errorName, 'ENGINE_ERR_TABLE_NOT_FOUND');
  });

  it('wraps foreign errors as INTERNAL with the cause kept', () => {
    const cause = new TypeError('boom');
    const wrapped = toEngineError(cause);
    assert.equal(wrapped.id, 'INTERNAL');
    assert.equal(wrapped.status, 500);
    assert.equal(wrapped.cause, cause);
    const same = new EngineError('BAD_CREDENTIALS');
    assert.equal(toEngineError(same), same);
  });
});
