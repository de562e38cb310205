/**
 * A topic and its integration table are one resource with two names (docs/roles.md, "One resource,
 * two names"). The storage port knows which table is which topic (`TableDefinition.topic`, the
 * message log's catalog), so the kernel tells its decision the other name of either, whichever
 * plugins are loaded (REST alone still reads the integration tables a data folder holds).
 */
import type { Resource } from '../bus/command';
import type { StoragePort } from '../storage/storage-port';
import type { AliasResolver } from './resource-aliases';

/**
 * Every integration table's name starts with `mqtt_msg_` (docs/storage.md, "Integration tables"): other
 * tables need no lookup. Names are case-insensitive: a table named in capitals is the same table.
 */
const INTEGRATION_TABLE_NAME = /^mqtt_msg_/i;

export function topicTableAliases(storage: StoragePort): AliasResolver {
  const log = storage.messageLog;
  return (resource): Resource | undefined => {
    if (resource.kind === 'topic') {
      const entry = log.getTopic(resource.topic);
      return entry ? { kind: 'table', database: entry.database, table: entry.table } : undefined;
    }
    if (resource.kind !== 'table' || !INTEGRATION_TABLE_NAME.test(resource.table)) return undefined;
    let topic: string | null;
    try {
      topic = storage.getTable(resource.database, resource.table).topic;
    } catch {
      return undefined; // no such table (the command answers that itself): no other name
    }
    return topic === null || topic === undefined ? undefined : { kind: 'topic', topic };
  };
}
