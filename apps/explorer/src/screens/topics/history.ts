/**
 * History: a topic's stored messages, newest first, paged on the server (startFrom tail + skip;
 * a time range with endBefore `until` and `from` read client-side). The page is in the URL.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible } from '../../visible-text.js';
import { errorText } from '../../api.js';
import { setQuery } from '../../router.js';
import { countInRange, describeTopic, readMessages } from './data.js';
import { formatTimeMillis, isoMillis, preview, transformFieldNames, transformValueText, type TopicMessage } from './format.js';

export const HISTORY_PAGE = 50;

/** "1 message", "250 messages". */
export function messagesText(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'message' : 'messages'}`;
}

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
  const [rangeError, setRangeError] = useState('');
  const [jump, setJump] = useState('');
  // A From after Until is refused: nothing is read for it (a deep link can hold one too).
  const backwards = from !== undefined && until !== undefined && isoMillis(from) >= isoMillis(until);

  useEffect(() => {
    const controller = new AbortController();
    if (backwards) {
      setState(null);
      return;
    }
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
      // Under a time range the total is counted (a binary search of single reads), so the pages stay numbered.
      const total = from || until ? await countInRange(props.topic, from, until, description.messageCount, controller.signal) : description.messageCount;
      setState({ messages, total, reachedFrom });
    })().catch((caught: unknown) => {
      if (!controller.signal.aborted) setError(errorText(caught));
    }).finally(() => {
      if (!controller.signal.aborted) setLoading(false);
    });
    return () => controller.abort();
  }, [props.topic, page, from, until, reloads, backwards]);

  const pages = state?.total !== null && state?.total !== undefined ? Math.max(1, Math.ceil(state.total / HISTORY_PAGE)) : null;
  const hasNext = state ? (pages !== null ? page < pages : state.messages.length === HISTORY_PAGE && !state.reachedFrom) : false;
  // A topic's transform fields (configureTopic transformSteps) are columns, as in its integration table.
  const transformNames = state ? transformFieldNames(state.messages) : [];
  const go = (target: number): void => setQuery({ page: target === 1 ? undefined : target, msg: undefined });

  return html`
    <section class="history" aria-label="History">
      <form class="row history-range" onSubmit=${(event: Event) => {
        event.preventDefault();
        const form = event.target as HTMLFormElement;
        const data = new FormData(form);
        const nextFrom = localToIso(String(data.get('from') ?? ''));
        const nextUntil = localToIso(String(data.get('until') ?? ''));
        if (nextFrom && nextUntil && isoMillis(nextFrom) >= isoMillis(nextUntil)) {
          setRangeError('From must be earlier than Until.');
          return;
        }
        setRangeError('');
        setQuery({ from: nextFrom, until: nextUntil, page: undefined, msg: undefined });
      }}>
        <label>From <input type="datetime-local" step="1" name="from" value=${isoToLocal(from)} /></label>
        <label>Until <input type="datetime-local" step="1" name="until" value=${isoToLocal(until)} /></label>
        <button type="submit">Apply</button>
        ${(from || until) && html`<button type="button" onClick=${() => setQuery({ from: undefined, until: undefined, page: undefined, msg: undefined })}>All time</button>`}
        <span class="grow"></span>
        <button type="button" onClick=${() => setReloads(reloads + 1)}>Refresh</button>
      </form>
      ${(rangeError || backwards) && html`<p class="error" role="alert">${rangeError || 'From must be earlier than Until.'}</p>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <nav class="row pager" aria-label="History pages">
        <button type="button" disabled=${page <= 1} onClick=${() => go(1)}>Newest</button>
        <button type="button" disabled=${page <= 1} onClick=${() => go(page - 1)}>Newer</button>
        <span class="page-label" aria-live="polite">Page ${page}${pages !== null ? ` of ${pages.toLocaleString('en-US')}` : ''}${state?.total !== null && state?.total !== undefined ? ` · ${messagesText(state.total)}${from || until ? ' in this range' : ''}` : ''}</span>
        <button type="button" disabled=${!hasNext} onClick=${() => go(page + 1)}>Older</button>
        ${pages !== null && html`<button type="button" disabled=${page >= pages} onClick=${() => go(pages)}>Oldest</button>`}
        ${pages !== null && pages > 2 && html`
          <form class="row page-jump" onSubmit=${(event: Event) => {
            event.preventDefault();
            const target = Number.parseInt(jump, 10);
            if (target >= 1 && target <= pages) go(target);
          }}>
            <label>Go to page <input type="number" min="1" max=${pages} value=${jump} onInput=${(event: Event) => setJump((event.target as HTMLInputElement).value)} /></label>
            <button type="submit">Go</button>
          </form>`}
        ${loading && html`<span class="muted">Loading…</span>`}
      </nav>
      ${state && state.messages.length === 0 && !loading && html`<p class="muted">${state.total === 0 ? 'No stored messages on this topic.' : 'No messages on this page.'}</p>`}
      ${state && state.messages.length > 0 && html`
        <div class="messages-scroll">
        <table class="messages" aria-label="Stored messages" style=${`--transform-columns:${transformNames.length}`}>
          <thead><tr><th class="col-id">Id</th><th class="col-time">Stored</th><th class="col-qos">QoS</th><th class="col-retain" title="Retain">R</th><th class="col-payload">Payload</th>${transformNames.map((name) => html`<th class="col-transform" title="Transform field">${visible(name)}</th>`)}<th class="col-publisher">Publisher</th></tr></thead>
          <tbody>
            ${state.messages.map((message) => html`
              <tr key=${message.key} class=${`message-row${message.id === props.selectedId ? ' selected' : ''}`} data-id=${message.id}
                tabindex="0" onClick=${() => props.onOpen(message)}
                onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter') props.onOpen(message); }}>
                <td class="mono">${message.id}</td>
                <td title=${message.time}>${formatTimeMillis(message.time)}</td>
                <td>${message.qos}</td>
                <td title=${message.retain ? 'retain' : ''}>${message.retain ? 'R' : ''}</td>
                <td class="mono payload-cell">${visible(preview(message))}</td>
                ${transformNames.map((name) => {
                  const value = message.transformFields?.[name];
                  return html`<td class=${`mono transform-cell${value === null || value === undefined ? ' muted' : ''}`} data-field=${name}>${visible(transformValueText(value))}</td>`;
                })}
                <td class="mono" title=${message.publisher ?? ''}>${visible(message.publisher ?? '')}</td>
              </tr>`)}
          </tbody>
        </table>
        </div>`}
    </section>`;
}
