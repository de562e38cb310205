/** Schema of the query route (POST /query/{db}/{table}/{index}). */
import { INDEX_PARAMS, RECORD_OBJECT, SCALAR_VALUE, errorResponses } from './common';

const OPERATORS = ['<', '<=', '=', '==', '>=', '>', 'between', 'BETWEEN'];

const FIND_CONDITION = {
  type: 'object',
  description: 'A condition on the index\'s first field. `between` takes its bounds from lowervalue/excludelowervalue and uppervalue/excludeuppervalue.',
  properties: {
    operator: { type: 'string', enum: OPERATORS },
    value: SCALAR_VALUE,
    lowervalue: { ...SCALAR_VALUE, description: 'Lower bound, matching records included (not with excludelowervalue)' },
    excludelowervalue: { ...SCALAR_VALUE, description: 'Lower bound, matching records excluded (not with lowervalue)' },
    uppervalue: { ...SCALAR_VALUE, description: 'Upper bound, matching records included (not with excludeuppervalue)' },
    excludeuppervalue: { ...SCALAR_VALUE, description: 'Upper bound, matching records excluded (not with uppervalue)' },
  },
  required: ['operator'],
  additionalProperties: false,
} as const;

const FIELD_VALUES = {
  type: 'object',
  description: 'Index field names (a JSON-property segment is named by its `key`) mapped to values',
  additionalProperties: SCALAR_VALUE,
} as const;

export const QUERY = {
  summary: 'Find records through an index',
  tags: ['query'],
  params: INDEX_PARAMS,
  querystring: {
    type: 'object',
    properties: {
      top: { type: 'integer', minimum: 1, description: 'Maximum number of records returned (required, 1 or more)' },
      skip: { type: 'integer', minimum: 0, default: 0, description: 'Records to skip before returning' },
    },
    required: ['top'],
  },
  body: {
    type: 'object',
    description: 'Exactly one of `find` and `advanced_find`',
    properties: {
      find: {
        type: 'object',
        description: 'One entry: the name of the index\'s first field mapped to a condition',
        minProperties: 1,
        maxProperties: 1,
        additionalProperties: FIND_CONDITION,
      },
      advanced_find: {
        type: 'object',
        description: 'Exactly one of `find_set` and `find_record`',
        minProperties: 1,
        maxProperties: 1,
        properties: {
          find_set: {
            type: 'object',
            description: 'Records whose leading index segments start with the given values; `length` is the number of key bytes that must match',
            properties: { length: { type: 'integer', minimum: 0 }, fields: FIELD_VALUES },
            required: ['length', 'fields'],
            additionalProperties: false,
          },
          find_record: {
            type: 'object',
            description: 'Records compared with a full key: `fields` gives a value for every segment of the index',
            properties: { operator: { type: 'string', enum: ['<', '<=', '=', '==', '>=', '>'] }, fields: FIELD_VALUES },
            required: ['operator', 'fields'],
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      filter: { type: 'string', description: 'Extra criteria over any columns, e.g. `age >= 18 && name != "Bob"`' },
      reverse: { type: 'boolean', default: false, description: 'true returns the results in the opposite order' },
      select: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Only these columns are returned' },
    },
    additionalProperties: false,
    example: { find: { name: { operator: 'between', lowervalue: 'A', excludeuppervalue: 'B' } }, reverse: false },
  },
  response: {
    200: {
      type: 'object',
      description: 'The matching records in index order (reversed with `reverse`), after `skip`, at most `top`',
      properties: {
        _records: {
          type: 'array',
          items: {
            ...RECORD_OBJECT,
            description: 'A record: `_id` and its declared (or selected) columns',
            properties: { _id: { type: 'integer' } },
            required: ['_id'],
          },
        },
      },
      required: ['_records'],
    },
    ...errorResponses(400, 404),
  },
} as const;
