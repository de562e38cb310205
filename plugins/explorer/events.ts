/**
 * `GET /apps/explorer/events`: Server-Sent Events for the explorer's live figures, coalesced to
 * one `overview` event per second and one `activity` event (the topics published to since the
 * last one, with their counts; only topics the account may list) per second with traffic
 * (docs/explorer.md). The token is sent as `Authorization: Bearer <authToken>` (the page reads
 * the stream with fetch), never in the URL.
 *
 * A token that is unknown or ends gets `event: ended` ({errorCode: 12031}) and the stream closes.
 * A reader that does not keep up is skipped (events are figures: the next one replaces them) and
 * dropped when far behind; a session holds at most MAX_STREAMS_PER_SESSION streams.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../kernel/engine';
import type { ActiveTopic, Activity } from '../../lib/explorer/api-types';
import { EngineError } from '../../kernel/errors';
import { errorBody } from '../../lib/http/http-errors';

const PUSH_INTERVAL_MS = 1000;
/** Topics listed per activity event (the rest are counted in `more`). */
const MAX_ACTIVE_TOPICS = 2000;
/** Unsent bytes above which events are skipped, and above which the stream is closed. */
const SKIP_ABOVE_BYTES = 256 * 1024;
const DROP_ABOVE_BYTES = 4 * 1024 * 1024;
const MAX_STREAMS_PER_SESSION = 8;

function endedEvent(): string {
  const error = new EngineError('INVALID_TOKEN');
  return `event: ended\ndata: ${JSON.stringify(errorBody(error))}\n\n`;
}

export function explorerEvents(app: FastifyInstance, engine: Engine, path: string): void {
  const open = new Set<() => void>();
  const perSession = new Map<string, number>();
  let closing = false;
  // Event streams never end by themselves: ended when the server starts draining, so that the
  // HTTP drain waits for real requests only.
  engine.onDrain(async () => {
    closing = true;
    for (const end of open) end();
  });

  app.get(path, { compress: false }, (request, reply) => {
    const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const token = bearer ? bearer[1] : '';
    const session = token ? engine.apiSessions.findByToken(token) : undefined;
    if (!session || closing) {
      // A stream that says so and ends, not a 401: browsers log failed responses as errors, and
      // a page whose session ended simply returns to its login.
      return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache').send(session ? '' : endedEvent());
    }
    if ((perSession.get(session.id) ?? 0) >= MAX_STREAMS_PER_SESSION) {
      return reply.code(429).send(errorBody(new EngineError('INVALID_PARAMETER', { param: 'Authorization', reason: `a session holds at most ${MAX_STREAMS_PER_SESSION} event streams` })));
    }
    perSession.set(session.id, (perSession.get(session.id) ?? 0) + 1);
    reply.hijack();
    const res: ServerResponse = reply.raw;
    res.on('error', () => res.destroy());
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    const messaging = engine.has('messaging') ? engine.need('messaging') : undefined;

    // The account as it is at each event: roles revoked while the stream is open apply at once.
    let principal = engine.accounts.principal(session.account);

    let lastSecond = 0;
    const activity = (): string => {
      if (!messaging) return '';
      const { second, ticks } = messaging.activity.since(lastSecond);
      lastSecond = second;
      if (ticks.length === 0) return '';
      const topics: ActiveTopic[] = [];
      let more = 0;
      for (const tick of ticks) {
        if (!messaging.allowed(principal, 'topic.list', tick.topic)) continue;
        if (topics.length < MAX_ACTIVE_TOPICS) topics.push({ topic: tick.topic, count: tick.count, lastMessageTime: new Date(tick.lastMessageAt).toISOString() });
        else more++;
      }
      return topics.length > 0 ? `event: activity\ndata: ${JSON.stringify({ topics, more } satisfies Activity)}\n\n` : '';
    };

    let timer: NodeJS.Timeout | undefined;
    const finish = (last?: string): void => {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (!res.writableEnded && !res.destroyed) res.end(last);
    };
    const push = async (): Promise<void> => {
      if (res.writableEnded || res.destroyed) return;
      if (!engine.apiSessions.findByToken(token)) {
        finish(endedEvent());
        return;
      }
      if (res.writableLength > DROP_ABOVE_BYTES) {
        res.destroy();
        return;
      }
      principal = engine.accounts.principal(session.account);
      let text: string;
      try {
        const overview = engine.bus.has('mq.overview') ? await engine.bus.execute('mq.overview', {}, { principal, origin: 'explorer' }) : {};
        text = `event: overview\ndata: ${JSON.stringify(overview)}\n\n${activity()}`;
      } catch (error) {
        text = `event: error\ndata: ${JSON.stringify({ errorMessage: (error as Error).message })}\n\n`;
      }
      // A reader that is behind misses these figures; the next ones replace them.
      if (!res.writableEnded && !res.destroyed && res.writableLength <= SKIP_ABOVE_BYTES) res.write(text);
    };
    void push();
    timer = setInterval(() => { void push(); }, PUSH_INTERVAL_MS);
    // Ended, not destroyed: a cut chunked response is an error in the browser's console.
    const end = (): void => finish();
    open.add(end);
    res.on('close', () => {
      if (timer) clearInterval(timer);
      timer = undefined;
      open.delete(end);
      const left = (perSession.get(session.id) ?? 1) - 1;
      if (left > 0) perSession.set(session.id, left);
      else perSession.delete(session.id);
    });
  });
}
