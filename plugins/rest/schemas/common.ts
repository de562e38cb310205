/**
 * Shared pieces of the REST schemas. Every route schema validates requests (plugins/rest/request-parsing.ts)
 * and is what @fastify/swagger turns into the OpenAPI document served at GET /openapi.
 */

export const ERROR_SCHEMA = {
  type: 'object',
  description: 'Error: `errorCode` is the engine error code (docs/errors.md), `errorMessage` says what went wrong.',
  properties: {
    errorCode: { type: 'integer', example: 4023 },
    errorMessage: { type: 'string', example: 'table "orders" does not exist in database "main"' },
  },
  required: ['errorCode', 'errorMessage'],
} as const;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad input (wrong format, wrong type, unknown column, ...) or the resource already exists',
  401: 'Missing or invalid HTTP Basic credentials',
  403: 'The account\'s roles do not allow this request',
  404: 'The database, table, index or record does not exist',
  413: 'The request body is too large',
};

/** Response schemas for the given error statuses (all answer `{errorCode, errorMessage}`). */
export function errorResponses(...statuses: number[]): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const status of [...statuses, 401, 403]) {
    responses[String(status)] = { ...ERROR_SCHEMA, description: ERROR_DESCRIPTIONS[status] ?? 'Error' };
  }
  return responses;
}

export const EMPTY_RESPONSE = {
  type: 'object',
  description: 'Done: an empty object',
  properties: {},
  additionalProperties: false,
} as const;

const NAME = { type: 'string', minLength: 1 } as const;

export const DB_PARAMS = {
  type: 'object',
  properties: { db: { ...NAME, description: 'Database name (the default database is `main` unless configured)' } },
  required: ['db'],
} as const;

export const TABLE_PARAMS = {
  type: 'object',
  properties: { ...DB_PARAMS.properties, table: { ...NAME, description: 'Table name' } },
  required: ['db', 'table'],
} as const;

export const INDEX_PARAMS = {
  type: 'object',
  properties: { ...TABLE_PARAMS.properties, index: { ...NAME, description: 'Index name' } },
  required: ['db', 'table', 'index'],
} as const;

export const RECORD_PARAMS = {
  type: 'object',
  properties: {
    ...TABLE_PARAMS.properties,
    id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Record ID (a positive integer)' },
  },
  required: ['db', 'table', 'id'],
} as const;

/** A value of a column as JSON: string, number, boolean (dates as `MM/DD/CCYY hh:mm:ss.ttt`, binary as hex). */
export const SCALAR_VALUE = {
  description: 'A value in the column\'s type: number, string (dates `MM/DD/CCYY hh:mm:ss.ttt`, binary as hex) or boolean',
  anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
} as const;

/** A record: column names mapped to values. */
export const RECORD_OBJECT = {
  type: 'object',
  description: 'Column names mapped to values (dates `MM/DD/CCYY hh:mm:ss.ttt`, binary as hex; omitted columns are null)',
  additionalProperties: true,
  example: { name: 'Ann', age: 42 },
} as const;
