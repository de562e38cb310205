/**
 * Transform fields, the pure part (docs/storage.md, "Transform fields"): checking a declared
 * field, and reading its value from a message's payload. A value is computed from the message
 * alone, so the same message always gives the same value (replay, back-fill and append agree).
 *
 * A property that is missing, or holds a value the column's type cannot take, reads null; the
 * reason goes to the message's `error` / `log` columns.
 */
import { EngineError } from '../../kernel/errors';
import type { TransformField, TransformFieldInput } from '../../kernel/storage/message-log-port';
import type { ColumnDefinition, VariantValue } from '../../kernel/storage/types';
import { INTEGER_RANGES, normalizeColumn } from '../../lib/values/column-types';
import { parseDate, parseTime, parseTimestamp } from '../../lib/values/timestamps';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../lib/values/json-depth';
import { TOPIC_COLUMNS } from './integration-tables';
import { resolveKeySegments, type KeySegmentSpec } from './index-keys';
import type { TableDefinition } from '../../kernel/storage/types';

/** The property path's steps after `source_payload`: a property name or an array position. */
export type PathStep = string | number;

/** At most this many transform fields per topic. */
export const MAX_TRANSFORM_FIELDS = 64;
/** The longest `recordPath` (the whole list is kept in the topic's catalog entry). */
const MAX_RECORD_PATH = 1024;

/** Types a JSON property can be read into (binary, variant and decimal types cannot come from JSON losslessly). */
const TRANSFORM_TYPES = new Set([
  'bit', 'tinyint', 'smallint', 'integer', 'bigint', 'real', 'float', 'date', 'time', 'timestamp', 'char', 'varchar', 'lvarchar', 'json',
]);

const BUILT_IN = new Set(['id', ...TOPIC_COLUMNS.map((c) => c.name)]);

function bad(index: number, property: string, reason: string): EngineError {
  return new EngineError('INVALID_PARAMETER', { param: `mapOfPropertiesToFields[${index}].${property}`, reason });
}

/**
 * `source_payload.a.b[2]["c d"]` → ['a', 'b', 2, 'c d']. Names are the characters up to the next
 * `.` or `[`; a bracket holds a position or a quoted name.
 */
export function parseRecordPath(path: string): PathStep[] | null {
  const root = 'source_payload';
  if (!path.startsWith(root)) return null;
  const steps: PathStep[] = [];
  let i = root.length;
  while (i < path.length) {
    if (path[i] === '.') {
      let j = i + 1;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
      if (j === i + 1) return null;
      steps.push(path.slice(i + 1, j));
      i = j;
    } else if (path[i] === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) return null;
      const inner = path.slice(i + 1, close);
      if (/^\d+$/.test(inner)) steps.push(Number(inner));
      else if (inner.length >= 2 && (inner[0] === '"' || inner[0] === "'") && inner[inner.length - 1] === inner[0]) steps.push(inner.slice(1, -1));
      else return null;
      i = close + 1;
    } else {
      return null;
    }
  }
  return steps;
}

/** A field as declared, checked and normalized (names lower-case, the type by its engine name). */
export interface CheckedField extends TransformField {
  steps: PathStep[];
  column: ColumnDefinition;
}

/** Checks a topic's transform fields; throws INVALID_PARAMETER naming the bad property. */
export function checkTransformFields(inputs: unknown): CheckedField[] {
  if (!Array.isArray(inputs)) throw new EngineError('INVALID_PARAMETER', { param: 'mapOfPropertiesToFields', reason: 'an array is required' });
  if (inputs.length > MAX_TRANSFORM_FIELDS) {
    throw new EngineError('INVALID_PARAMETER', { param: 'mapOfPropertiesToFields', reason: `at most ${MAX_TRANSFORM_FIELDS} fields per topic` });
  }
  const names = new Set<string>();
  const indexes = new Set<string>(['id_pk', 'create_ts_idx']);
  return inputs.map((raw, i): CheckedField => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad(i, 'fieldName', 'each field is an object');
    const input = raw as TransformFieldInput;
    if (typeof input.recordPath !== 'string') throw bad(i, 'recordPath', 'a string like "source_payload.temperature" is required');
    if (input.recordPath.length > MAX_RECORD_PATH) throw bad(i, 'recordPath', `at most ${MAX_RECORD_PATH} characters`);
    const steps = parseRecordPath(input.recordPath);
    if (steps === null || steps.length === 0) throw bad(i, 'recordPath', 'write "source_payload" and then the property path, e.g. "source_payload.sensor.temperature" or "source_payload.values[0]"');
    let column: ColumnDefinition;
    try {
      column = normalizeColumn({ name: input.fieldName, type: input.type, length: input.length ?? undefined }, i);
    } catch (error) {
      throw bad(i, typeof input.fieldName === 'string' ? 'type' : 'fieldName', error instanceof EngineError ? String(error.details.reason ?? error.message) : String(error));
    }
    if (!TRANSFORM_TYPES.has(column.type)) throw bad(i, 'type', `a transform field is one of ${[...TRANSFORM_TYPES].join(', ')}`);
    if (BUILT_IN.has(column.name)) throw bad(i, 'fieldName', `"${column.name}" is a built-in column of integration tables`);
    if (names.has(column.name)) throw bad(i, 'fieldName', `"${column.name}" is declared twice`);
    names.add(column.name);
    let indexName: string | null = null;
    if (input.indexName !== undefined && input.indexName !== null) {
      if (typeof input.indexName !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(input.indexName)) {
        throw bad(i, 'indexName', 'use 1 to 64 letters, digits or "_", not starting with a digit');
      }
      indexName = input.indexName.toLowerCase();
      if (indexes.has(indexName)) throw bad(i, 'indexName', `index "${indexName}" is declared twice or is built in`);
      indexes.add(indexName);
    }
    const nullable: ColumnDefinition = { ...column, nullable: true, defaultValue: null, autoValue: 'none', primaryKey: 0 } as ColumnDefinition;
    const field: CheckedField = {
      fieldName: column.name, recordPath: input.recordPath, type: column.type, length: column.length ?? null, indexName, steps, column: nullable,
    };
    if (indexName !== null) {
      try {
        indexSpecs(field);
      } catch (error) {
        throw bad(i, 'indexName', `the field cannot be indexed: ${error instanceof EngineError ? String(error.details.reason ?? error.message) : String(error)}`);
      }
    }
    return field;
  });
}

