/**
 * Names from this server for the console's templates: a topic (the busiest, else the first one
 * found in the tree), a table of `main` and one of its indexes, put in place of the examples
 * (`plant/line1`, `people`, `by_age`), so a template runs against real data as it comes.
 */
import { call } from '../../api.js';
import type { BrowseTopicsResult, Overview } from '../../../../../lib/explorer/api-types.js';

export interface RealNames {
  topic?: string;
  table?: string;
  index?: string;
}

const EXAMPLE_TOPIC = 'plant/line1';
const EXAMPLE_TABLE = 'people';
const EXAMPLE_INDEX = 'by_age';

async function someTopic(signal: AbortSignal): Promise<string | undefined> {
  const overview = await call<Overview>('mq', 'getMqOverview', {}, signal);
  const busiest = overview.busiestTopics?.[0]?.topic;
  if (busiest) return busiest;
  // The first topic of the tree: down its first branch, a level at a time. A few nodes per level,
  // because the server's own `$SYS` branch sorts first and is skipped.
  let prefix: string | null = null;
  for (let depth = 0; depth < 16; depth++) {
    const level: BrowseTopicsResult = await call<BrowseTopicsResult>('mq', 'browseTopics', { prefix, limit: 8 }, signal);
    const node = level.nodes.find((candidate) => !candidate.path.startsWith('$'));
    if (!node) return undefined;
    if (node.isTopic) return node.path;
    prefix = node.path;
  }
  return undefined;
}

async function someTable(signal: AbortSignal): Promise<{ table?: string; index?: string }> {
  const tables = await call<{ data: Array<{ tableName: string }> }>('db', 'listTables', { databaseName: 'main', maxRecords: 20 }, signal);
  const names = tables.data.map((entry) => entry.tableName);
  if (names.length === 0) return {};
  const described = await call<{ data: Array<{ tableName: string; integrationTable: boolean }> }>('db', 'describeTables', { databaseName: 'main', tableNames: names }, signal);
  const table = described.data.find((entry) => !entry.integrationTable)?.tableName ?? names[0];
  const indexes = await call<{ data: Array<{ indexName: string }> }>('db', 'listIndexes', { databaseName: 'main', tableName: table }, signal);
  return { table, index: indexes.data.map((entry) => entry.indexName).find((name) => name !== 'id_pk') };
}

/** What can be found; a part the account may not read stays the example. */
export async function loadRealNames(signal: AbortSignal): Promise<RealNames> {
  const [topic, table] = await Promise.all([someTopic(signal).catch(() => undefined), someTable(signal).catch(() => ({}))]);
  return { topic, ...table };
}

/** A template's text with the examples replaced: whole JSON strings and REST path segments only. */
export function withRealNames(text: string, names: RealNames): string {
  let out = text;
  const swap = (example: string, real: string | undefined): void => {
    if (!real || real === example) return;
    out = out.split(JSON.stringify(example)).join(JSON.stringify(real));
    out = out.replace(new RegExp(`/${example}(?=[/?"])`, 'g'), `/${encodeURIComponent(real)}`);
  };
  swap(EXAMPLE_TOPIC, names.topic);
  swap(EXAMPLE_TABLE, names.table);
  swap(EXAMPLE_INDEX, names.index);
  return out;
}
