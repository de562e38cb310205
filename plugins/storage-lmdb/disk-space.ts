/**
 * The free-space reserve (`storage_min_free_bytes`, docs/operations.md "A full disk and the log's
 * size"). lmdb-js does not survive every write that fails for want of space: a commit of overflow
 * pages (values over ~2 KB) that hits ENOSPC can corrupt the process's heap and end it (seen here
 * on a tmpfs; lmdb-js issue #40). So the store refuses new data with STORAGE_FULL while the data
 * folder's filesystem has less than the reserve free, before LMDB ever meets a full device.
 * Deletes still pass (they let an operator make room and need few pages of the reserve).
 *
 * Cost: a statfs at most every CHECK_MS while there is room (a clock read per write otherwise),
 * and at each refused write while there is not, so writes resume as soon as space returns.
 */
import { statfsSync } from 'node:fs';
import type { OperationEntry } from '../../kernel/storage/operation-entries';

const CHECK_MS = 100;

/** Entries that only take data away: allowed below the reserve. */
const FREEING = new Set<OperationEntry['op']>([
  'records.delete', 'topic.delete', 'topic.trim', 'table.delete', 'database.delete', 'index.delete', 'state.remove', 'internal.remove',
]);

export function isFreeing(entry: OperationEntry): boolean {
  return FREEING.has(entry.op);
}

export class DiskSpaceGuard {
  private checkedAt = -Infinity;
  private low = false;
  /** Free bytes at the last check. */
  freeBytes = Infinity;

  constructor(private readonly dataDir: string, readonly minFreeBytes: number) {}

  /** Why `entry` is refused (undefined: it may go ahead). */
  refusal(entry: OperationEntry): string | undefined {
    if (this.minFreeBytes <= 0) return undefined;
    const now = performance.now();
    if (this.low || now - this.checkedAt >= CHECK_MS) this.check(now);
    if (!this.low || FREEING.has(entry.op)) return undefined;
    return `${this.freeBytes} bytes free on the data folder's filesystem, less than storage_min_free_bytes (${this.minFreeBytes})`;
  }

  private check(now: number): void {
    this.checkedAt = now;
    try {
      const stats = statfsSync(this.dataDir);
      this.freeBytes = Number(stats.bavail) * Number(stats.bsize);
    } catch {
      // A filesystem statfs cannot describe: LMDB's own failure (storage-full.ts) is the guard.
      this.freeBytes = Infinity;
    }
    this.low = this.freeBytes < this.minFreeBytes;
  }
}
