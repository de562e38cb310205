/**
 * The API console's templates: one per JSON action of the admin, db and mq apis (docs/actions.md;
 * the server has no action that lists actions) and one per REST route (docs/rest.md; replaced by
 * the routes of the server's OpenAPI document when it can be read). Names in examples: database
 * `main`, table `people`, index `by_age`, topic `plant/line1`.
 */

export type ApiName = 'admin' | 'db' | 'mq';

export interface ActionTemplate {
  kind: 'action';
  api: ApiName;
  action: string;
  summary: string;
  params: Record<string, unknown>;
  /** Sent without a session (createSession). */
  noToken?: boolean;
}

export interface RestTemplate {
  kind: 'rest';
  method: string;
  /** The path under the server root, with example names filled in. */
  path: string;
  summary: string;
  body?: unknown;
}

export type Template = ActionTemplate | RestTemplate;

export const REST_BASE = '/engine/api/v1';
/** What the editor shows instead of the session's token; replaced only when sending. */
export const TOKEN_PLACEHOLDER = '<your session>';

export function templateKey(template: Template): string {
  return template.kind === 'action' ? `${template.api}.${template.action}` : `${template.method} ${template.path}`;
}

/** The text of the editor for a template: the envelope (actions) or method, path and body (REST). */
export function templateText(template: Template): string {
  if (template.kind === 'rest') return JSON.stringify({ method: template.method, path: template.path, body: template.body ?? null }, null, 2);
  const envelope: Record<string, unknown> = { api: template.api, action: template.action, params: template.params };
  if (!template.noToken) envelope.authToken = TOKEN_PLACEHOLDER;
  return JSON.stringify(envelope, null, 2);
}

const action = (api: ApiName, name: string, summary: string, params: Record<string, unknown> = {}, noToken = false): ActionTemplate =>
  ({ kind: 'action', api, action: name, summary, params, ...(noToken ? { noToken } : {}) });

const db = { databaseName: 'main' };
const table = { ...db, tableName: 'people' };

