/**
 * Action errors on the wire, the one place they are built: the envelope's `errorCode` and
 * `errorMessage` (HTTP 200 for every parsed envelope; 400 or 413 for a body that never became
 * one). Params are named as the action wrote them (`maxRecords`, not the command's `limit`); an
 * unexpected error is answered with a reference and logged (kernel/client-error.ts).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { EngineError } from '../../kernel/errors';
import { clientError, type ErrorLog } from '../../kernel/client-error';
import { renameParam, type ParamRenames } from '../../kernel/param-names';
import { fromFastifyError } from '../../lib/http/http-errors';
import { responseEnvelope, type ActionResponse, type EnvelopeEcho } from './envelope';

/** Data-command param names → the action params they come from (plugins/actions/apis/db/). */
const ACTION_PARAM_NAMES: ParamRenames = [
  [/^database\b/, 'databaseName'],
  [/^table\b/, 'tableName'],
  [/^tables\b/, 'tableNames'],
  [/^index\b/, 'indexName'],
  [/^indexes\b/, 'indexNames'],
  [/^limit\b/, 'maxRecords'],
  [/^skip\b/, 'skipRecords'],
  [/^reverse\b/, 'reverseOrder'],
  [/^filter\b/, 'tableFilter'],
  [/^count\b/, 'fetchRecords'],
  [/^from\b/, 'startFrom'],
  [/^(lower|upper)\b/, 'indexRange'],
  [/^records\[(\d+)\]\.values\b/, 'sourceData[$1]'],
  [/^records\[(\d+)\]\.id\b/, 'sourceData[$1].id'],
  [/^records\b/, 'sourceData'],
  [/^format\.(\w+)/, '$1'],
];

/** Where an error happened, for the log entry of an unexpected one. */
export interface ActionErrorContext {
  log: ErrorLog;
  api?: string;
  action?: string;
}

/** The error as the client sees it: internals hidden (and logged), params named as sent. */
function shownError(error: unknown, { log, ...context }: ActionErrorContext): EngineError {
  return renameParam(clientError(error, log, context), ACTION_PARAM_NAMES);
}

/** The response envelope for a failed call; `authToken` is the session's when one was found. */
export function errorResponse(echo: EnvelopeEcho, authToken: string | undefined, error: unknown, where: ActionErrorContext): ActionResponse {
  const shown = shownError(error, where);
  return responseEnvelope(echo, authToken ?? echo.authToken ?? '', {}, shown.code, shown.message);
}

/** HTTP status of a body that never became an envelope: 413 when too large, else 400 (500 for a fault). */
function unparsedStatus(error: EngineError): number {
  if (error.status >= 500) return 500;
  return error.status === 413 ? 413 : 400;
}

/** Answers a body that never became an envelope (not JSON, too large, no body). */
export function replyUnparsedBody(reply: FastifyReply, request: FastifyRequest, error: unknown, bodyLimit: number): FastifyReply {
  const shown = shownError(fromFastifyError(error, bodyLimit), { log: request.log as ErrorLog });
  return reply.code(unparsedStatus(shown)).send(responseEnvelope({ hasRequestId: false }, '', {}, shown.code, shown.message));
}

/** The error handler of the actions context (fastify's body parsing errors). */
export function actionsErrorHandler(bodyLimit: number) {
  return function handleActionsError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    void replyUnparsedBody(reply, request, error, bodyLimit);
  };
}
