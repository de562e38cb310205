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

/**
 * A catalog's own removals (account or role deleted) between their start and the store's answer.
 * The record stays in memory until the store has the removal: one the store refused (a cluster's
 * stream out of reach, 12060) leaves it as the store and every other node still hold it. When the
 * store's tap tells entries, it tells this removal (and any later entry for the key) before the
 * write resolves, and memory then follows them; without a tap (no storage), the catalog removes it.
 */
export class CatalogRemovals {
  private readonly pending = new Map<string, Array<{ heard: boolean }>>();

  /** Runs the store's removal of `key`; resolves whether the tap told any entry for `key` meanwhile. */
  async remove(key: string, store: () => Promise<unknown> | undefined): Promise<boolean> {
    const removal = { heard: false };
    let list = this.pending.get(key);
    if (list === undefined) this.pending.set(key, list = []);
    list.push(removal);
    try {
      await store();
    } finally {
      list.splice(list.indexOf(removal), 1);
      if (list.length === 0 && this.pending.get(key) === list) this.pending.delete(key);
    }
    return removal.heard;
  }

  /** The tap told an entry for `key`. */
  told(key: string): void {
    if (this.pending.size === 0) return;
    const list = this.pending.get(key);
    if (list !== undefined) for (const removal of list) removal.heard = true;
  }
}
