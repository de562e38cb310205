/** `db` actions on databases, tables and indexes. */
import { EngineError } from '../../../../kernel/errors';
import type { ActionDefinition } from '../../action-table';
import type {
  DatabaseListResult, IndexListResult, IndexResult, TableDescribeResult, TableListResult, TableResult,
} from '../../../../lib/data/command-types';
import { readFormat } from '../../response-options';
import { indexMeta, tableMeta } from '../../record-shape';
import { bytesCheck, exec, IN_TABLE, inTable, LOCATION, NAME, NAMES, schema, where, writeFormat, type Params } from './db-call';

const NOT_SUPPORTED_ALTERATIONS = ['alterFields', 'deleteFields', 'renameFields', 'addIndexes', 'deleteIndexes'];

export const schemaActions: readonly ActionDefinition[] = [
  // databases
  {
    action: 'createDatabase',
    params: schema({ databaseName: NAME }, ['databaseName']),
    async handler(call) {
      const database = bytesCheck((call.params as Params).databaseName, 'databaseName');
      await exec(call, 'database.create', { database });
      return { databaseName: database.toLowerCase() };
    },
  },
  {
    action: 'listDatabases',
    params: schema({}),
    async handler(call) {
      const { databases } = await exec<DatabaseListResult>(call, 'database.list', {});
      return { dataFormat: 'objects', data: databases.map((databaseName) => ({ databaseName })), totalRecordCount: databases.length };
    },
  },
  {
    action: 'deleteDatabase',
    params: schema({ databaseName: NAME }, ['databaseName']),
    async handler(call) {
      await exec(call, 'database.delete', { database: bytesCheck((call.params as Params).databaseName, 'databaseName') });
      return {};
    },
  },

  // tables
  {
    action: 'createTable',
    params: schema({ ...IN_TABLE, fields: { type: 'array', items: { type: 'object' } } }, ['tableName', 'fields']),
    async handler(call) {
      const { database, table, owner } = inTable(call);
      const created = await exec<TableResult>(call, 'table.create', { database, table, fields: (call.params as Params).fields, format: writeFormat(call) });
      return tableMeta(created.table, owner, readFormat(call.options));
    },
  },
  {
    action: 'listTables',
    params: schema({
      ...LOCATION,
      partialTableName: { type: 'string' },
      tableNames: { type: 'array', items: { type: 'string' } },
      skipRecords: { type: 'integer', minimum: 0, default: 0 },
      maxRecords: { type: 'integer', minimum: 1 },
    }),
    async handler(call) {
      const p = call.params as Params;
      const { database, owner } = where(call);
      const { tables } = await exec<TableListResult>(call, 'table.list', { database });
      let names = tables;
      if (typeof p.partialTableName === 'string' && p.partialTableName !== '') {
        const prefix = p.partialTableName.toLowerCase();
        names = names.filter((name) => name.toLowerCase().startsWith(prefix));
      }
      if (Array.isArray(p.tableNames)) {
        const wanted = new Set((p.tableNames as string[]).map((name) => name.toLowerCase()));
        names = names.filter((name) => wanted.has(name.toLowerCase()));
      }
      const total = names.length;
      names = names.slice(p.skipRecords as number, p.maxRecords === undefined ? undefined : (p.skipRecords as number) + (p.maxRecords as number));
      return { dataFormat: 'objects', data: names.map((tableName) => ({ databaseName: database, ownerName: owner, tableName })), totalRecordCount: total };
    },
  },
  {
    action: 'describeTables',
    // No tableNames (or []): every table of the database the caller may describe.
    params: schema({ ...LOCATION, tableNames: { type: 'array', items: NAME } }),
    async handler(call) {
      const { database, owner } = where(call);
      const { tables } = await exec<TableDescribeResult>(call, 'table.describe', { database, tables: (call.params as Params).tableNames ?? [] });
      const format = readFormat(call.options);
      return { dataFormat: 'objects', data: tables.map((table) => tableMeta(table, owner, format)) };
    },
  },
  {
    action: 'deleteTables',
    params: schema({ ...LOCATION, tableNames: NAMES }, ['tableNames']),
    async handler(call) {
      const { database } = where(call);
      await exec(call, 'table.delete', { database, tables: (call.params as Params).tableNames });
      return {};
    },
  },
  {
    action: 'alterTable',
    params: schema({ ...IN_TABLE, addFields: { type: 'array', minItems: 1, items: { type: 'object' } } }, ['tableName', 'addFields']),
    async handler(call) {
      const p = call.params as Params;
      for (const name of NOT_SUPPORTED_ALTERATIONS) {
        if (p[name] !== undefined && !(Array.isArray(p[name]) && p[name].length === 0)) {
          throw new EngineError('INVALID_PARAMETER', { param: name, reason: 'not supported: alterTable can only addFields' });
        }
      }
      const { database, table, owner } = inTable(call);
      const altered = await exec<TableResult>(call, 'table.alter', { database, table, addFields: p.addFields, format: writeFormat(call) });
      return tableMeta(altered.table, owner, readFormat(call.options));
    },
  },

  // indexes
  {
    action: 'createIndex',
    params: schema({
      ...IN_TABLE,
      indexName: NAME,
      unique: { type: 'boolean', default: false },
      fields: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['name'],
          properties: {
            name: NAME,
            ascending: { type: 'boolean' },
            sortDescending: { type: 'boolean' },
            key: { type: 'string' },
            type: { type: 'string' },
            size: { type: 'integer', minimum: 1 },
          },
        },
      },
    }, ['tableName', 'indexName', 'fields']),
    async handler(call) {
      const p = call.params as Params;
      const { database, table } = inTable(call);
      const fields = (p.fields as Params[]).map((segment) => ({
        name: segment.name,
        ascending: segment.ascending ?? (segment.sortDescending === undefined ? true : !segment.sortDescending),
        ...(segment.key !== undefined ? { key: segment.key } : {}),
        ...(segment.type !== undefined ? { type: segment.type } : {}),
        ...(segment.size !== undefined ? { size: segment.size } : {}),
      }));
      const created = await exec<IndexResult>(call, 'index.create', { database, table, index: bytesCheck(p.indexName, 'indexName'), unique: p.unique, fields });
      return { databaseName: database, tableName: table, ...indexMeta(created.index) };
    },
  },
  {
    action: 'listIndexes',
    params: schema(IN_TABLE, ['tableName']),
    async handler(call) {
      const { database, table } = inTable(call);
      const { indexes } = await exec<IndexListResult>(call, 'index.list', { database, table });
      return { dataFormat: 'objects', data: indexes.map((index) => ({ databaseName: database, tableName: table, ...indexMeta(index) })) };
    },
  },
  {
    action: 'deleteIndexes',
    params: schema({ ...IN_TABLE, indexNames: NAMES }, ['tableName', 'indexNames']),
    async handler(call) {
      const { database, table } = inTable(call);
      await exec(call, 'index.delete', { database, table, indexes: (call.params as Params).indexNames });
      return {};
    },
  },
];
