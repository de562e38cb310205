/**
 * plugins/metrics: `GET /metrics` on the HTTP and HTTPS ports, the Prometheus text format through
 * prom-client (docs/operations.md, "Metrics"). What it serves is what the engine's parts add to
 * `engine.metrics` (kernel/metrics.ts), read at scrape time; this plugin imports none of them.
 *
 * With `metrics_require_auth` (the default) a scrape logs in with Basic or Bearer, like REST, and
 * runs the bus command `metrics.read`, so the kernel's one decision says who may read them (a
 * role granting `metrics.read` on `system`). Without it, anyone who reaches the port may.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { definePlugin } from '../../kernel/plugin';
import { clientError, type ErrorLog } from '../../kernel/client-error';
import { SYSTEM_PRINCIPAL } from '../../kernel/auth/principal';
import { errorBody } from '../../lib/http/http-errors';
import { principalOfHeader } from '../../lib/http/authorization-header';
import { PrometheusRegistry } from './prometheus-registry';

export const METRICS_PATH = '/metrics';
export const METRICS_READ_COMMAND = 'metrics.read';

export default definePlugin({
  name: 'metrics',
  description: 'GET /metrics: the engine\'s figures in the Prometheus text format (prom-client)',
  dependencies: ['http'],
  register(engine) {
    const prometheus = new PrometheusRegistry(engine.metrics);
    engine.bus.register({
      name: METRICS_READ_COMMAND,
      summary: 'the engine\'s metrics in the Prometheus text format',
      params: { type: 'object', additionalProperties: false, properties: {} },
      resource: () => ({ kind: 'system' }),
      handler: () => prometheus.text(),
    });
    const requireAuth = engine.settings.metrics_require_auth;

    engine.need('http').fastify.get(METRICS_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        const principal = requireAuth ? await principalOfHeader(engine, request.headers.authorization, request.socket.remoteAddress) : SYSTEM_PRINCIPAL;
        const text = await engine.bus.execute(METRICS_READ_COMMAND, {}, { principal, origin: 'metrics' }) as string;
        return reply.type(prometheus.contentType).header('cache-control', 'no-store').send(text);
      } catch (error) {
        const shown = clientError(error, request.log as ErrorLog, { method: request.method, url: METRICS_PATH });
        if (shown.id === 'BAD_CREDENTIALS') void reply.header('www-authenticate', 'Basic realm="engine"');
        if (shown.id === 'TOO_MANY_FAILED_LOGINS') void reply.header('retry-after', String(shown.details.retryAfter ?? 1));
        return reply.code(shown.status).send(errorBody(shown));
      }
    });
  },
});
