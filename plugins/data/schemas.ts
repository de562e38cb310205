/**
 * JSON schemas of data-command params, shared pieces. Compiled once by the bus (ajv): a wrong
 * type answers INVALID_PARAMETER and a missing required param MISSING_PARAMETER, naming the path.
 *
 * Objects stay open (no `additionalProperties: false`) so protocols can pass extra fields
 * forward-compatibly, except small objects where a typo would silently change the meaning
 * (`format`, bounds, cursor fetch).
 */
import type { ParamsSchema } from '../../kernel/bus/command';

/** Most records one request may ask for (record.find limit, cursor.fetch count). */
export const MAX_PAGE = 1_000_000;

export const nameSchema = { type: 'string', minLength: 1, maxLength: 64 } as const;
export const namesSchema = { type: 'array', minItems: 1, items: nameSchema } as const;
export const recordIdSchema = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
export const idsSchema = { type: 'array', items: recordIdSchema } as const;
export const transactionIdSchema = { type: 'string', minLength: 1, maxLength: 128 } as const;
export const columnNamesSchema = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 } } as const;

/** Partial ValueFormat (lib/values/wire-format.ts); merged over ISO_FORMAT. */
export const formatSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    dateFormat: { enum: ['rest', 'iso'] },
    binaryFormat: { enum: ['hex', 'base64', 'byteArray'] },
    variantFormat: { enum: ['json', 'binary', 'string', 'variantObject'] },
    numberFormat: { enum: ['number', 'string'] },
    stringFormat: { enum: ['json', 'hex'] },
  },
} as const;

/** A bound on leading index segments: wire values, inclusive (default true). */
export const boundSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['values'],
  properties: {
    values: { type: 'array' },
    inclusive: { type: 'boolean' },
  },
} as const;

export const prefixSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['values'],
  properties: {
    values: { type: 'array' },
    byteLength: { type: 'integer', minimum: 1 },
  },
} as const;

/** { database } */
export const databaseParams: ParamsSchema = {
  type: 'object',
  required: ['database'],
  properties: { database: nameSchema },
};

/** { database, table } plus extra properties. */
export function inTable(properties: Record<string, unknown> = {}, required: string[] = []): ParamsSchema {
  return {
    type: 'object',
    required: ['database', 'table', ...required],
    properties: { database: nameSchema, table: nameSchema, ...properties },
  };
}

/** The read params shared by record.find and cursor.open. */
export const readProperties = {
  index: nameSchema,
  lower: boundSchema,
  upper: boundSchema,
  prefix: prefixSchema,
  filter: { type: 'string', maxLength: 65_536 },
  reverse: { type: 'boolean' },
  skip: { type: 'integer', minimum: 0 },
  select: columnNamesSchema,
  format: formatSchema,
  transactionId: transactionIdSchema,
  countTotal: { type: 'boolean' },
} as const;
