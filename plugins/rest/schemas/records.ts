/** Schemas of the record routes. */
import { EMPTY_RESPONSE, RECORD_OBJECT, RECORD_PARAMS, TABLE_PARAMS, errorResponses } from './common';

export const CREATE_RECORDS = {
  summary: 'Create one record, or one per array element (all or nothing)',
  tags: ['records'],
  params: TABLE_PARAMS,
  body: {
    description: 'One record object, or an array of them',
    oneOf: [RECORD_OBJECT, { type: 'array', minItems: 1, items: RECORD_OBJECT }],
  },
  response: {
    200: {
      type: 'object',
      description: 'The new record IDs, in creation order',
      properties: { _ids: { type: 'array', items: { type: 'integer' } } },
      required: ['_ids'],
    },
    ...errorResponses(400, 404),
  },
} as const;

export const GET_RECORD = {
  summary: 'Read a record',
  tags: ['records'],
  params: RECORD_PARAMS,
  response: {
    200: { ...RECORD_OBJECT, description: 'The record: its declared columns (unset columns are null)' },
    ...errorResponses(400, 404),
  },
} as const;

export const REPLACE_RECORD = {
  summary: 'Replace a record: columns omitted from the body are set to null',
  tags: ['records'],
  params: RECORD_PARAMS,
  body: RECORD_OBJECT,
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;

const PATCH_ELEMENT = {
  type: 'object',
  description: 'Columns to change; `_id` names the record (default: the record of the path)',
  properties: { _id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
  additionalProperties: true,
} as const;

export const PATCH_RECORD = {
  summary: 'Change the supplied columns of a record (or of several records, all or nothing)',
  tags: ['records'],
  params: RECORD_PARAMS,
  body: {
    description: 'An object of columns to change, or an array of such objects each naming its record with `_id`',
    oneOf: [RECORD_OBJECT, { type: 'array', minItems: 1, items: PATCH_ELEMENT }],
  },
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;

export const DELETE_RECORD = {
  summary: 'Delete a record',
  tags: ['records'],
  params: RECORD_PARAMS,
  response: { 200: EMPTY_RESPONSE, ...errorResponses(400, 404) },
} as const;
