/** GET /openapi: the OpenAPI 3 document @fastify/swagger builds from the route schemas. */
import type { FastifyInstance } from 'fastify';

export function openapiRoutes(fastify: FastifyInstance): void {
  fastify.get('/openapi', {
    schema: {
      summary: 'The OpenAPI 3 description of this interface',
      tags: ['meta'],
      response: { 200: { type: 'object', description: 'An OpenAPI 3.0 document', additionalProperties: true } },
    },
  }, async () => fastify.swagger());
}