/** The key layout of a field's index (one segment, the field itself). */
export function indexSpecs(field: CheckedField): KeySegmentSpec[] {
  const def = { columns: [field.column], indexes: [] } as unknown as TableDefinition;
  return resolveKeySegments(def, [{ name: field.fieldName, ascending: true }], field.indexName ?? undefined);
}

/** Why a property read null, or its value in the column's canonical form. */
export type FieldOutcome = { value: unknown; reason: null } | { value: null; reason: string };

const MISSING: FieldOutcome = { value: null, reason: 'the property is missing' };

function wrongType(expected: string, found: unknown): FieldOutcome {
  const kind = found === null ? 'null' : Array.isArray(found) ? 'an array' : typeof found === 'object' ? 'an object' : `a ${typeof found}`;
  return { value: null, reason: `expected ${expected}, found ${kind}` };
}

/** The value at `steps` inside a parsed payload; undefined when absent. */
function at(root: unknown, steps: readonly PathStep[]): unknown {
  let v = root;
  for (let i = 0; i < steps.length; i++) {
    if (v === null || typeof v !== 'object') return undefined;
    const step = steps[i];
    if (typeof step === 'number') {
      if (!Array.isArray(v)) return undefined;
      v = v[step];
    } else {
      if (Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, step)) return undefined;
      v = (v as Record<string, unknown>)[step];
    }
  }
  return v;
}

/** A JSON value as the column's canonical value. */
export function convert(column: ColumnDefinition, found: unknown): FieldOutcome {
  if (found === undefined) return MISSING;
  if (found === null) return { value: null, reason: null };
  switch (column.type) {
    case 'bit':
      return typeof found === 'boolean' ? { value: found, reason: null } : wrongType('a boolean', found);
    case 'tinyint': case 'smallint': case 'integer': case 'bigint': {
      if (typeof found !== 'number' || !Number.isInteger(found)) return wrongType('an integer', found);
      const range = INTEGER_RANGES[column.type];
      if (!Number.isSafeInteger(found) || BigInt(found) < range.min || BigInt(found) > range.max) {
        return { value: null, reason: `${found} is out of range for ${column.type}` };
      }
      return { value: found, reason: null };
    }
    case 'real': case 'float':
      return typeof found === 'number' ? { value: found, reason: null } : wrongType('a number', found);
    case 'date': case 'time': case 'timestamp': {
      if (typeof found !== 'string') return wrongType(`a ${column.type} string`, found);
      const parsed = column.type === 'date' ? parseDate(found) : column.type === 'time' ? parseTime(found) : parseTimestamp(found);
      return parsed === null ? { value: null, reason: `"${found.slice(0, 40)}" is not a ${column.type}` } : { value: parsed, reason: null };
    }
    case 'char': case 'varchar': case 'lvarchar': {
      if (typeof found !== 'string') return wrongType('a string', found);
      if (column.length !== null && column.length !== undefined && [...found].length > column.length) {
        return { value: null, reason: `longer than ${column.length} characters` };
      }
      return { value: found, reason: null };
    }
    case 'json':
      // As a json column: a value nested deeper than any stored JSON value may be is not kept
      // (encoding it would run out of stack).
      if (jsonDepthExceeds(found, MAX_JSON_DEPTH)) return { value: null, reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
      return { value: found, reason: null };
    default:
      return { value: null, reason: `a ${column.type} column cannot be read from JSON` };
  }
}

/**
 * The payload as JSON, parsed once for all of a message's fields; `undefined` with the reason when
 * it is not a JSON object or array.
 */
export function parsedPayload(payload: VariantValue): { root: unknown; reason: string | null } {
  if (payload.type !== 'json') return { root: undefined, reason: `the payload is not JSON (it is ${payload.type})` };
  let root: unknown;
  try {
    root = JSON.parse(payload.value as string);
  } catch {
    return { root: undefined, reason: 'the payload is not valid JSON' };
  }
  return { root, reason: null };
}

/** A field's outcome for a parsed payload (`parsedPayload`). */
export function readField(field: CheckedField, parsed: { root: unknown; reason: string | null }): FieldOutcome {
  if (parsed.reason !== null) return { value: null, reason: parsed.reason };
  return convert(field.column, at(parsed.root, field.steps));
}
