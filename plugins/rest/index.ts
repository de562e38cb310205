/**
 * plugins/rest: the REST interface under `/engine/api/v1` (spec: Endpoints). It only translates:
 * HTTP Basic → principal, path/body → data commands on the bus, results → REST shapes. The
 * route schemas validate requests and are the OpenAPI document served at GET /openapi.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { definePlugin } from '../../kernel/plugin';
import { basicAuth } from './basic-auth';
import { restErrorHandler } from './reply-error';
import { useRestRequestParsing } from './request-parsing';
import { RestCommands } from './rest-commands';
import { indexRoutes } from './routes/indexes';
import { DOCUMENTATION_INLINE_STYLES, documentationUi, openapiRoutes, publicDocumentationUrls } from './routes/openapi';
import { queryRoutes } from './routes/query';
import { recordRoutes } from './routes/records';
import { tableRoutes } from './routes/tables';

export const REST_PREFIX = '/engine/api/v1';

export default definePlugin({
  name: 'rest',
  description: 'REST interface (tables, indexes, records, queries) with HTTP Basic authentication',
  dependencies: ['http', 'data'],
  register(engine) {
    const commands = new RestCommands(engine);
    const http = engine.need('http');
    const { fastify } = http;
    fastify.register(async (rest: FastifyInstance) => {
      await rest.register(fastifySwagger, {
        openapi: {
          openapi: '3.0.3',
          info: {
            title: 'engine REST',
            version: engine.version,
            description: 'Tables, indexes, records and index queries. Dates are `MM/DD/CCYY hh:mm:ss.ttt`, binary values hex. '
              + 'Errors answer `{errorCode, errorMessage}`.',
          },
          components: { securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' }, bearerAuth: { type: 'http', scheme: 'bearer', description: 'an authToken from the JSON actions\' createSession' } } },
          security: [{ basicAuth: [] }],
          tags: [
            { name: 'tables', description: 'Create, list and delete tables' },
            { name: 'indexes', description: 'Create, list, read and delete indexes' },
            { name: 'records', description: 'Create, read, replace, patch and delete records by record ID' },
            { name: 'query', description: 'Find records through an index' },
            { name: 'meta', description: 'This description' },
          ],
        },
      });
      // The OpenAPI UI at /engine/api/v1/documentation (the page public, the document not: openapi.ts).
      await documentationUi(rest, REST_PREFIX, http.pageSecurityHeaders('', DOCUMENTATION_INLINE_STYLES));
      useRestRequestParsing(rest);
      // Response schemas document the API (OpenAPI); records have open-ended columns, where
      // fast-json-stringify is slower than plain JSON.stringify, so serialize with the latter.
      rest.setSerializerCompiler(() => JSON.stringify);
      rest.setErrorHandler(restErrorHandler(engine.settings.body_limit_bytes));
      const authenticate = basicAuth(engine);
      const isPublicDocumentation = publicDocumentationUrls(REST_PREFIX);
      rest.addHook('onRequest', (request, reply, done) => {
        if (isPublicDocumentation(request.url)) {
          done();
          return;
        }
        authenticate(request, reply, done);
      });
      tableRoutes(rest, commands);
      indexRoutes(rest, commands);
      recordRoutes(rest, commands);
      queryRoutes(rest, commands);
      openapiRoutes(rest);
    }, { prefix: REST_PREFIX });
  },
});
