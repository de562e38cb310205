/**
 * A catalog's own writes (accounts, roles) between the store's tap telling them and the write
 * resolving. The tap tells entries in the order the store applies them (in a cluster, the
 * stream's); a write resolves later, once durable, and an entry for the same key told in between
 * (another node's removal, a concurrent local delete) comes after it in that order: the writer
 * must then leave memory as that later entry left it, not put its own record back.
 */
interface PendingWrite {
  key: string;
  /** The tap told this write: entries told for its key from now on are later. */
  told: boolean;
  /** A later entry for its key was told: the write is no longer the latest. */
  superseded: boolean;
}

export class CatalogWrites<T extends object> {
  private readonly pending = new Map<T, PendingWrite>();

  /** Runs the store's write of `value`; resolves whether `value` is still the latest for `key` (then memory takes it). */
  async write(key: string, value: T, store: () => Promise<void> | undefined): Promise<boolean> {
    const write: PendingWrite = { key, told: false, superseded: false };
    this.pending.set(value, write);
    try {
      await store();
    } finally {
      this.pending.delete(value);
    }
    return !write.superseded;
  }

  /** The tap told an entry for `key` (`value` stored, undefined: removed); true when it is one of these writes. */
  told(key: string, value: unknown): boolean {
    if (this.pending.size === 0) return false;
    for (const [pendingValue, write] of this.pending) {
      if (write.key === key && write.told && pendingValue !== value) write.superseded = true;
    }
    const own = value === undefined ? undefined : this.pending.get(value as T);
    if (own === undefined) return false;
    own.told = true;
    return true;
  }
}
