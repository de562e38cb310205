/**
 * Subscriptions (as the EMQX dashboard lists them): every subscription of the sessions the account
 * may use — topic filter, client, QoS and options — paged on the server with a search over topic
 * filters and client names. `#/subscriptions?filter=…&page=…`.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { visible } from '../visible-text.js';
import { call, errorText } from '../api.js';
import type { ScreenProps } from '../app.js';
import type { SubscriptionPage, SubscriptionRow } from '../../../../lib/explorer/api-types.js';
import { formatHash, setQuery } from '../router.js';
import { Pager, pageFrom } from './clients/pager.js';
import { SearchBox } from './clients/search.js';

const PAGE_SIZE = 100;
const RETAIN_HANDLING = ['retained: on subscribe', 'retained: new only', 'retained: never'];

/** The options that differ from a plain subscription, in words. */
export function optionsText(row: SubscriptionRow): string {
  const parts: string[] = [];
  if (row.subscriptionIdentifier !== undefined) parts.push(`id ${row.subscriptionIdentifier}`);
  if (row.noLocal) parts.push('no local');
  if (row.retainAsPublished) parts.push('retain as published');
  if (row.retainHandling !== 0) parts.push(RETAIN_HANDLING[row.retainHandling]);
  return parts.join(', ');
}

export function SubscriptionsScreen({ route }: ScreenProps) {
  const filter = route.query.filter ?? '';
  const page = pageFrom(route.query.page);
  const [result, setResult] = useState<SubscriptionPage | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    call<SubscriptionPage>('mq', 'listMqSubscriptions', { filter, offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE }, abort.signal)
      .then((answer) => { setResult(answer); setError(''); })
      .catch((caught) => { if (!abort.signal.aborted) setError(errorText(caught)); });
    return () => abort.abort();
  }, [filter, page, reload]);

  return html`
    <section class="ops-subscriptions" aria-label="Subscriptions">
      <div class="row ops-heading">
        <h1 class="grow">Subscriptions</h1>
        <${SearchBox} label="Search subscriptions" value=${filter} placeholder="Part of a topic filter or client name" onSearch=${(text: string) => setQuery({ filter: text || undefined, page: undefined })} />
        <button type="button" onClick=${() => setReload((n) => n + 1)}>Refresh</button>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${result === null ? html`<p class="muted">Loading…</p>` : html`
        <div class="card">
          ${result.subscriptions.length === 0
            ? html`<p class="muted">${filter ? 'No subscription matches.' : 'No client subscribes to anything.'}</p>`
            : html`
              <table aria-label="Subscriptions list">
                <thead><tr><th>Topic filter</th><th>Client</th><th>State</th><th class="num">QoS</th><th>Options</th></tr></thead>
                <tbody>
                  ${result.subscriptions.map((row) => html`
                    <tr key=${`${row.clientName}\u0000${row.topicFilter}`}>
                      <td class="mono">${visible(row.topicFilter)}</td>
                      <td class="mono"><a href=${formatHash({ screen: 'clients', path: [row.clientName] })}>${visible(row.clientName)}</a>${row.kind === 'mqApi' ? html` <span class="muted">(MQ API)</span>` : ''}</td>
                      <td>${row.connected ? 'connected' : 'disconnected'}</td>
                      <td class="num">${row.qos}</td>
                      <td>${optionsText(row)}</td>
                    </tr>`)}
                </tbody>
              </table>`}
          <${Pager} label="Subscriptions pages" page=${page} pageSize=${PAGE_SIZE} total=${result.total} shown=${result.subscriptions.length} onPage=${(p: number) => setQuery({ page: p > 1 ? p : undefined })} />
        </div>`}
    </section>`;
}
