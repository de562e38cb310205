/**
 * The OpenAPI 3 document @fastify/swagger builds from the route schemas, and the OpenAPI UI
 * (@fastify/swagger-ui) that shows it.
 *
 * One policy for the document (docs/decisions.md, "OpenAPI"): it is a REST resource, so every
 * place that serves it asks for credentials like every REST route: `GET /openapi` and the UI's
 * own `/documentation/json` and `/documentation/yaml`. Only the UI's page and the swagger-ui
 * package's files are public (they hold nothing of this server); the page fetches the document,
 * and the browser asks for the account on the 401's Basic challenge.
 */
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** The OpenAPI UI, under the REST prefix. */
export const DOCUMENTATION_PATH = '/documentation';

/**
 * Says whether a request URL is part of the UI that needs no credentials: its page and the
 * package's static files, not the document. Asked on every REST request: any other URL is told
 * apart by one comparison, without allocating.
 */
export function publicDocumentationUrls(restPrefix: string): (url: string) => boolean {
  const page = `${restPrefix}${DOCUMENTATION_PATH}`;
  const files = `${page}/static/`;
  return (url) => {
    if (!url.startsWith(page)) return false;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    return path === page || path === `${page}/` || path.startsWith(files);
  };
}

/**
 * The one `<style>` element the UI adds (the top bar's logo, in swagger-ui-standalone-preset.js):
 * its page's CSP allows exactly this text. The browser tests fail on any other CSP violation.
 */
export const DOCUMENTATION_INLINE_STYLES: readonly string[] = ['.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'];

/**
 * Registers the UI at `<restPrefix>/documentation` (with or without the trailing slash), its page
 * sent with `pageHeaders` (the server's page security headers with DOCUMENTATION_INLINE_STYLES;
 * the UI has no inline script).
 */
export async function documentationUi(rest: FastifyInstance, restPrefix: string, pageHeaders: Record<string, string>): Promise<void> {
  await rest.register(fastifySwaggerUi, {
    routePrefix: DOCUMENTATION_PATH,
    // The page's file addresses without a trailing slash are absolute: they must include the
    // REST prefix (without it, /engine/api/v1/documentation loaded no script and stayed blank).
    indexPrefix: restPrefix,
    uiConfig: { persistAuthorization: false },
    uiHooks: {
      onRequest: (_request, reply, done) => {
        void reply.headers(pageHeaders);
        done();
      },
    },
  });
}

/** GET /openapi (authenticated by the REST plugin's hook like every route). */
export function openapiRoutes(fastify: FastifyInstance): void {
  fastify.get('/openapi', {
    schema: {
      summary: 'The OpenAPI 3 description of this interface',
      tags: ['meta'],
      response: { 200: { type: 'object', description: 'An OpenAPI 3.0 document', additionalProperties: true } },
    },
  }, async () => fastify.swagger());
}
