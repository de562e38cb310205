/** table.create / table.list / table.describe / table.delete / table.alter */
import type { CommandContext, Resource } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';
import type { ColumnDefinition } from '../../kernel/storage/types';
import { normalizeColumn } from '../../lib/values/column-types';
import { decodeValue, type ValueFormat } from '../../lib/values/wire-format';
import type {
  TableAlterParams, TableCreateParams, TableDeleteParams, TableDescribeParams, TableDescribeResult,
  TableListParams, TableListResult, TableResult,
} from '../../lib/data/command-types';
import { lower, tableResource, type DataContext } from './data-context';
import { resolveFormat } from './record-codec';
import { databaseParams, formatSchema, inTable, nameSchema, namesSchema } from './schemas';

export interface TableDeleteResult { tables: string[] }

/** The message core's command deleting a topic with its integration table (plugins/messaging). */
const TOPIC_DELETE = 'topic.delete';

/**
 * Raw column objects → definitions (lib/values/column-types normalizeColumn). `defaultValue`
 * is a wire value in `format` (dates in REST or ISO form, binary in its binaryFormat).
 */
export function normalizeColumns(fields: readonly unknown[], format: ValueFormat, existing: readonly ColumnDefinition[] = []): ColumnDefinition[] {
  const seen = new Set(existing.map((c) => c.name));
  const columns: ColumnDefinition[] = [];
  for (let i = 0; i < fields.length; i++) {
    const raw = fields[i];
    let wireDefault: unknown;
    let input: unknown = raw;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'defaultValue' in raw) {
      const { defaultValue, ...rest } = raw as Record<string, unknown>;
      wireDefault = defaultValue;
      input = rest;
    }
    const column = normalizeColumn(input, existing.length + i);
    if (wireDefault !== undefined && wireDefault !== null) {
      try {
        column.defaultValue = decodeValue({ ...column, nullable: true }, wireDefault, format);
      } catch (error) {
        const reason = error instanceof EngineError ? String(error.details.reason ?? error.message) : String(error);
        throw new EngineError('INVALID_TABLE_DEFINITION', { reason: `column "${column.name}": invalid defaultValue: ${reason}` });
      }
    }
    if (seen.has(column.name)) {
      throw new EngineError('INVALID_TABLE_DEFINITION', { reason: `column "${column.name}" is defined twice` });
    }
    seen.add(column.name);
    columns.push(column);
  }
  return columns;
}

/** Several tables in one command: the bus authorizes the first, the handler the others. */
function tablesResource(p: { database: string; tables: string[] }): Resource {
  return p.tables.length > 0
    ? { kind: 'table', database: lower(p.database), table: lower(p.tables[0]) }
    : { kind: 'database', database: lower(p.database) };
}

export function registerTableCommands(data: DataContext): void {
  const { engine } = data;
  const { bus } = engine;

  const authorizeRest = (ctx: CommandContext, command: string, database: string, tables: string[]): void => {
    for (let i = 1; i < tables.length; i++) engine.authorize(ctx, command, { kind: 'table', database, table: tables[i] });
  };

  bus.register<TableCreateParams, TableResult>({
    name: 'table.create',
    summary: 'Create a table from raw column objects.',
    params: inTable({ fields: { type: 'array' }, format: formatSchema }, ['fields']),
    resource: tableResource,
    handler: async (p) => {
      const columns = normalizeColumns(p.fields, resolveFormat(p.format));
      const table = await data.storage().createTable(lower(p.database), lower(p.table), columns);
      return { table };
    },
  });

  bus.register<TableListParams, TableListResult>({
    name: 'table.list',
    reads: true,
    summary: 'List the tables of a database (integration tables included, internal catalogs never; tables a role denies table.list on left out).',
    params: databaseParams,
    resource: (p) => ({ kind: 'database', database: lower(p.database) }),
    handler: (p, ctx) => {
      const database = lower(p.database);
      const tables = data.storage().listTables(database);
      return { tables: tables.filter((table) => !engine.hides(ctx, 'table.list', { kind: 'table', database, table })) };
    },
  });

  bus.register<TableDescribeParams, TableDescribeResult>({
    name: 'table.describe',
    reads: true,
    summary: 'Definitions of the named tables (when `tables` is empty: every table of the database the caller may describe).',
    params: {
      type: 'object',
      required: ['database', 'tables'],
      properties: { database: nameSchema, tables: { type: 'array', items: nameSchema } },
    },
    resource: tablesResource,
    handler: (p, ctx) => {
      const storage = data.storage();
      const database = lower(p.database);
      let names: string[];
      if (p.tables.length > 0) {
        names = p.tables.map(lower);
        authorizeRest(ctx, 'table.describe', database, names);
      } else {
        // All tables: the bus checked the database; a table the caller may not describe is left out.
        names = storage.listTables(database).filter((table) => engine.allows(ctx, 'table.describe', { kind: 'table', database, table }));
      }
      return { tables: names.map((name) => storage.getTable(database, name)) };
    },
  });

  bus.register<TableDeleteParams, TableDeleteResult>({
    name: 'table.delete',
    summary: "Delete tables and their data (a topic's integration table: the topic, through the message core's topic.delete).",
    params: {
      type: 'object',
      required: ['database', 'tables'],
      properties: { database: nameSchema, tables: namesSchema },
    },
    resource: tablesResource,
    handler: async (p, ctx) => {
      const database = lower(p.database);
      const names = [...new Set(p.tables.map(lower))];
      authorizeRest(ctx, 'table.delete', database, names);
      const storage = data.storage();
      // Every table must exist before anything is deleted (TABLE_NOT_FOUND deletes nothing).
      const topics = names.map((name) => storage.getTable(database, name).topic);
      // A topic's integration table is the topic: the message core deletes it, so its retained
      // message, its sessions' deliveries and its counts go with it (docs/roles.md). Without a
      // message core (no messaging plugin loaded) the store deletes it like any table.
      const viaCore = engine.bus.has(TOPIC_DELETE);
      const direct = names.filter((_, i) => topics[i] === null || !viaCore);
      if (direct.length > 0) await storage.deleteTables(database, direct);
      if (viaCore) for (const topic of topics) if (topic !== null) await engine.bus.execute(TOPIC_DELETE, { topic }, ctx);
      for (const name of names) data.cursors.closeTable(database, name);
      return { tables: names };
    },
  });

  bus.register<TableAlterParams, TableResult>({
    name: 'table.alter',
    summary: 'Add columns to a table.',
    params: inTable({ addFields: { type: 'array', minItems: 1 }, format: formatSchema }, ['addFields']),
    resource: tableResource,
    handler: async (p) => {
      const storage = data.storage();
      const database = lower(p.database);
      const name = lower(p.table);
      const current = storage.getTable(database, name);
      const columns = normalizeColumns(p.addFields, resolveFormat(p.format), current.columns);
      const table = await storage.addColumns(database, name, columns);
      return { table };
    },
  });
}
