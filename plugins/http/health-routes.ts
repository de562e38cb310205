/**
 * `GET /health/live` and `GET /health/ready` for orchestrators (docs/operations.md, "Health
 * checks and shutdown"): no authentication, and nothing in the answer but the verdict (no
 * version, no plugin, no reason: the reason is logged at debug level).
 *
 * live: the process answers HTTP (200 while it does, also while draining).
 * ready: `engine.readiness` holds: started, not stopping, every plugin's check (listeners up,
 * storage open); 503 otherwise, so a load balancer stops sending work before the listeners close.
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';

export const HEALTH_LIVE_PATH = '/health/live';
export const HEALTH_READY_PATH = '/health/ready';

export function registerHealthRoutes(fastify: FastifyInstance, engine: Engine): void {
  fastify.get(HEALTH_LIVE_PATH, (_request, reply) => {
    void reply.header('cache-control', 'no-store').send({ status: 'live' });
  });
  fastify.get(HEALTH_READY_PATH, (request, reply) => {
    const reason = engine.readiness.notReadyBecause();
    void reply.header('cache-control', 'no-store');
    if (reason === undefined) return void reply.send({ status: 'ready' });
    request.log.debug({ reason }, 'not ready');
    return void reply.code(503).send({ status: 'not ready' });
  });
}
