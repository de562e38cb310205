/**
 * The Overview's charts, kept on the server so a page opened later shows the last hour at once:
 * every 10 s a sample of the message rates (in and out, averaged over the 10 s from the server's
 * counters, read with mq.totals, which unlike mq.overview leaves the per-topic activity recording
 * off) and the clients connected and kept; the last hour of them (360) in a ring.
 *
 * `GET /apps/explorer/overview-history` with `Authorization: Bearer <token>` answers
 * `{intervalSeconds, samples: [{time, messagesInPerSecond, messagesOutPerSecond, clientsConnected,
 * clientsDisconnected}]}`, oldest first, the last one taken at the request (the figures since the
 * last sample). The figures are the server's totals, as getMqOverview gives any logged-in account
 * (in a cluster every node's, as mq.totals adds them up; rates taken per node).
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';
import { SYSTEM_PRINCIPAL } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import type { OverviewHistory, OverviewSample } from '../../lib/explorer/api-types';
import { errorBody } from '../../lib/http/http-errors';

export const SAMPLE_SECONDS = 10;
const KEEP = 3600 / SAMPLE_SECONDS;

/** The counters at a sample; in a cluster each node's too (`byNode`: the nodes that answered). */
interface Totals { at: number; received: number; sent: number; byNode?: Map<string, { received: number; sent: number }> }

/** mq.totals: the server's totals; in a cluster every node's added up, with each node's own. */
interface TotalsAnswer {
  messagesReceived: number;
  messagesSent: number;
  clientsConnected: number;
  clientsDisconnected: number;
  nodes?: Array<{ node: string; answered: boolean; messagesReceived?: number; messagesSent?: number }>;
}

export function overviewHistory(app: FastifyInstance, engine: Engine, path: string): void {
  const samples: OverviewSample[] = [];
  let last: Totals | undefined;

  /** The figures now, with the rates since the last sample (not kept unless `keep`). */
  const sample = async (keep: boolean): Promise<OverviewSample | undefined> => {
    // mq.totals, not mq.overview: sampling must not turn on the per-topic activity recording.
    if (!engine.bus.has('mq.totals')) return undefined;
    const totals = await engine.bus.execute<TotalsAnswer>('mq.totals', {}, { principal: SYSTEM_PRINCIPAL, origin: 'explorer' });
    const now = engine.clock.now();
    const seconds = last ? Math.max(0.001, (now - last.at) / 1000) : 0;
    const byNode = nodeCounters(totals);
    // In a cluster, per node, over the nodes in both samples: a node that did not answer one of
    // them (or restarted, its counters from 0) adds nothing rather than a drop and a spike.
    const delta = (pick: 'received' | 'sent', total: number, before: number): number => {
      if (byNode === undefined || last?.byNode === undefined) return Math.max(0, total - before);
      let sum = 0;
      for (const [node, counters] of byNode) {
        const earlier = last.byNode.get(node);
        if (earlier !== undefined) sum += Math.max(0, counters[pick] - earlier[pick]);
      }
      return sum;
    };
    const taken: OverviewSample = {
      time: new Date(now).toISOString(),
      messagesInPerSecond: last ? delta('received', totals.messagesReceived, last.received) / seconds : 0,
      messagesOutPerSecond: last ? delta('sent', totals.messagesSent, last.sent) / seconds : 0,
      clientsConnected: totals.clientsConnected,
      clientsDisconnected: totals.clientsDisconnected,
    };
    if (keep) {
      last = { at: now, received: totals.messagesReceived, sent: totals.messagesSent, byNode };
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

/** Each answering node's counters (undefined on a single node). */
function nodeCounters(totals: TotalsAnswer): Map<string, { received: number; sent: number }> | undefined {
  if (totals.nodes === undefined) return undefined;
  const out = new Map<string, { received: number; sent: number }>();
  for (const part of totals.nodes) {
    if (part.answered) out.set(part.node, { received: Number(part.messagesReceived) || 0, sent: Number(part.messagesSent) || 0 });
  }
  return out;
}
