/**
 * The REST error handler: http-errors.ts's mapping (EngineError, fastify errors → EngineError),
 * with schema-validation errors worded to name the offending parameter (the unknown property,
 * the allowed values). Body: `{errorCode, errorMessage}` with the error's HTTP status.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { EngineError } from '../../kernel/errors';
import { httpError } from '../http/http-errors';

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function pathOf(where: string, pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  const joined = parts.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');
  if (where === 'body') return joined || 'body';
  return joined ? `${where}.${joined}` : where;
}

/** An EngineError naming the parameter of the first validation issue. */
export function validationError(issues: readonly ValidationIssue[], where: string): EngineError {
  const first = issues[0];
  switch (first.keyword) {
    case 'required':
      return new EngineError('MISSING_PARAMETER', { param: pathOf(where, first.instancePath, String(first.params.missingProperty)) });
    case 'additionalProperties':
      return new EngineError('INVALID_PARAMETER', {
        param: pathOf(where, first.instancePath, String(first.params.additionalProperty)), reason: 'unknown property',
      });
    case 'enum':
      return new EngineError('INVALID_PARAMETER', {
        param: pathOf(where, first.instancePath),
        reason: `must be one of ${(first.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      });
    default:
      return new EngineError('INVALID_PARAMETER', { param: pathOf(where, first.instancePath), reason: first.message ?? first.keyword });
  }
}

export function restErrorHandler(bodyLimit: number) {
  return function handleRestError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    const issues = (error as { validation?: ValidationIssue[] }).validation;
    const engineError = issues && issues.length > 0
      ? validationError(issues, (error as { validationContext?: string }).validationContext ?? 'body')
      : httpError(error, bodyLimit);
    if (engineError.status >= 500) request.log.error({ err: error }, 'request failed');
    void reply.code(engineError.status).send({ errorCode: engineError.code, errorMessage: engineError.message });
  };
}
