/**
 * plugins/actions: the JSON-action interface, `POST /api` on the HTTP and HTTPS ports.
 * Wiring only: the envelope (envelope.ts), the (api, action) table (action-table.ts, apis/*),
 * response options (response-options.ts) and the admin bus commands (admin-commands.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { definePlugin } from '../../kernel/plugin';
import { EngineError } from '../../kernel/errors';
import type { ErrorLog } from '../../kernel/client-error';
import { ActionTable } from './action-table';
import { registerAdminCommands } from './admin-commands';
import { adminActions } from './apis/admin';
import { dbActions } from './apis/db';
import { mqActions } from './apis/mq';
import {
  applyOmit, echoOf, parseActionBody, parseEnvelope, redactedRequest, responseText, successResponse, type ActionBody, type ActionResponse,
} from './envelope';
import { actionsErrorHandler, errorResponse, replyUnparsedBody } from './error-response';
import { utf8BodyText } from '../../lib/http/utf8-body';

export default definePlugin({
  name: 'actions',
  description: 'JSON-action interface (POST /api)',
  dependencies: ['http'],
  register(engine) {
    registerAdminCommands(engine);
    const table = new ActionTable({ admin: adminActions, db: dbActions, mq: mqActions });
    const bodyLimit = engine.settings.body_limit_bytes;
    const requests = engine.metrics.counter({
      name: 'engine_action_requests_total',
      help: 'JSON actions answered (POST /api), by api, action and errorCode (0: success)',
      labelNames: ['api', 'action', 'error_code'],
    });
    const latency = engine.metrics.histogram({
      name: 'engine_action_request_duration_seconds',
      help: 'Time to run a JSON action, from its envelope read to its response built, by api and action',
      labelNames: ['api', 'action'],
    });

    const routes = async (app: FastifyInstance): Promise<void> => {
      // Every body is read as JSON whatever its Content-Type (clients often send text/plain).
      app.removeAllContentTypeParsers();
      // Read as bytes: a body that is not UTF-8 is not JSON (400, 12009), not text with U+FFFD in it.
      app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => {
        try {
          done(null, parseActionBody(utf8BodyText(body)));
        } catch (error) {
          done(error as Error, undefined);
        }
      });

      // Bodies that never became an envelope: not JSON (400, 12009), too large (413, 12028).
      app.setErrorHandler(actionsErrorHandler(bodyLimit));

      // POST /api/<api> is POST /api with that api as the default (the SQLAlchemy dialect posts to
      // /api/db); POST /api/v1/action is POST /api (the product's MCP server posts there).
      const answer = async (request: FastifyRequest, reply: FastifyReply, pathApi: string | undefined): Promise<FastifyReply> => {
        const started = process.hrtime.bigint();
        const parsed = request.body as ActionBody | undefined;
        if (parsed === undefined) {
          return replyUnparsedBody(reply, request, new EngineError('MALFORMED_JSON', { reason: 'the request has no body' }), bodyLimit);
        }
        const body = parsed.value;
        const echo = echoOf(parsed);
        let authToken: string | undefined;
        let omit: readonly string[] = [];
        let response: ActionResponse;
        let debug: string | undefined;
        let api: string | undefined;
        let action: string | undefined;
        try {
          const envelope = parseEnvelope(body);
          if (envelope.api === undefined && pathApi !== undefined) envelope.api = pathApi;
          ({ debug, api, action } = envelope);
          const outcome = await table.run(engine, envelope, (session, options) => {
            authToken = session?.authToken;
            if (options) omit = options.omit;
          }, request.socket.remoteAddress, request.socket);
          response = successResponse(echo, outcome.authToken, outcome.result);
        } catch (error) {
          response = errorResponse(echo, authToken, error, { log: request.log as ErrorLog, api, action });
        }
        const elapsedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
        const [apiLabel, actionLabel] = table.metricLabels(api, action);
        requests.inc([apiLabel, actionLabel, String(response.errorCode)]);
        latency.observe(elapsedSeconds, apiLabel, actionLabel);
        if (debug === 'max') {
          response.debugInfo = {
            request: redactedRequest(body),
            elapsedMilliseconds: elapsedSeconds * 1000,
          };
        }
        let text: string;
        try {
          text = responseText(applyOmit(response, omit), echo);
        } catch (error) {
          // A result that cannot be written as JSON is this call's failure, answered like any
          // other (HTTP 200, an envelope), not the HTTP 500 of fastify's serializer failing.
          text = responseText(applyOmit(errorResponse(echo, authToken, error, { log: request.log as ErrorLog, api, action }), omit), echo);
        }
        return reply.code(200).type('application/json; charset=utf-8').send(text);
      };
      app.post('/api', (request, reply) => answer(request, reply, undefined));
      app.post('/api/v1/action', (request, reply) => answer(request, reply, undefined));
      app.post<{ Params: { api: string } }>('/api/:api', (request, reply) => answer(request, reply, request.params.api));
    };
    engine.need('http').fastify.register(routes);
  },
});
