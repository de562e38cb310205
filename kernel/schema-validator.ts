/** One ajv instance for the kernel: command params and settings compile against it once. */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { EngineError } from './errors';

export const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: false });
addFormats(ajv);

export type { ValidateFunction };

/** Turns the first ajv error into MISSING_PARAMETER or INVALID_PARAMETER naming the param path. */
export function paramsError(errors: ErrorObject[] | null | undefined, root = ''): EngineError {
  const first = errors?.[0];
  if (!first) return new EngineError('INVALID_PARAMETER', { param: root || 'params', reason: 'invalid' });
  const path = jsonPointerToPath(first.instancePath, root);
  if (first.keyword === 'required') {
    const missing = String((first.params as { missingProperty: string }).missingProperty);
    return new EngineError('MISSING_PARAMETER', { param: path ? `${path}.${missing}` : missing });
  }
  if (first.keyword === 'additionalProperties') {
    const extra = String((first.params as { additionalProperty: string }).additionalProperty);
    return new EngineError('INVALID_PARAMETER', { param: path ? `${path}.${extra}` : extra, reason: 'unknown parameter' });
  }
  return new EngineError('INVALID_PARAMETER', { param: path || root || 'params', reason: first.message ?? first.keyword });
}

function jsonPointerToPath(pointer: string, root: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const joined = parts.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');
  if (!root) return joined;
  return joined ? `${root}${joined.startsWith('[') ? '' : '.'}${joined}` : root;
}
