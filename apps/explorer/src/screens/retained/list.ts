/**
 * Retained messages matching a topic filter, a page at a time (listRetainedMessages offset/limit
 * with the total); delete one (its exact topic as the filter) or all matching (a dry run gives
 * the count first).
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible, visibleText } from '../../visible-text.js';
import { call, errorText } from '../../api.js';
import type { DeleteRetainedResult } from '../../../../../lib/explorer/api-types.js';
import { formatHash, navigate, setQuery } from '../../router.js';
import { binaryAsText, formatCount, formatTime, payloadPreview } from '../../format.js';
import { ConfirmDialog } from '../clients/confirm.js';
import { Pager, pageFrom } from '../clients/pager.js';
import { retainedHash, type RetainedMessage, type RetainedPage } from './types.js';

const PAGE_SIZE = 100;
const TOPICS_SHOWN = 20;

type Dialog =
  | { kind: 'one'; topic: string }
  | { kind: 'filter'; filter: string; count: number; topics: string[] };

export function RetainedList({ filter, query }: { filter: string; query: Record<string, string> }) {
  const page = pageFrom(query.page);
  const [text, setText] = useState(filter);
  const [result, setResult] = useState<RetainedPage | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const [checking, setChecking] = useState(false);

  useEffect(() => { setText(filter); }, [filter]);
  useEffect(() => {
    const abort = new AbortController();
    call<RetainedPage>('mq', 'listRetainedMessages', { topicFilter: filter, offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE, binaryFormat: 'hex' }, abort.signal)
      .then((next) => { setResult(next); setError(''); })
      .catch((e) => {
        if (abort.signal.aborted) return;
        setResult(null);
        setError(errorText(e));
      });
    return () => abort.abort();
  }, [filter, page, reload]);

  const show = (event: Event) => {
    event.preventDefault();
    const next = text.trim() || '#';
    setNotice('');
    if (next === filter) setReload((n) => n + 1);
    else setQuery({ filter: next === '#' ? undefined : next, page: undefined });
  };

  // The filter in the box, applied or not: the dry run, the confirmation and the delete all use
  // this one value (the dialog keeps it), never the filter of the list last shown.
  const askDeleteMatching = async () => {
    const target = text.trim() || '#';
    setChecking(true);
    setNotice('');
    try {
      const dry = await call<DeleteRetainedResult>('mq', 'deleteRetainedMessages', { topicFilter: target, dryRun: true });
      setDialog({ kind: 'filter', filter: target, count: dry.count, topics: dry.topics ?? [] });
    } catch (e) {
      setError(errorText(e));
    } finally {
      setChecking(false);
    }
  };

  return html`
    <section class="ops-retained" aria-label="Retained messages">
      <div class="row ops-heading">
        <h1 class="grow">Retained messages</h1>
        <button type="button" onClick=${() => setReload((n) => n + 1)}>Refresh</button>
      </div>
      <form class="row ops-toolbar" onSubmit=${show}>
        <label class="ops-search"><span>Topic filter</span>
          <input class="mono" value=${text} onInput=${(event: Event) => setText((event.currentTarget as HTMLInputElement).value)} placeholder="# or a/+/c" />
        </label>
        <button type="submit" class="primary">Show</button>
        <button type="button" class="danger" onClick=${() => { void askDeleteMatching(); }} disabled=${checking}>Delete matching…</button>
      </form>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
      ${result === null ? (error ? null : html`<p class="muted">Loading…</p>`) : html`
        <div class="card ops-table">
          <table aria-label="Retained messages list">
            <thead><tr><th>Topic</th><th>Payload</th><th>QoS</th><th>Time</th><th>Publisher</th><th></th></tr></thead>
            <tbody>
              ${result.messages.length === 0 ? html`<tr><td colspan="6" class="muted">No retained message matches ${filter}.</td></tr>` : null}
              ${result.messages.map((m) => html`
                <tr key=${m.topic} data-topic=${m.topic}>
                  <td><a class="mono ops-break" href=${formatHash(retainedHash(filter, m.topic))}>${visible(m.topic)}</a></td>
                  <td class="mono ops-preview">${preview(m)}</td>
                  <td>${m.qos ?? '—'}</td>
                  <td class="ops-nowrap">${formatTime(m.timestamp)}</td>
                  <td>${m.publisher ? visible(m.publisher) : '—'}</td>
                  <td class="ops-actions"><button type="button" aria-label=${`Delete ${visibleText(m.topic)}`} onClick=${() => setDialog({ kind: 'one', topic: m.topic })}>Delete</button></td>
                </tr>`)}
            </tbody>
          </table>
        </div>
        ${filter.startsWith('#') || filter.startsWith('+') ? html`<p class="muted ops-hint">Topics starting with $ (such as $SYS/…) match only filters that start with $ too.</p>` : null}
        <${Pager} label="Retained pages" page=${page} pageSize=${PAGE_SIZE} total=${result.total} shown=${result.messages.length} onPage=${(p: number) => setQuery({ page: p > 1 ? p : undefined })} />`}
      ${dialog?.kind === 'one' ? html`
        <${DeleteOneDialog} topic=${dialog.topic} onClose=${() => setDialog(null)}
          onDone=${() => { setNotice(`Deleted the retained message of ${dialog.topic}.`); setReload((n) => n + 1); }} />` : null}
      ${dialog?.kind === 'filter' ? html`
        <${ConfirmDialog} title="Delete retained messages" confirmLabel=${`Delete ${formatCount(dialog.count)}`} canConfirm=${dialog.count > 0}
          onClose=${() => setDialog(null)}
          onConfirm=${async () => {
            const done = await call<DeleteRetainedResult>('mq', 'deleteRetainedMessages', { topicFilter: dialog.filter });
            setNotice(`Deleted ${formatCount(done.count)} retained ${done.count === 1 ? 'message' : 'messages'} matching ${dialog.filter}.`);
            // The list then shows the filter just deleted (empty unless something new arrived).
            if (dialog.filter !== filter) setQuery({ filter: dialog.filter === '#' ? undefined : dialog.filter, page: undefined });
            else if (page > 1) setQuery({ page: undefined });
            setReload((n) => n + 1);
          }}>
          ${dialog.count === 0 ? html`<p>No retained message matches <span class="mono">${dialog.filter}</span>.</p>` : html`
            <p><strong class="ops-count">${formatCount(dialog.count)}</strong> retained ${dialog.count === 1 ? 'message matches' : 'messages match'} <span class="mono">${dialog.filter}</span> and will be deleted. New subscribers will no longer receive ${dialog.count === 1 ? 'it' : 'them'}; the message log keeps its history.</p>
            <ul class="mono ops-names">
              ${dialog.topics.slice(0, TOPICS_SHOWN).map((t) => html`<li key=${t}>${visible(t)}</li>`)}
              ${dialog.count > TOPICS_SHOWN ? html`<li class="muted">and ${formatCount(dialog.count - Math.min(TOPICS_SHOWN, dialog.topics.length))} more</li>` : null}
            </ul>`}
        <//>` : null}
    </section>`;
}

/** Confirms and deletes one topic's retained message (the exact topic as the filter). */
export function DeleteOneDialog({ topic, onClose, onDone }: { topic: string; onClose: () => void; onDone: () => void }) {
  return html`
    <${ConfirmDialog} title="Delete retained message" confirmLabel="Delete" onClose=${onClose}
      onConfirm=${async () => {
        await call('mq', 'deleteRetainedMessages', { topicFilter: topic });
        onDone();
      }}>
      <p>Delete the retained message of <strong class="mono ops-break">${visible(topic)}</strong>?</p>
    <//>`;
}

/** Back to a filter's list. */
export function backToList(filter: string): void {
  navigate(retainedHash(filter));
}

/** A payload preview: binary payloads that are UTF-8 text as text, others as hex. */
function preview(m: RetainedMessage) {
  if (!m.binaryFormat) return visible(payloadPreview(m.payload));
  const text = binaryAsText(m.payload, m.binaryFormat);
  if (text !== null) return visible(payloadPreview(text));
  return html`<span class="muted">${m.binaryFormat} </span>${payloadPreview(m.payload)}`;
}
