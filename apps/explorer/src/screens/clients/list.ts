/**
 * The sessions list: server-side filter (substring of the client name), offset/limit paging with
 * the total, disconnect one client, remove every disconnected session (the count shown first, from
 * a dry run). It reloads when the overview's client counts change.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible, visibleText } from '../../visible-text.js';
import { call, errorText } from '../../api.js';
import type { DeleteSessionsResult, DisconnectClientResult } from '../../../../../lib/explorer/api-types.js';
import { formatHash, setQuery } from '../../router.js';
import { subscribeEvents } from '../../events.js';
import { formatCount } from '../../format.js';
import { ConfirmDialog } from './confirm.js';
import { Pager, pageFrom } from './pager.js';
import { SearchBox } from './search.js';
import { KIND_TEXT, type MqSessionPage, type MqSessionSummary } from './types.js';

const PAGE_SIZE = 50;
/** Client names listed in the removal dialog (the count covers all). */
const NAMES_SHOWN = 20;

type Dialog =
  | { kind: 'disconnect'; clientName: string }
  | { kind: 'remove'; count: number; clientNames: string[] };

export function ClientList({ query }: { query: Record<string, string> }) {
  const filter = query.filter ?? '';
  const page = pageFrom(query.page);
  const [sessions, setSessions] = useState<MqSessionSummary[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const [checking, setChecking] = useState(false);

  useEffect(() => {
    const abort = new AbortController();
    call<MqSessionPage>('mq', 'listMqSessions', { filter, offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE }, abort.signal)
      .then((result) => {
        setSessions(result.sessions);
        setTotal(result.total);
        setError('');
      })
      .catch((e) => { if (!abort.signal.aborted) setError(errorText(e)); });
    return () => abort.abort();
  }, [filter, page, reload]);

  // Live: a client connecting, disconnecting or going away changes the overview's counts.
  const counts = useRef<string | null>(null);
  useEffect(() => subscribeEvents({
    overview: (o) => {
      const next = `${o.clientsConnected}/${o.clientsDisconnected}`;
      if (counts.current !== null && counts.current !== next) setReload((n) => n + 1);
      counts.current = next;
    },
  }), []);

  const askRemove = async () => {
    setChecking(true);
    setNotice('');
    try {
      const result = await call<DeleteSessionsResult>('mq', 'deleteMqSessions', { disconnectedOnly: true, dryRun: true });
      setDialog({ kind: 'remove', count: result.count, clientNames: result.clientNames ?? [] });
    } catch (e) {
      setError(errorText(e));
    } finally {
      setChecking(false);
    }
  };

  // In a cluster every node's sessions are listed, each with the node that owns it.
  const clustered = sessions !== null && sessions.some((s) => s.node !== undefined);

  return html`
    <section class="ops-clients" aria-label="Clients">
      <div class="row ops-heading">
        <h1 class="grow">Clients</h1>
        <button type="button" onClick=${() => setReload((n) => n + 1)}>Refresh</button>
        <button type="button" class="danger" onClick=${() => { void askRemove(); }} disabled=${checking}>Remove disconnected sessions</button>
      </div>
      <div class="row ops-toolbar">
        <${SearchBox} label="Search clients" value=${filter} placeholder="Part of a client name" onSearch=${(text: string) => setQuery({ filter: text || undefined, page: undefined })} />
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
      ${sessions === null ? html`<p class="muted">Loading…</p>` : html`
        <div class="card ops-table">
          <table aria-label="Sessions">
            <thead><tr><th>Client</th><th>State</th><th>Kind</th><th>Owner</th>${clustered ? html`<th>Node</th>` : null}<th class="num">Subscriptions</th><th></th></tr></thead>
            <tbody>
              ${sessions.length === 0 ? html`<tr><td colspan=${clustered ? 7 : 6} class="muted">${filter ? `No session name contains "${filter}".` : 'No sessions.'}</td></tr>` : null}
              ${sessions.map((s) => html`
                <tr key=${s.clientName} data-client=${s.clientName}>
                  <td><a class="mono" href=${formatHash({ screen: 'clients', path: [s.clientName] })}>${visible(s.clientName)}</a></td>
                  <td><${ConnectedBadge} connected=${s.connected} /></td>
                  <td>${KIND_TEXT[s.kind] ?? s.kind}</td>
                  <td>${s.owner}</td>
                  ${clustered ? html`<td>${s.node ?? '–'}</td>` : null}
                  <td class="num">${formatCount(s.subscriptionCount)}</td>
                  <td class="ops-actions">${s.connected ? html`<button type="button" aria-label=${`Disconnect ${visibleText(s.clientName)}`} onClick=${() => setDialog({ kind: 'disconnect', clientName: s.clientName })}>Disconnect</button>` : null}</td>
                </tr>`)}
            </tbody>
          </table>
        </div>
        <${Pager} label="Sessions pages" page=${page} pageSize=${PAGE_SIZE} total=${total} shown=${sessions.length} onPage=${(p: number) => setQuery({ page: p > 1 ? p : undefined })} />`}
      ${dialog?.kind === 'disconnect' ? html`
        <${DisconnectDialog} clientName=${dialog.clientName} onClose=${() => setDialog(null)}
          onDone=${() => { setNotice(`Disconnected ${dialog.clientName}.`); setReload((n) => n + 1); }} />` : null}
      ${dialog?.kind === 'remove' ? html`
        <${ConfirmDialog} title="Remove disconnected sessions" confirmLabel=${`Remove ${formatCount(dialog.count)}`} canConfirm=${dialog.count > 0}
          onClose=${() => setDialog(null)}
          onConfirm=${async () => {
            const result = await call<DeleteSessionsResult>('mq', 'deleteMqSessions', { disconnectedOnly: true });
            setNotice(`Removed ${formatCount(result.count)} disconnected ${result.count === 1 ? 'session' : 'sessions'}.`);
            setReload((n) => n + 1);
          }}>
          ${dialog.count === 0
            ? html`<p>There are no disconnected sessions.</p>`
            : html`
              <p><strong class="ops-count">${formatCount(dialog.count)}</strong> disconnected ${dialog.count === 1 ? 'session' : 'sessions'} will be removed, with ${dialog.count === 1 ? 'its' : 'their'} subscriptions and undelivered messages.</p>
              <ul class="mono ops-names">
                ${dialog.clientNames.slice(0, NAMES_SHOWN).map((name) => html`<li key=${name}>${visible(name)}</li>`)}
                ${dialog.count > NAMES_SHOWN ? html`<li class="muted">and ${formatCount(dialog.count - Math.min(NAMES_SHOWN, dialog.clientNames.length))} more</li>` : null}
              </ul>`}
        <//>` : null}
    </section>`;
}

export function ConnectedBadge({ connected }: { connected: boolean }) {
  return html`<span class=${connected ? 'ops-badge ops-on' : 'ops-badge ops-off'}>${connected ? 'Connected' : 'Disconnected'}</span>`;
}

/** Confirms and disconnects one client (MQTT 5 gets DISCONNECT 0x98; a persistent session stays). */
export function DisconnectDialog({ clientName, onClose, onDone }: { clientName: string; onClose: () => void; onDone: () => void }) {
  return html`
    <${ConfirmDialog} title="Disconnect client" confirmLabel="Disconnect" onClose=${onClose}
      onConfirm=${async () => {
        await call<DisconnectClientResult>('mq', 'disconnectMqClient', { clientName });
        onDone();
      }}>
      <p>Disconnect <strong class="mono">${visible(clientName)}</strong>? An MQTT 5 client receives DISCONNECT with reason 0x98 (administrative action); a persistent session stays and keeps its messages.</p>
    <//>`;
}
