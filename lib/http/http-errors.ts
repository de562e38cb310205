/**
 * HTTP error replies, shared by the http plugin and the protocols on it (REST, actions, the
 * explorer's events): `{errorCode, errorMessage}` with the error's HTTP status, for the http
 * plugin's own answers (no route, a malformed URL or request) and for routes registered without
 * an error handler of their own. Also the one mapping of fastify's errors (body parsing, schema
 * validation) to EngineErrors, which the protocols on top (REST, actions) share.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { EngineError } from '../../kernel/errors';
import { clientError, type ErrorLog } from '../../kernel/client-error';
import { paramsError, type SchemaIssue } from '../../kernel/schema-validator';

interface FastifyLikeError extends Error {
  code?: string;
  statusCode?: number;
  validation?: SchemaIssue[];
  validationContext?: string;
}

/** fastify's own errors as EngineErrors; anything else is returned unchanged. */
export function fromFastifyError(error: unknown, bodyLimit: number): unknown {
  if (error instanceof EngineError || !(error instanceof Error)) return error;
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
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new EngineError('MALFORMED_JSON', { reason: err.message });
  }
  if (err.validation && err.validation.length > 0) return validationError(err.validation, err.validationContext);
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new EngineError('INVALID_PARAMETER', { param: 'request', reason: err.message });
  }
  return error;
}

/**
 * A route schema's validation issue, naming the parameter as the client wrote it: `top` for
 * `?top=0`, `db` for the path's `{db}`, `fields[0].name` in the body.
 */
function validationError(issues: SchemaIssue[], where = 'body'): EngineError {
  if (where === 'headers') return paramsError(issues, 'headers');
  return paramsError(issues, '', where === 'params' ? 'path' : where);
}

/** The body of an error answer. */
export function errorBody(error: EngineError): { errorCode: number; errorMessage: string } {
  return { errorCode: error.code, errorMessage: error.message };
}

/** Answers a failed request (the http plugin's error handler). */
export function replyHttpError(reply: FastifyReply, request: FastifyRequest, error: FastifyError | unknown, bodyLimit: number): void {
  const shown = clientError(fromFastifyError(error, bodyLimit), request.log as ErrorLog, { method: request.method, url: request.url });
  void reply.code(shown.status).send(errorBody(shown));
}

/** Answers with `status` outside fastify's reply (router callbacks that hold the raw response). */
export function writeRawHttpError(res: ServerResponse, status: number, error: EngineError): void {
  const body = JSON.stringify(errorBody(error));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A whole HTTP response for a socket that never became a request (then closed). */
export function rawHttpErrorResponse(statusLine: string, error: EngineError): string {
  const body = JSON.stringify(errorBody(error));
  return `HTTP/1.1 ${statusLine}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
