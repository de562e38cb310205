/**
 * History: a topic's stored messages, newest first, paged on the server (startFrom tail + skip;
 * a time range with endBefore `until` and `from` read client-side). The page is in the URL.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible } from '../../visible-text.js';
import { errorText } from '../../api.js';
import { setQuery } from '../../router.js';
import { describeTopic, readMessages } from './data.js';
import { formatTime, isoMillis, preview, type TopicMessage } from './format.js';

export const HISTORY_PAGE = 50;

interface PageState {
  messages: TopicMessage[];
  total: number | null;
  /** With a `from`: this page reached it (no later page). */
  reachedFrom: boolean;
}

/** datetime-local value (local time) → ISO UTC, or undefined. */
function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function isoToLocal(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function HistoryTab(props: { topic: string; query: Record<string, string>; onOpen: (message: TopicMessage) => void; selectedId?: number }) {
  const page = Math.max(1, Number.parseInt(props.query.page ?? '1', 10) || 1);
  const from = props.query.from;
  const until = props.query.until;
  const [state, setState] = useState<PageState | null>(null);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  const [reloads, setReloads] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setError('');
    (async () => {
      const description = await describeTopic(props.topic, controller.signal);
      if (!description) {
        setState({ messages: [], total: 0, reachedFrom: true });
        return;
      }
      const params: Record<string, unknown> = { startFrom: 'tail', maxMessages: HISTORY_PAGE, skip: (page - 1) * HISTORY_PAGE };
      if (until) params.endBefore = until;
      const oldestFirst = await readMessages(props.topic, params, controller.signal);
      let messages = oldestFirst.reverse();
      let reachedFrom = false;
      if (from) {
        const fromMillis = isoMillis(from);
        const kept = messages.filter((message) => isoMillis(message.time) >= fromMillis);
        reachedFrom = kept.length < messages.length;
        messages = kept;
      }
      setState({ messages, total: from || until ? null : description.messageCount, reachedFrom });
    })().catch((caught: unknown) => {
      if (!controller.signal.aborted) setError(errorText(caught));
    }).finally(() => {
      if (!controller.signal.aborted) setLoading(false);
    });
    return () => controller.abort();
  }, [props.topic, page, from, until, reloads]);

  const pages = state?.total !== null && state?.total !== undefined ? Math.max(1, Math.ceil(state.total / HISTORY_PAGE)) : null;
  const hasNext = state ? (pages !== null ? page < pages : state.messages.length === HISTORY_PAGE && !state.reachedFrom) : false;
  const go = (target: number): void => setQuery({ page: target === 1 ? undefined : target, msg: undefined });

  return html`
    <section class="history" aria-label="History">
      <form class="row history-range" onSubmit=${(event: Event) => {
        event.preventDefault();
        const form = event.target as HTMLFormElement;
        const data = new FormData(form);
        setQuery({ from: localToIso(String(data.get('from') ?? '')), until: localToIso(String(data.get('until') ?? '')), page: undefined, msg: undefined });
      }}>
        <label>From <input type="datetime-local" step="1" name="from" value=${isoToLocal(from)} /></label>
        <label>Until <input type="datetime-local" step="1" name="until" value=${isoToLocal(until)} /></label>
        <button type="submit">Apply</button>
        ${(from || until) && html`<button type="button" onClick=${() => setQuery({ from: undefined, until: undefined, page: undefined, msg: undefined })}>All time</button>`}
        <span class="grow"></span>
        <button type="button" onClick=${() => setReloads(reloads + 1)}>Refresh</button>
      </form>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <nav class="row pager" aria-label="History pages">
        <button type="button" disabled=${page <= 1} onClick=${() => go(1)}>Newest</button>
        <button type="button" disabled=${page <= 1} onClick=${() => go(page - 1)}>Newer</button>
        <span class="page-label" aria-live="polite">Page ${page}${pages !== null ? ` of ${pages}` : ''}${state?.total !== null && state?.total !== undefined ? ` · ${state.total.toLocaleString('en-US')} messages` : ''}</span>
        <button type="button" disabled=${!hasNext} onClick=${() => go(page + 1)}>Older</button>
        ${pages !== null && html`<button type="button" disabled=${page >= pages} onClick=${() => go(pages)}>Oldest</button>`}
        ${loading && html`<span class="muted">Loading…</span>`}
      </nav>
      ${state && state.messages.length === 0 && !loading && html`<p class="muted">${state.total === 0 ? 'No stored messages on this topic.' : 'No messages on this page.'}</p>`}
      ${state && state.messages.length > 0 && html`
        <table class="messages" aria-label="Stored messages">
          <thead><tr><th>Id</th><th>Stored</th><th>QoS</th><th>Retain</th><th>Payload</th><th>Publisher</th></tr></thead>
          <tbody>
            ${state.messages.map((message) => html`
              <tr key=${message.key} class=${`message-row${message.id === props.selectedId ? ' selected' : ''}`} data-id=${message.id}
                tabindex="0" onClick=${() => props.onOpen(message)}
                onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter') props.onOpen(message); }}>
                <td class="mono">${message.id}</td>
                <td title=${message.time}>${formatTime(message.time)}</td>
                <td>${message.qos}</td>
                <td>${message.retain ? 'yes' : ''}</td>
                <td class="mono payload-cell">${visible(preview(message))}</td>
                <td class="mono">${visible(message.publisher ?? '')}</td>
              </tr>`)}
          </tbody>
        </table>`}
    </section>`;
}
