/**
 * `GET /apps/explorer/events`: Server-Sent Events for the explorer's live figures, coalesced to
 * one `overview` event per second and one `activity` event (the topics published to in the last
 * second, with their counts; only topics the account may list) per second with traffic
 * (docs/explorer.md). The token is sent as
 * `Authorization: Bearer <authToken>` (the page reads the stream with fetch), never in the URL.
 * A token that is unknown or ends gets `event: ended` ({errorCode: 12031}) and the stream closes.
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';

const PUSH_INTERVAL_MS = 1000;
/** Topics listed per activity event (the rest are counted in `more`). */
const MAX_ACTIVE_TOPICS = 2000;
/** Authorization decisions are cached per stream this long (roles rarely change) and this many. */
const DECISIONS_MS = 30_000;
const MAX_DECISIONS = 100_000;

export function explorerEvents(app: FastifyInstance, engine: Engine, path: string): void {
  const open = new Set<() => void>();
  engine.onClose(async () => { for (const end of open) end(); });
  app.get(path, { compress: false }, (request, reply) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    const session = token ? engine.apiSessions.findByToken(token) : undefined;
    if (!session) {
      // A stream that says so and ends, not a 401: browsers log failed responses as errors, and
      // a page whose session ended simply returns to its login.
      const error = new EngineError('INVALID_TOKEN');
      return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache')
        .send(`event: ended\ndata: ${JSON.stringify({ errorCode: error.code, errorMessage: error.message })}\n\n`);
    }
    const principal = engine.accounts.principal(session.account);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    const messaging = engine.has('messaging') ? engine.need('messaging') : undefined;
    let lastSecond = 0;
    let mayList = new Map<string, boolean>();
    let decidedAt = Date.now();
    const listable = (topic: string): boolean => {
      let allowed = mayList.get(topic);
      if (allowed === undefined) {
        allowed = messaging!.allowed(principal, 'topic.list', topic);
        mayList.set(topic, allowed);
      }
      return allowed;
    };
    const activity = (): void => {
      if (!messaging) return;
      if (Date.now() - decidedAt > DECISIONS_MS || mayList.size > MAX_DECISIONS) {
        mayList = new Map();
        decidedAt = Date.now();
      }
      const { second, ticks } = messaging.activity.lastSecond(lastSecond);
      lastSecond = second;
      if (ticks.length === 0) return;
      const topics: Array<{ topic: string; count: number; lastMessageTime: string }> = [];
      let more = 0;
      for (const tick of ticks) {
        if (!listable(tick.topic)) continue;
        if (topics.length < MAX_ACTIVE_TOPICS) topics.push({ topic: tick.topic, count: tick.count, lastMessageTime: new Date(tick.lastMessageAt).toISOString() });
        else more++;
      }
      if (topics.length > 0) res.write(`event: activity\ndata: ${JSON.stringify({ topics, more })}\n\n`);
    };
    const push = async (): Promise<void> => {
      if (!engine.apiSessions.findByToken(token)) {
        const error = new EngineError('INVALID_TOKEN');
        res.end(`event: ended\ndata: ${JSON.stringify({ errorCode: error.code, errorMessage: error.message })}\n\n`);
        return;
      }
      try {
        const overview = engine.bus.has('mq.overview')
          ? await engine.bus.execute('mq.overview', {}, { principal, origin: 'explorer' })
          : {};
        res.write(`event: overview\ndata: ${JSON.stringify(overview)}\n\n`);
        activity();
      } catch (error) {
        res.write(`event: error\ndata: ${JSON.stringify({ errorMessage: (error as Error).message })}\n\n`);
      }
    };
    void push();
    const timer = setInterval(() => { void push(); }, PUSH_INTERVAL_MS);
    // Ended, not destroyed: a cut chunked response is an error in the browser's console.
    const end = (): void => { res.end(); };
    open.add(end);
    res.on('close', () => {
      clearInterval(timer);
      open.delete(end);
    });
  });
}
