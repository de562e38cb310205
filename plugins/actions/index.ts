/**
 * plugins/actions: the JSON-action interface, `POST /api` on the HTTP and HTTPS ports.
 * Wiring only: the envelope (envelope.ts), the (api, action) table (action-table.ts, apis/*),
 * response options (response-options.ts) and the admin bus commands (admin-commands.ts).
 */
import type { FastifyInstance } from 'fastify';
import { definePlugin } from '../../kernel/plugin';
import { EngineError } from '../../kernel/errors';
import { httpError } from '../http/http-errors';
import { ActionTable } from './action-table';
import { registerAdminCommands } from './admin-commands';
import { adminActions } from './apis/admin';
import { dbActions } from './apis/db';
import { mqActions } from './apis/mq';
import { applyOmit, echoOf, errorResponse, parseEnvelope, parseJsonBody, redactedRequest, successResponse, type ActionResponse } from './envelope';

export default definePlugin({
  name: 'actions',
  description: 'JSON-action interface (POST /api)',
  dependencies: ['http'],
  register(engine) {
    registerAdminCommands(engine);
    const table = new ActionTable({ admin: adminActions, db: dbActions, mq: mqActions });
    const bodyLimit = engine.settings.body_limit_bytes;

    const routes = async (app: FastifyInstance): Promise<void> => {
      // Every body is read as JSON whatever its Content-Type (clients often send text/plain).
      app.removeAllContentTypeParsers();
      app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, text, done) => {
        try {
          done(null, parseJsonBody(text as string));
        } catch (error) {
          done(error as Error, undefined);
        }
      });

      // Bodies that never became an envelope: not JSON (400, 12009), too large (413, 12028).
      app.setErrorHandler((error, request, reply) => {
        const engineError = httpError(error, bodyLimit);
        if (engineError.status >= 500) request.log.error({ err: error }, 'action request failed');
        const status = engineError.status >= 500 ? 500 : engineError.status === 413 ? 413 : 400;
        void reply.code(status).send(errorResponse({ hasRequestId: false }, undefined, engineError));
      });

      app.post('/api', async (request, reply) => {
        const started = process.hrtime.bigint();
        const body = request.body;
        if (body === undefined) {
          return reply.code(400).send(errorResponse({ hasRequestId: false }, undefined, new EngineError('MALFORMED_JSON', { reason: 'the request has no body' })));
        }
        const echo = echoOf(body);
        let authToken: string | undefined;
        let omit: readonly string[] = [];
        let response: ActionResponse;
        let debug: string | undefined;
        try {
          const envelope = parseEnvelope(body);
          debug = envelope.debug;
          const outcome = await table.run(engine, envelope, (session, options) => {
            authToken = session?.authToken;
            if (options) omit = options.omit;
          }, request.socket.remoteAddress);
          response = successResponse(echo, outcome.authToken, outcome.result);
        } catch (error) {
          const engineError = error instanceof EngineError ? error : undefined;
          if (!engineError || engineError.status >= 500) request.log.error({ err: error }, 'action failed');
          response = errorResponse(echo, authToken, error);
        }
        if (debug === 'max') {
          response.debugInfo = {
            request: redactedRequest(body),
            elapsedMilliseconds: Number(process.hrtime.bigint() - started) / 1e6,
          };
        }
        return reply.code(200).send(applyOmit(response, omit));
      });
    };
    engine.need('http').fastify.register(routes);
  },
});
