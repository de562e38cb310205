/**
 * The server's live figures: Server-Sent Events at `GET /apps/explorer/events`, read with fetch and
 * a stream reader so the token travels as `Authorization: Bearer`, never in a URL. One stream
 * serves every subscriber: opened with the first `subscribeEvents`, closed when the last one
 * has unsubscribed (after 5 s, so moving from screen to screen keeps it). While logged in it reconnects with a growing delay (1 s doubling to 30 s); it stops
 * on logout and on `event: ended` (then one action call lets api.ts return to the login screen).
 *
 * Before each connection one `getMqOverview` call checks the token (JSON actions always answer
 * 200, where a refused stream would be an HTTP 401 the browser logs as an error) and gives the
 * overview subscribers their first figures at once.
 */
import { effect, signal } from '@preact/signals';
import { call, ApiError, INVALID_TOKEN, login, loginSignal } from './api.js';
import type { Activity, Overview } from '../../../lib/explorer/api-types.js';

export type { Activity, BusyTopic, Overview } from '../../../lib/explorer/api-types.js';

export interface EventHandlers {
  overview?: (data: Overview) => void;
  activity?: (data: Activity) => void;
}

/** The stream's state, for a "live" indicator. */
export type StreamState = 'idle' | 'connecting' | 'live' | 'retrying' | 'ended';
export const streamState = signal<StreamState>('idle');

const EVENTS_URL = '/apps/explorer/events';
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

/** The stream stays open this long after the last unsubscribe, so moving between screens keeps it. */
const LINGER_MS = 5000;

const subscribers = new Set<EventHandlers>();
let closeStream: (() => void) | null = null;
let lingering: ReturnType<typeof setTimeout> | undefined;

/** Receives the live events until the returned function is called. */
export function subscribeEvents(handlers: EventHandlers): () => void {
  // A wrapper object, so the same handlers subscribed twice are two subscriptions.
  const entry: EventHandlers = { ...handlers };
  subscribers.add(entry);
  clearTimeout(lingering);
  lingering = undefined;
  if (!closeStream) closeStream = openStream();
  return () => {
    if (!subscribers.delete(entry) || subscribers.size > 0) return;
    clearTimeout(lingering);
    lingering = setTimeout(() => {
      lingering = undefined;
      if (subscribers.size > 0 || !closeStream) return;
      const close = closeStream;
      closeStream = null;
      close();
    }, LINGER_MS);
  };
}

function dispatch(event: string, data: unknown): void {
  for (const entry of [...subscribers]) {
    try {
      if (event === 'overview') entry.overview?.(data as Overview);
      else if (event === 'activity') entry.activity?.(data as Activity);
    } catch (error) {
      // One screen's bug must not stop the others' figures.
      setTimeout(() => { throw error; });
    }
  }
}

/** Runs the stream for whichever token is logged in; returns its stop function. */
function openStream(): () => void {
  let current: AbortController | null = null;
  let token: string | undefined;
  const dispose = effect(() => {
    const next = login.value?.token;
    if (next === token) return;
    token = next;
    current?.abort();
    current = null;
    if (next) {
      current = new AbortController();
      void run(next, current.signal);
    } else {
      streamState.value = 'idle';
    }
  });
  return () => {
    dispose();
    current?.abort();
    current = null;
    streamState.value = 'idle';
  };
}

type Outcome = 'retry' | 'stop';

async function run(token: string, signal: AbortSignal): Promise<void> {
  let delay = FIRST_DELAY_MS;
  while (!signal.aborted) {
    streamState.value = 'connecting';
    const outcome = await connectOnce(token, signal, () => { delay = FIRST_DELAY_MS; });
    if (signal.aborted) return;
    if (outcome === 'stop') {
      streamState.value = 'ended';
      return;
    }
    streamState.value = 'retrying';
    await wait(delay, signal);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

async function connectOnce(token: string, signal: AbortSignal, onLive: () => void): Promise<Outcome> {
  // The token check (and first figures) through a JSON action.
  try {
    const overview = await call<Overview>('mq', 'getMqOverview', {}, signal);
    if (signal.aborted) return 'stop';
    dispatch('overview', overview);
  } catch (error) {
    if (signal.aborted) return 'stop';
    if (error instanceof ApiError && error.code === INVALID_TOKEN) return 'stop';
    if (!(error instanceof ApiError)) return 'retry';
    // Another error (say the action is not there): the stream may still work.
  }
  let response: Response;
  try {
    response = await fetch(EVENTS_URL, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, cache: 'no-store', signal: loginSignal(signal) });
  } catch {
    return 'retry';
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel().catch(() => undefined);
    return endSession(signal);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return 'retry';
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let live = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return signal.aborted ? 'stop' : 'retry';
      buffer += value;
      // Events end with a blank line; CRLF, CR and LF are all line ends in SSE.
      buffer = buffer.replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const parsed = parseEvent(block);
        if (!parsed) continue;
        if (!live) {
          live = true;
          streamState.value = 'live';
          onLive();
        }
        if (parsed.event === 'ended') {
          await reader.cancel().catch(() => undefined);
          return endSession(signal);
        }
        let data: unknown;
        try {
          data = JSON.parse(parsed.data);
        } catch {
          continue;
        }
        dispatch(parsed.event, data);
      }
    }
  } catch {
    return signal.aborted ? 'stop' : 'retry';
  }
}

/** Parses one SSE block: `event:` and `data:` lines (several data lines join with "\n"). */
export function parseEvent(block: string): { event: string; data: string } | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0 && event === 'message') return null;
  return { event, data: data.join('\n') };
}

/** The session ended on the server: one action call lets api.ts show the login screen. */
async function endSession(signal: AbortSignal): Promise<Outcome> {
  if (!signal.aborted) await call('mq', 'getMqOverview', {}, signal).catch(() => undefined);
  return 'stop';
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
