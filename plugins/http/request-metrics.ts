/**
 * The metrics of HTTP requests (docs/operations.md, "Metrics"): answered requests by method, route
 * pattern and status, and their latency, counted in one onResponse hook.
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';

/**
 * Requests by route (the route's pattern, `unmatched` for a 404: never the URL a client chose)
 * and status, and their latency: one counter step and one observation per response.
 */
export function countRequests(engine: Engine, fastify: FastifyInstance): void {
  const requests = engine.metrics.counter({
    name: 'engine_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
  });
  const latency = engine.metrics.histogram({
    name: 'engine_http_request_duration_seconds',
    help: 'Time from an HTTP request read to its response sent, by method and route pattern',
    labelNames: ['method', 'route'],
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc([request.method, route, String(reply.statusCode)]);
    latency.observe(reply.elapsedTime / 1000, request.method, route);
    done();
  });
}
