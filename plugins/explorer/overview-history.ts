/**
 * The Overview's charts, kept on the server so a page opened later shows the last hour at once:
 * every 10 s a sample of the message rates (in and out, averaged over the 10 s from the server's
 * counters, read with mq.totals, which unlike mq.overview leaves the per-topic activity recording
 * off) and the clients connected and kept; the last hour of them (360) in a ring.
 *
 * `GET /apps/explorer/overview-history` with `Authorization: Bearer <token>` answers
 * `{intervalSeconds, samples: [{time, messagesInPerSecond, messagesOutPerSecond, clientsConnected,
 * clientsDisconnected}]}`, oldest first, the last one taken at the request (the figures since the
 * last sample). The figures are the server's totals, as getMqOverview gives any logged-in account.
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';
import { SYSTEM_PRINCIPAL } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import type { OverviewHistory, OverviewSample } from '../../lib/explorer/api-types';
import { errorBody } from '../../lib/http/http-errors';

export const SAMPLE_SECONDS = 10;
const KEEP = 3600 / SAMPLE_SECONDS;

interface Totals { at: number; received: number; sent: number }

export function overviewHistory(app: FastifyInstance, engine: Engine, path: string): void {
  const samples: OverviewSample[] = [];
  let last: Totals | undefined;

  /** The figures now, with the rates since the last sample (not kept unless `keep`). */
  const sample = async (keep: boolean): Promise<OverviewSample | undefined> => {
    // mq.totals, not mq.overview: sampling must not turn on the per-topic activity recording.
    if (!engine.bus.has('mq.totals')) return undefined;
    const totals = await engine.bus.execute<{ messagesReceived: number; messagesSent: number; clientsConnected: number; clientsDisconnected: number }>('mq.totals', {}, { principal: SYSTEM_PRINCIPAL, origin: 'explorer' });
    const now = engine.clock.now();
    const seconds = last ? Math.max(0.001, (now - last.at) / 1000) : 0;
    const rate = (total: number, before: number): number => Math.max(0, total - before) / seconds;
    const taken: OverviewSample = {
      time: new Date(now).toISOString(),
      messagesInPerSecond: last ? rate(totals.messagesReceived, last.received) : 0,
      messagesOutPerSecond: last ? rate(totals.messagesSent, last.sent) : 0,
      clientsConnected: totals.clientsConnected,
      clientsDisconnected: totals.clientsDisconnected,
    };
    if (keep) {
      last = { at: now, received: totals.messagesReceived, sent: totals.messagesSent };
      samples.push(taken);
      if (samples.length > KEEP) samples.splice(0, samples.length - KEEP);
    }
    return taken;
  };

  let timer: NodeJS.Timeout | undefined;
  const start = (): void => {
    if (timer) return;
    void sample(true).catch(() => undefined);
    timer = setInterval(() => { void sample(true).catch(() => undefined); }, SAMPLE_SECONDS * 1000);
    timer.unref();
  };
  engine.onClose(async () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  });
  app.addHook('onReady', async () => start());

  app.get(path, async (request, reply) => {
    const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const session = bearer ? engine.apiSessions.findByToken(bearer[1]) : undefined;
    if (!session) return reply.code(401).send(errorBody(new EngineError('INVALID_TOKEN')));
    const current = await sample(false);
    const history: OverviewHistory = { intervalSeconds: SAMPLE_SECONDS, samples: current ? [...samples, current] : [...samples] };
    return reply.header('cache-control', 'no-store').send(history);
  });
}
