/**
 * Internal stores: small durable key-value catalogs of the kernel (accounts, roles, MQ
 * sessions). Each lives in its own sub-database `x:<name>` (string keys, msgpack values) and is
 * held in memory: reads are served from the map, writes update the map at once and resolve when
 * the commit is durable.
 */
import type { InternalStore } from '../../kernel/storage/storage-port';
import type { InternalDb } from './environment';

export class LmdbInternalStore<V> implements InternalStore<V> {
  private readonly map = new Map<string, V>();

  constructor(private readonly db: InternalDb) {
    for (const { key, value } of db.getRange({})) this.map.set(key as string, value as V);
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  async put(key: string, value: V): Promise<void> {
    this.map.set(key, value);
    await this.db.put(key, value);
  }

  async remove(key: string): Promise<boolean> {
    const had = this.map.delete(key);
    await this.db.remove(key);
    return had;
  }

  entries(): Iterable<[string, V]> {
    return this.map.entries();
  }
}
