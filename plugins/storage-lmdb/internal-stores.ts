/**
 * Internal stores: small durable key-value catalogs of the kernel (accounts, roles, MQ
 * sessions). Each lives in its own sub-database `x:<name>` (string keys, msgpack values) and is
 * held in memory: reads are served from the map, writes update the map at once and resolve when
 * the commit is durable.
 */
import type { InternalStore } from '../../kernel/storage/storage-port';
import type { OperationLog } from './apply-entry';
import type { InternalDb, LmdbEnvironment } from './environment';

export class LmdbInternalStore<V> implements InternalStore<V> {
  private readonly map = new Map<string, V>();

  constructor(private readonly name: string, private readonly env: LmdbEnvironment, private readonly db: InternalDb, private readonly operations: OperationLog) {
    for (const { key, value } of db.getRange({})) this.map.set(key as string, value as V);
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  /** Each write is an operation entry (`internal.put`, `internal.remove`: apply-entry.ts). */
  put(key: string, value: V): Promise<void> {
    return this.operations.submit({ op: 'internal.put', store: this.name, key, value });
  }

  remove(key: string): Promise<boolean> {
    return this.operations.submit({ op: 'internal.remove', store: this.name, key });
  }

  /** Applies an `internal.put` entry. */
  async applyPut(key: string, value: V): Promise<void> {
    this.map.set(key, value);
    // A plain put resolves once committed: answered once synced.
    await this.env.durable(this.db.put(key, value));
  }

  /** Applies an `internal.remove` entry. */
  async applyRemove(key: string): Promise<boolean> {
    const had = this.map.delete(key);
    await this.env.durable(this.db.remove(key));
    return had;
  }

  entries(): Iterable<[string, V]> {
    return this.map.entries();
  }
}