export const ACTION_TEMPLATES: readonly ActionTemplate[] = [
  // admin: sessions, accounts, roles
  action('admin', 'createSession', 'log in: a new session and its authToken', { username: 'admin', password: '', description: 'console', defaultApi: 'db', defaultDatabaseName: 'main', defaultResponseOptions: { dataFormat: 'objects' }, idleConnectionTimeoutSeconds: 3600 }, true),
  action('admin', 'pingSession', 'check the server and keep the session alive'),
  action('admin', 'alterSession', 'change the session\'s defaults', { defaultDatabaseName: 'main', defaultResponseOptions: { dataFormat: 'objects' } }),
  action('admin', 'deleteSession', 'end a session (default: this one: logs the explorer out)', { sessionId: 'SESSION_ID' }),
  action('admin', 'describeSessions', 'describe the account\'s sessions', { sessionIds: [] }),
  action('admin', 'listSessions', 'list sessions (every session with session.manageAll)'),
  action('admin', 'createAccount', 'create an account', { username: 'alice', password: 'a long password', roles: ['reader'], description: '' }),
  action('admin', 'alterAccount', 'change an account\'s password or description', { username: 'alice', password: 'a new long password', description: '' }),
  action('admin', 'deleteAccount', 'delete an account (its sessions end)', { username: 'alice' }),
  action('admin', 'listAccounts', 'list accounts'),
  action('admin', 'assignRolesToAccounts', 'give accounts roles', { usernames: ['alice'], roleNames: ['reader'] }),
  action('admin', 'revokeRolesFromAccounts', 'take roles from accounts', { usernames: ['alice'], roleNames: ['reader'] }),
  action('admin', 'createRole', 'create a role', { roleName: 'people_reader', description: '', grants: [{ commands: ['record.find'], resources: ['table:main.people'] }], denies: [] }),
  action('admin', 'alterRole', 'change a role', { roleName: 'people_reader', grants: [{ commands: ['record.find', 'cursor.*'], resources: ['table:main.people'] }] }),
  action('admin', 'deleteRole', 'delete a role (revoked from every account)', { roleName: 'people_reader' }),
  action('admin', 'listRoles', 'list roles'),
  action('admin', 'backupDatabase', 'write a consistent copy of the data folder into a new folder of the server (docs/operations.md)', { folder: '/srv/backups/engine-YYYY-MM-DD' }),

  // db: databases and tables
  action('db', 'createDatabase', 'create a database', { databaseName: 'sales' }),
  action('db', 'listDatabases', 'list databases'),
  action('db', 'deleteDatabase', 'delete a database', { databaseName: 'sales' }),
  action('db', 'createTable', 'create a table (every table also gets the column id)', { ...table, fields: [{ name: 'name', type: 'varchar', length: 40, nullable: true }, { name: 'age', type: 'integer' }, { name: 'born', type: 'date' }] }),
  action('db', 'listTables', 'list tables (prefix filter, paging)', { ...db, partialTableName: '', skipRecords: 0, maxRecords: 100 }),
  action('db', 'describeTables', 'describe tables: fields, indexes, integration table', { ...db, tableNames: ['people'] }),
  action('db', 'alterTable', 'add fields to a table', { ...table, addFields: [{ name: 'email', type: 'varchar', length: 100 }] }),
  action('db', 'deleteTables', 'delete tables and their records (all or none)', { ...db, tableNames: ['people'] }),
  // indexes
  action('db', 'createIndex', 'create an index', { ...table, indexName: 'by_age', fields: [{ name: 'age', ascending: true }], unique: false }),
  action('db', 'listIndexes', 'list a table\'s indexes (id_pk included)', table),
  action('db', 'deleteIndexes', 'delete indexes', { ...table, indexNames: ['by_age'] }),
  // records
  action('db', 'insertRecords', 'insert records (all or none)', { ...table, dataFormat: 'objects', sourceData: [{ name: 'Ann', age: 30 }] }),
  action('db', 'updateRecords', 'update records by id (omitted columns keep their values)', { ...table, dataFormat: 'objects', sourceData: [{ id: 1, age: 31 }] }),
  action('db', 'deleteRecords', 'delete records by id', { ...table, ids: [1] }),
  action('db', 'getRecordsByIds', 'read records by id', { ...table, ids: [1, 2] }),
  action('db', 'getRecordsByTable', 'read records in record-ID order', { ...table, tableFilter: '', reverseOrder: false, skipRecords: 0, maxRecords: 20, returnCursor: false }),
  action('db', 'getRecordsByIndex', 'read records in index order', { ...table, indexName: 'by_age', tableFilter: '', reverseOrder: false, skipRecords: 0, maxRecords: 20 }),
  action('db', 'getRecordsInKeyRange', 'read records in a range of index keys', { ...table, indexName: 'by_age', indexRange: { '>=': [30], '<': [40] }, skipRecords: 0, maxRecords: 20 }),
  action('db', 'getRecordsFromCursor', 'fetch from a cursor (returnCursor: true opens one)', { cursorId: 'CURSOR_ID', fetchRecords: 20, skipRecords: 0, startFrom: 'currentPosition' }),
  action('db', 'closeCursor', 'close a cursor', { cursorId: 'CURSOR_ID' }),
  // transactions
  action('db', 'createTransaction', 'start a transaction (pass transactionId to writes and reads)'),
  action('db', 'commitTransaction', 'commit a transaction', { transactionId: 'TRANSACTION_ID' }),
  action('db', 'rollbackTransaction', 'roll a transaction back', { transactionId: 'TRANSACTION_ID' }),
  // SQL over the same tables (docs/sql.md)
  action('db', 'getRecordsUsingSql', 'one SELECT (SQLite over the engine\'s tables; TOP n SKIP m, owner.table)', { ...db, sql: 'SELECT name, age FROM people WHERE age >= ? ORDER BY age', sqlParams: [30], maxRecords: 20 }),
  action('db', 'runSqlStatements', 'SQL statements, DDL and DML, in one transaction', { ...db, sqlStatements: ['UPDATE people SET age = age + 1 WHERE name = \'Ann\'', 'SELECT count(*) AS n FROM people'], onError: 'continue', atEnd: 'rollbackOnError' }),

  // mq: messages and topics
  action('mq', 'getMessagesFromMqTopic', 'read a topic\'s messages (stateless)', { topic: 'plant/line1', startFrom: 'tail', maxMessages: 20, includeMessageMetadata: true, includeMqttProperties: false }),
  action('mq', 'publishMessagesToMq', 'publish messages (all or none)', { topic: 'plant/line1', messages: [{ payload: { temperature: 21.5 }, qos: 0, retain: false }] }),
  action('mq', 'listTopics', 'list topics'),
  action('mq', 'describeTopics', 'describe topics: counts, rates, subscribers, retention', { topics: ['plant/line1'] }),
  action('mq', 'listMqSubscriptions', 'every subscription of the sessions you may use', { filter: '', offset: 0, limit: 500 }),
  action('mq', 'browseTopics', 'one level of the topic tree with aggregated counts', { prefix: null, filter: '', offset: 0, limit: 500 }),
  action('mq', 'deleteTopic', 'delete a topic, its messages and its retained message', { topic: 'plant/line1' }),
  action('mq', 'configureTopic', 'set a topic\'s retention', { topic: 'plant/line1', retentionSeconds: 86400, retentionMessages: null }),
  action('mq', 'getMqOverview', 'broker counters and the busiest topics'),
  action('mq', 'getLogStatus', 'the message log\'s size against log_max_bytes, and what sessions still owe'),
  action('mq', 'listRetainedMessages', 'retained messages matching a filter', { topicFilter: '#', offset: 0, limit: 100 }),
  action('mq', 'deleteRetainedMessages', 'delete retained messages matching a filter', { topicFilter: 'plant/#', dryRun: true }),
  // mq: sessions
  action('mq', 'createMqApiSession', 'create an MQ API session (a persistent session without a connection)', { clientName: 'console-reader' }),
  action('mq', 'subscribeToMq', 'add or remove subscriptions of a session', { clientName: 'console-reader', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'plant/#', qos: 1 }] }),
  action('mq', 'getMessagesFromMqApiSession', 'read an MQ API session\'s next messages', { clientName: 'console-reader', maxMessages: 20, includeMessageMetadata: true }),
  action('mq', 'alterMqSession', 'move an MQ API session\'s position in the log', { clientName: 'console-reader', startFrom: 'head' }),
  action('mq', 'deleteMqSession', 'delete a session (disconnects an MQTT client holding it)', { clientName: 'console-reader' }),
  action('mq', 'listMqSessions', 'list MQTT and MQ API sessions', { filter: '', offset: 0, limit: 100 }),
  action('mq', 'describeMqSessions', 'describe sessions: subscriptions, rates, position', { clientNames: ['console-reader'] }),
  action('mq', 'disconnectMqClient', 'disconnect an MQTT client (a persistent session stays)', { clientName: 'CLIENT_NAME' }),
  action('mq', 'deleteMqSessions', 'delete sessions in bulk', { disconnectedOnly: true, dryRun: true }),
];

