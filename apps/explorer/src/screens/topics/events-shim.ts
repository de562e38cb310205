/**
 * A stand-in for `src/events.ts` (the ops screen's shared SSE reader) with the same signature,
 * used until that file lands on main: reads `GET /apps/explorer/events` with fetch and a stream
 * reader (the token in the Authorization header, never in a URL), one stream for all listeners.
 */
import { login } from '../../api.js';

export interface ActivityEvent {
  topics: Array<{ topic: string; count: number; lastMessageTime: string }>;
  more: number;
}

export interface EventHandlers {
  overview?: (data: Record<string, unknown>) => void;
  activity?: (data: ActivityEvent) => void;
}

const handlers = new Set<EventHandlers>();
let controller: AbortController | null = null;
let retryTimer: ReturnType<typeof setTimeout> | undefined;

export function subscribeEvents(handler: EventHandlers): () => void {
  handlers.add(handler);
  if (!controller) start();
  return () => {
    handlers.delete(handler);
    if (handlers.size === 0) stop();
  };
}

function stop(): void {
  clearTimeout(retryTimer);
  controller?.abort();
  controller = null;
}

function start(): void {
  const token = login.value?.token;
  if (!token) return;
  const current = new AbortController();
  controller = current;
  void read(token, current).catch(() => undefined).finally(() => {
    if (controller === current && handlers.size > 0 && login.value?.token === token) {
      controller = null;
      retryTimer = setTimeout(() => { if (!controller && handlers.size > 0) start(); }, 3000);
    }
  });
}

async function read(token: string, current: AbortController): Promise<void> {
  const response = await fetch('/apps/explorer/events', { headers: { authorization: `Bearer ${token}` }, signal: current.signal });
  if (!response.ok || !response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (name === 'ended') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.join('\n'));
      } catch {
        continue;
      }
      for (const handler of handlers) {
        if (name === 'overview') handler.overview?.(parsed as Record<string, unknown>);
        else if (name === 'activity') handler.activity?.(parsed as ActivityEvent);
      }
    }
  }
}
