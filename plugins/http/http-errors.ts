/** Maps anything a route throws (EngineError, fastify's own errors) to an EngineError. */
import { EngineError, toEngineError } from '../../kernel/errors';

interface FastifyLikeError extends Error {
  code?: string;
  statusCode?: number;
  validation?: Array<{ instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }>;
  validationContext?: string;
}

export function httpError(error: unknown, bodyLimit: number): EngineError {
  if (error instanceof EngineError) return error;
  const err = error as FastifyLikeError;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new EngineError('CONTENT_TOO_LARGE', { limit: bodyLimit });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new EngineError('MALFORMED_JSON', { reason: err.message });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new EngineError('INVALID_PARAMETER', { param: 'Content-Type', reason: 'send application/json' });
  }
  if (err instanceof SyntaxError || err.statusCode === 400 && /JSON/i.test(err.message)) {
    return new EngineError('MALFORMED_JSON', { reason: err.message });
  }
  if (err.validation && err.validation.length > 0) {
    const first = err.validation[0];
    const where = err.validationContext ?? 'body';
    const path = first.instancePath.split('/').filter(Boolean).join('.');
    if (first.keyword === 'required') {
      const missing = String(first.params.missingProperty);
      return new EngineError('MISSING_PARAMETER', { param: [where === 'body' ? '' : where, path, missing].filter(Boolean).join('.') });
    }
    return new EngineError('INVALID_PARAMETER', { param: [where, path].filter(Boolean).join('.'), reason: first.message ?? first.keyword });
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new EngineError('INVALID_PARAMETER', { param: 'request', reason: err.message });
  }
  return toEngineError(error);
}
