/**
 * How the store reads a commit lmdb-js failed (plugins/storage-lmdb/storage-full.ts): a failure
 * for want of space (lmdb-js's "Commit failed" whose `commitError` carries errno 28 ENOSPC, 122
 * EDQUOT or MDB_MAP_FULL) becomes STORAGE_FULL, logged once until a durable commit says writes
 * resume; any other failure is left as it is. (The real device filling up is test/ops/full-disk.)
 */
import assert from 'node:assert/strict';
import { EngineError } from '../../kernel/errors';
import { StorageFullState } from '../../plugins/storage-lmdb/storage-full';

/** An error shaped as lmdb-js rejects a failed commit with. */
function commitFailure(cause: Error & { code?: unknown }): Error {
  const error = new Error('Commit failed (see commitError for details)') as Error & { commitError: Promise<never> };
  error.commitError = Promise.reject(cause);
  error.commitError.catch(() => undefined);
  return error;
}

function errno(message: string, code: number): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

describe('storage: a commit failed for want of space', () => {
  it('becomes STORAGE_FULL for ENOSPC, EDQUOT and MDB_MAP_FULL, logged once until a commit succeeds again', async () => {
    const lines: Array<[string, string]> = [];
    const state = new StorageFullState({ warn: (_d, m) => lines.push(['warn', m]), info: (_d, m) => lines.push(['info', m]) });
    for (const cause of [
      errno('No space left on device: Attempting to write page', 28),
      errno('Disk quota exceeded', 122),
      errno('MDB_MAP_FULL: Environment mapsize limit reached', -30792),
    ]) {
      await assert.rejects(state.failed(commitFailure(cause)), (error: unknown) => {
        assert.ok(error instanceof EngineError);
        assert.equal(error.id, 'STORAGE_FULL');
        assert.equal(error.status, 507);
        assert.equal(error.code, 12050);
        return true;
      });
    }
    assert.equal(state.isFull, true);
    assert.deepEqual(lines.map(([level]) => level), ['warn'], 'three failures, one line');
    state.durable();
    state.durable();
    assert.equal(state.isFull, false);
    assert.deepEqual(lines.map(([level]) => level), ['warn', 'info'], 'writes resuming is said once');
  });

  it('leaves any other failure as it is', async () => {
    const state = new StorageFullState(undefined);
    const other = commitFailure(errno('Input/output error', 5));
    await assert.rejects(state.failed(other), (error: unknown) => error === other);
    const plain = new Error('something else');
    await assert.rejects(state.failed(plain), (error: unknown) => error === plain);
    assert.equal(state.isFull, false);
  });
});
