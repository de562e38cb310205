/**
 * One ajv instance for the kernel (command params and settings compile against it once), and the
 * one mapping of a schema-validation issue to an EngineError, used by the bus, the action table
 * and the REST routes alike.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { EngineError } from './errors';

export const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: false });
addFormats(ajv);

export type { ValidateFunction };

/**
 * A validator compiled at its first use. Compiling every command's and action's schema took a
 * quarter of a server's start; most are never run in a process's life. `what`'s schema is checked
 * against JSON Schema now, so a wrong one still fails at registration. `instance`: another ajv
 * with other options (REST's coercing one).
 */
export function lazyValidator(schema: Record<string, unknown>, what: string, instance: Ajv = ajv): ValidateFunction {
  if (!instance.validateSchema(schema)) throw new Error(`${what}: its schema is not valid JSON Schema: ${instance.errorsText(instance.errors)}`);
  let compiled: ValidateFunction | undefined;
  // `errors` is read off the function called (ajv's convention, and fastify's).
  const validate = ((data: unknown) => {
    compiled ??= instance.compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

/** The part of an ajv error (fastify's `error.validation` holds the same) the mapping reads. */
export interface SchemaIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Turns the first issue into MISSING_PARAMETER or INVALID_PARAMETER naming the parameter by its
 * path (`fields[2].name`). `root` prefixes that path; `whole` names the validated object itself
 * when the issue is about it rather than one of its properties.
 */
export function paramsError(issues: readonly SchemaIssue[] | null | undefined, root = '', whole = root || 'params'): EngineError {
  const first = issues && issues.length > 0 ? telling(issues) : undefined;
  if (!first) return new EngineError('INVALID_PARAMETER', { param: whole, reason: 'invalid' });
  const at = (extra?: string): string => paramPath(root, first.instancePath, extra) || whole;
  switch (first.keyword) {
    case 'required':
      return new EngineError('MISSING_PARAMETER', { param: at(String(first.params.missingProperty)) });
    case 'additionalProperties':
      return new EngineError('INVALID_PARAMETER', { param: at(String(first.params.additionalProperty)), reason: 'unknown property' });
    case 'enum':
      return new EngineError('INVALID_PARAMETER', {
        param: at(),
        reason: `must be one of ${(first.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`,
      });
    default:
      return new EngineError('INVALID_PARAMETER', { param: at(), reason: first.message ?? first.keyword });
  }
}

/**
 * The issue that says what is wrong. ajv stops at the first failing keyword; when that is a
 * `oneOf`/`anyOf`, the list holds each alternative's issues first. An alternative of the wrong
 * type did not apply, so the first issue of one that did is the telling one (`[0]._id` must be
 * >= 1, not "must be object"); when none applied, the value has none of the allowed types.
 */
function telling(issues: readonly SchemaIssue[]): SchemaIssue {
  const last = issues[issues.length - 1];
  if (issues.length === 1 || (last.keyword !== 'oneOf' && last.keyword !== 'anyOf')) return issues[0];
  const alternatives = issues.slice(0, -1);
  const applied = alternatives.find((issue) => !(issue.keyword === 'type' && issue.instancePath === last.instancePath));
  if (applied) return applied;
  const types = alternatives.map((issue) => String(issue.params.type));
  return { ...last, keyword: 'type', message: `must be ${types.join(' or ')}` };
}

/** `root` + a JSON pointer (+ one more property) as a path: `/fields/2` + `name` → `fields[2].name`. */
function paramPath(root: string, pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let path = root;
  for (const part of parts) path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`;
  return path;
}