const rest = (method: string, path: string, summary: string, body?: unknown): RestTemplate => ({ kind: 'rest', method, path: `${REST_BASE}${path}`, summary, body });

/** The REST routes of docs/rest.md, used until the OpenAPI document is read. */
export const REST_TEMPLATES: readonly RestTemplate[] = [
  rest('GET', '/table/main', 'list tables'),
  rest('POST', '/table/main/people', 'create a table', { fields: [{ name: 'name', type: 'VARCHAR', length: 48 }, { name: 'age', type: 'INTEGER', length: 4 }] }),
  rest('DELETE', '/table/main/people', 'delete a table and its data'),
  rest('GET', '/index/main/people', 'list indexes'),
  rest('POST', '/index/main/people/by_age', 'create an index', { fields: [{ name: 'age', ascending: true }], unique: false }),
  rest('GET', '/index/main/people/by_age', 'read an index definition'),
  rest('DELETE', '/index/main/people/by_age', 'delete an index'),
  rest('POST', '/record/main/people', 'create records (an object or an array)', { name: 'Ann', age: 30 }),
  rest('GET', '/record/main/people/1', 'read a record'),
  rest('PUT', '/record/main/people/1', 'replace a record', { name: 'Ann', age: 31 }),
  rest('PATCH', '/record/main/people/1', 'change some columns', { age: 32 }),
  rest('DELETE', '/record/main/people/1', 'delete a record'),
  rest('POST', '/query/main/people/by_age?top=10&skip=0', 'find records through an index', { find: { age: { operator: '>=', value: 30 } } }),
];

const EXAMPLE_NAMES: Record<string, string> = { db: 'main', database: 'main', table: 'people', index: 'by_age', id: '1' };

/**
 * REST templates from an OpenAPI 3 document: every operation, path parameters filled with the
 * example names, a body skeleton from the request schema's properties.
 */
export function restTemplatesFromOpenApi(document: unknown): RestTemplate[] {
  const paths = (document as { paths?: Record<string, Record<string, { summary?: string; description?: string; requestBody?: { content?: Record<string, { schema?: Schema }> }; parameters?: Array<{ name: string; in: string; required?: boolean }> }>> }).paths;
  if (!paths || typeof paths !== 'object') throw new Error('the document has no paths');
  const templates: RestTemplate[] = [];
  for (const [path, operations] of Object.entries(paths)) {
    if (/\/(openapi|documentation)\b/.test(path)) continue;
    for (const [method, operation] of Object.entries(operations)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      let filled = path.replace(/\{(\w+)\}/g, (_, name: string) => EXAMPLE_NAMES[name] ?? `{${name}}`);
      const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' && parameter.required);
      if (query.length > 0) filled += `?${query.map((parameter) => `${parameter.name}=${parameter.name === 'top' ? 10 : ''}`).join('&')}`;
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      const full = filled.startsWith(REST_BASE) ? filled : `${REST_BASE}${filled}`;
      // A route of docs/rest.md keeps its worked example; others get a skeleton of their schema.
      const known = REST_TEMPLATES.find((candidate) => candidate.method === method.toUpperCase() && candidate.path.split('?')[0] === full.split('?')[0]);
      templates.push({
        kind: 'rest', method: method.toUpperCase(), path: known?.path ?? full, summary: operation.summary ?? operation.description ?? known?.summary ?? '',
        body: known ? known.body : schema ? skeleton(schema, 0) : undefined,
      });
    }
  }
  return templates;
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  example?: unknown;
  default?: unknown;
  enum?: unknown[];
}

function skeleton(schema: Schema, depth: number): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternative = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (alternative) return skeleton(alternative, depth);
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  if (depth > 4) return null;
  switch (type) {
    case 'object': {
      const result: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [name, property] of Object.entries(schema.properties ?? {})) if (required.size === 0 || required.has(name) || depth === 0) result[name] = skeleton(property, depth + 1);
      return result;
    }
    case 'array': return schema.items ? [skeleton(schema.items, depth + 1)] : [];
    case 'integer': case 'number': return 0;
    case 'boolean': return false;
    case 'string': return '';
    default: return null;
  }
}
