/** lowerBound (lib/sorted.ts): the one binary search, over numbers and over items' string keys. */
import assert from 'node:assert/strict';
import { lowerBound } from '../../lib/sorted';

describe('lib/sorted: lowerBound', () => {
  it('gives the first index at or after a number, the length when none, 0 for an empty array', () => {
    const seqs = [2, 4, 4, 7];
    assert.deepEqual([1, 2, 3, 4, 5, 7, 8].map((x) => lowerBound(seqs, x)), [0, 0, 1, 1, 3, 3, 4]);
    assert.equal(lowerBound([], 1), 0);
    assert.equal(lowerBound(Float64Array.of(1, 3), 2), 1);
  });

  it('searches items by the key keyOf reads, in string order', () => {
    const topics = [{ topic: 'a/b' }, { topic: 'a/c' }, { topic: 'b' }];
    assert.deepEqual(['', 'a/b', 'a/bb', 'b', 'c'].map((key) => lowerBound(topics, key, (item) => item.topic)), [0, 0, 1, 2, 3]);
  });
});
