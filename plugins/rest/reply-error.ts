/**
 * REST errors on the wire, the one place they are built: the error's HTTP status and the body
 * `{errorCode, errorMessage}`, with `WWW-Authenticate` on a 401 and `Retry-After` when failed
 * logins back off. Params are named as REST names them (`top`, not the command's `limit`); an
 * unexpected error is answered with a reference and logged (kernel/client-error.ts).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { EngineError } from '../../kernel/errors';
import { clientError, type ErrorLog } from '../../kernel/client-error';
import { renameParam, type ParamRenames } from '../../kernel/param-names';
import { fromFastifyError } from '../../lib/http/http-errors';

export const WWW_AUTHENTICATE = 'Basic realm="engine", charset="UTF-8"';

/** Data-command param names → what a REST client sent (the path's `{db}`, `?top=`, the body). */
const REST_PARAM_NAMES: ParamRenames = [
  [/^database\b/, 'db'],
  [/^limit\b/, 'top'],
  [/^prefix\.byteLength\b/, 'advanced_find.find_set.length'],
  [/^prefix\.values\b/, 'advanced_find.find_set.fields'],
  [/^(lower|upper)\b/, 'find'],
  [/^records\[(\d+)\]\.id\b/, '[$1]._id'],
  [/^records\[(\d+)\]\.values\b/, '[$1]'],
  [/^records\b/, 'body'],
];

/** The REST form of any error: named for REST, internals hidden. */
function restError(error: unknown, request: FastifyRequest): EngineError {
  const shown = clientError(error, request.log as ErrorLog, { method: request.method, url: request.url });
  return renameParam(shown, REST_PARAM_NAMES);
}

/** Sends the answer for `error` (also used by the authentication hook). */
export function replyRestError(reply: FastifyReply, request: FastifyRequest, error: unknown): FastifyReply {
  const shown = restError(error, request);
  if (shown.status === 401) void reply.header('www-authenticate', WWW_AUTHENTICATE);
  if (shown.id === 'TOO_MANY_FAILED_LOGINS') void reply.header('retry-after', String(shown.details.retryAfter));
  return reply.code(shown.status).send({ errorCode: shown.code, errorMessage: shown.message });
}

/** The REST context's error handler: route errors, fastify's parsing and validation errors. */
export function restErrorHandler(bodyLimit: number) {
  return function handleRestError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    void replyRestError(reply, request, fromFastifyError(error, bodyLimit));
  };
}
