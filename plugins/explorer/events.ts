/**
 * `GET /apps/explorer/events`: Server-Sent Events for the explorer's live figures, coalesced to
 * one `overview` event per second (docs/explorer.md). The token is sent as
 * `Authorization: Bearer <authToken>` (the page reads the stream with fetch), never in the URL.
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';

const PUSH_INTERVAL_MS = 1000;

export function explorerEvents(app: FastifyInstance, engine: Engine, path: string): void {
  const open = new Set<() => void>();
  engine.onClose(async () => { for (const end of open) end(); });
  app.get(path, { compress: false }, (request, reply) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    const session = token ? engine.apiSessions.findByToken(token) : undefined;
    if (!session) {
      const error = new EngineError('INVALID_TOKEN');
      return reply.code(401).send({ errorCode: error.code, errorMessage: error.message });
    }
    const principal = engine.accounts.principal(session.account);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    const push = async (): Promise<void> => {
      if (!engine.apiSessions.findByToken(token)) {
        res.end('event: ended\ndata: {}\n\n');
        return;
      }
      try {
        const overview = engine.bus.has('mq.overview')
          ? await engine.bus.execute('mq.overview', {}, { principal, origin: 'explorer' })
          : {};
        res.write(`event: overview\ndata: ${JSON.stringify(overview)}\n\n`);
      } catch (error) {
        res.write(`event: error\ndata: ${JSON.stringify({ errorMessage: (error as Error).message })}\n\n`);
      }
    };
    void push();
    const timer = setInterval(() => { void push(); }, PUSH_INTERVAL_MS);
    const end = (): void => { res.destroy(); };
    open.add(end);
    res.on('close', () => {
      clearInterval(timer);
      open.delete(end);
    });
  });
}
