/** Schemas of the table routes. */
import { DB_PARAMS, EMPTY_RESPONSE, TABLE_PARAMS, errorResponses } from './common';

const COLUMN = {
  type: 'object',
  description: 'A column. Other properties of the JSON-action interface (scale, nullable, defaultValue, primaryKey, autoValue) are accepted too.',
  properties: {
    name: { type: 'string', minLength: 1, description: 'Column name (case-insensitive)' },
    type: {
      type: 'string',
      description: 'Column type, case-insensitive: bit, tinyint, smallint, integer, bigint, real, float (double), money, number, '
        + 'date, time, timestamp, char, varchar, lvarchar, binary, varbinary, lvarbinary, json, variant',
      example: 'VARCHAR',
    },
    length: { type: ['integer', 'null'], minimum: 0, description: 'Characters or bytes (char, varchar, binary...); precision for number', example: 48 },
    scale: { type: ['integer', 'null'], minimum: 0 },
    nullable: { type: 'boolean' },
  },
  required: ['name', 'type'],
  additionalProperties: true,
} as const;

export const LIST_TABLES = {
  summary: 'List the tables of a database',
  tags: ['tables'],
  params: DB_PARAMS,
  response: {
    200: {
      type: 'object',
      description: 'The table names (empty when none)',
      properties: { _tables: { type: 'array', items: { type: 'string' } } },
      required: ['_tables'],
    },
    ...errorResponses(404),
  },
} as const;

export const CREATE_TABLE = {
  summary: 'Create a table',
  tags: ['tables'],
  params: TABLE_PARAMS,
  body: {
    type: 'object',
    properties: { fields: { type: 'array', minItems: 1, items: COLUMN } },
    required: ['fields'],
    example: { fields: [{ name: 'name', type: 'VARCHAR', length: 48 }, { name: 'age', type: 'INTEGER', length: 4 }] },
  },
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;

export const DELETE_TABLE = {
  summary: 'Delete a table and its data',
  tags: ['tables'],
  params: TABLE_PARAMS,
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;
