import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import type { IndexDefinition } from '../../kernel/storage/types';
import { boundsOf, segmentPosition } from '../../plugins/rest/find-body';

const index = (fields: IndexDefinition['fields']): IndexDefinition => ({ name: 'i', unique: false, automatic: false, fields });
const ASC = index([{ name: 'age', ascending: true }, { name: 'name', ascending: true }]);
const DESC = index([{ name: 'age', ascending: false }]);
const JSON_SEGMENTS = index([{ name: 'doc', ascending: true, key: 'city', type: 'varchar', size: 10 }, { name: 'doc', ascending: true, key: 'zip', type: 'integer' }]);

function rejects(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof EngineError && error.status === 400 && pattern.test(error.message));
}

describe('rest/find-body', () => {
  it('maps each operator to value bounds', () => {
    const b = (operator: string) => boundsOf({ find: { age: { operator, value: 5 } } }, ASC);
    assert.deepEqual(b('<'), { upper: { values: [5], inclusive: false } });
    assert.deepEqual(b('<='), { upper: { values: [5], inclusive: true } });
    assert.deepEqual(b('='), { lower: { values: [5], inclusive: true }, upper: { values: [5], inclusive: true } });
    assert.deepEqual(b('=='), b('='));
    assert.deepEqual(b('>='), { lower: { values: [5], inclusive: true } });
    assert.deepEqual(b('>'), { lower: { values: [5], inclusive: false } });
    assert.deepEqual(boundsOf({ find: { age: { operator: 'BETWEEN', excludelowervalue: 1, uppervalue: 9 } } }, ASC), {
      lower: { values: [1], inclusive: false }, upper: { values: [9], inclusive: true },
    });
  });

  it('keeps value order on a descending index (the query planner swaps them into key order)', () => {
    assert.deepEqual(boundsOf({ find: { age: { operator: '>=', value: 5 } } }, DESC), { lower: { values: [5], inclusive: true } });
    assert.deepEqual(boundsOf({ advanced_find: { find_record: { operator: '<', fields: { age: 5 } } } }, DESC), { upper: { values: [5], inclusive: false } });
    assert.deepEqual(boundsOf({ advanced_find: { find_set: { length: 2, fields: { age: 5 } } } }, DESC), { prefix: { values: [5], byteLength: 2 } });
  });

  it('builds find_set prefixes and find_record bounds in segment order', () => {
    assert.deepEqual(boundsOf({ advanced_find: { find_set: { length: 6, fields: { name: 'a', age: 1 } } } }, ASC), { prefix: { values: [1, 'a'], byteLength: 6 } });
    assert.deepEqual(boundsOf({ advanced_find: { find_record: { operator: '=', fields: { name: 'a', age: 1 } } } }, ASC), {
      lower: { values: [1, 'a'], inclusive: true }, upper: { values: [1, 'a'], inclusive: true },
    });
  });

  it('names JSON-property segments by key or column.key', () => {
    assert.equal(segmentPosition(JSON_SEGMENTS.fields, 'city'), 0);
    assert.equal(segmentPosition(JSON_SEGMENTS.fields, 'doc.zip'), 1);
    assert.equal(segmentPosition(JSON_SEGMENTS.fields, 'doc'), -1);
    assert.equal(segmentPosition(index([{ name: 'doc', ascending: true, key: 'city' }]).fields, 'DOC'), 0);
  });

  it('rejects what the schema cannot', () => {
    rejects(() => boundsOf({}, ASC), /exactly one/);
    rejects(() => boundsOf({ find: { name: { operator: '>', value: 1 } } }, ASC), /first field/);
    rejects(() => boundsOf({ find: { age: { operator: 'between', lowervalue: 1, excludelowervalue: 2 } } }, ASC), /mutually exclusive/);
    rejects(() => boundsOf({ find: { age: { operator: '<', value: 1, excludeuppervalue: 2 } } }, ASC), /upper bound/);
    rejects(() => boundsOf({ find: { age: { operator: '>' } } }, ASC), /value/);
    rejects(() => boundsOf({ advanced_find: {} }, ASC), /exactly one/);
    rejects(() => boundsOf({ advanced_find: { find_set: { length: 1, fields: { name: 'a' } } } }, ASC), /"age" is missing/);
    rejects(() => boundsOf({ advanced_find: { find_set: { length: 1, fields: { x: 'a' } } } }, ASC), /not a field/);
    rejects(() => boundsOf({ advanced_find: { find_record: { operator: '>', fields: { age: 1 } } } }, ASC), /"name" is missing/);
    rejects(() => boundsOf({ advanced_find: { find_record: { operator: 'between', fields: { age: 1, name: 'a' } } } }, ASC), /operator/);
  });
});
