/** Schemas of the index routes. */
import { EMPTY_RESPONSE, INDEX_PARAMS, TABLE_PARAMS, errorResponses } from './common';

const SEGMENT = {
  type: 'object',
  description: 'One index segment, in key order',
  properties: {
    name: { type: 'string', minLength: 1, description: 'Column name' },
    ascending: { type: 'boolean', default: true, description: 'true: smallest first; false: largest first' },
    key: { type: 'string', minLength: 1, description: 'JSON columns: the property (dotted path) within the value' },
    type: { type: 'string', description: 'JSON columns: the property\'s type (e.g. varchar, integer)' },
    size: { type: 'integer', minimum: 1, description: 'JSON columns: bytes of the key segment' },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

export const CREATE_INDEX = {
  summary: 'Create an index',
  tags: ['indexes'],
  params: INDEX_PARAMS,
  body: {
    type: 'object',
    properties: {
      fields: { type: 'array', minItems: 1, items: SEGMENT },
      unique: { type: 'boolean', default: false, description: 'Whether the index enforces unique keys (default false)' },
    },
    required: ['fields'],
    additionalProperties: false,
    example: { fields: [{ name: 'name', ascending: true }], unique: false },
  },
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;

export const DELETE_INDEX = {
  summary: 'Delete an index',
  tags: ['indexes'],
  params: INDEX_PARAMS,
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;

export const GET_INDEX = {
  summary: 'Read an index definition',
  tags: ['indexes'],
  params: INDEX_PARAMS,
  response: {
    200: {
      type: 'object',
      description: 'The index definition',
      properties: {
        unique: { type: 'boolean' },
        fields: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              ascending: { type: 'boolean' },
              key: { type: 'string' },
              type: { type: 'string' },
              size: { type: 'integer' },
            },
            required: ['name', 'ascending'],
          },
        },
      },
      required: ['unique', 'fields'],
    },
    ...errorResponses(400, 404),
  },
} as const;

export const LIST_INDEXES = {
  summary: 'List the indexes of a table (the automatic record-ID index is not listed)',
  tags: ['indexes'],
  params: TABLE_PARAMS,
  response: {
    200: {
      type: 'object',
      description: 'The index names',
      properties: { _indexes: { type: 'array', items: { type: 'string' } } },
      required: ['_indexes'],
    },
    ...errorResponses(404),
  },
} as const;
