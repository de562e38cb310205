/**
 * One session (`#/clients/<clientName>`): state, statistics, its position in the message log,
 * subscriptions with their options, subscribed and published topics (links to the Topics screen);
 * disconnect it (connected) or delete the session. Reloads when the overview counts change.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible, visibleText } from '../../visible-text.js';
import { ApiError, call, errorText } from '../../api.js';
import { formatHash, navigate } from '../../router.js';
import { subscribeEvents } from '../../events.js';
import { formatAgo, formatCount, formatDuration, formatRate, formatTime, topicHref } from '../../format.js';
import { ConfirmDialog } from './confirm.js';
import { ConnectedBadge, DisconnectDialog } from './list.js';
import { KIND_TEXT, type MqSessionDescription, type MqSessionSubscription } from './types.js';

/** The session-not-found error code (14237). */
const SESSION_NOT_FOUND = 14237;
const TOPICS_SHOWN = 200;

export function ClientDetail({ clientName }: { clientName: string }) {
  const [session, setSession] = useState<MqSessionDescription | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);
  const [dialog, setDialog] = useState<'disconnect' | 'delete' | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    call<{ sessions: MqSessionDescription[] }>('mq', 'describeMqSessions', { clientNames: [clientName] }, abort.signal)
      .then((result) => {
        const found = result.sessions.find((s) => s.clientName === clientName) ?? null;
        setSession(found);
        setMissing(found === null);
        setError('');
      })
      .catch((e) => {
        if (abort.signal.aborted) return;
        if (e instanceof ApiError && e.code === SESSION_NOT_FOUND) {
          setSession(null);
          setMissing(true);
        } else setError(errorText(e));
      });
    return () => abort.abort();
  }, [clientName, reload]);

  // Statistics move with traffic: follow the overview's figures (once a second at most).
  const last = useRef<string | null>(null);
  useEffect(() => subscribeEvents({
    overview: (o) => {
      const next = `${o.clientsConnected}/${o.clientsDisconnected}/${o.messagesReceived}/${o.messagesSent}/${o.subscriptions}`;
      if (last.current !== null && last.current !== next) setReload((n) => n + 1);
      last.current = next;
    },
  }), []);

  const back = formatHash({ screen: 'clients' });
  return html`
    <section class="ops-client" aria-label=${`Client ${visibleText(clientName)}`}>
      <p><a href=${back}>← Clients</a></p>
      <div class="row ops-heading">
        <h1 class="grow mono ops-break">${visible(clientName)}</h1>
        ${session ? html`<${ConnectedBadge} connected=${session.connected} />` : null}
        <button type="button" onClick=${() => setReload((n) => n + 1)}>Refresh</button>
        ${session?.connected ? html`<button type="button" onClick=${() => setDialog('disconnect')}>Disconnect</button>` : null}
        ${session ? html`<button type="button" class="danger" onClick=${() => setDialog('delete')}>Delete session</button>` : null}
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
      ${missing ? html`<p class="error" role="alert">There is no session "${visible(clientName)}" (or you may not see it).</p>` : null}
      ${session === null ? (missing ? null : html`<p class="muted">Loading…</p>`) : html`<${Description} session=${session} />`}
      ${dialog === 'disconnect' ? html`<${DisconnectDialog} clientName=${clientName} onClose=${() => setDialog(null)} onDone=${() => { setNotice(`Disconnected ${clientName}.`); setReload((n) => n + 1); }} />` : null}
      ${dialog === 'delete' ? html`
        <${ConfirmDialog} title="Delete session" confirmLabel="Delete session" onClose=${() => setDialog(null)}
          onConfirm=${async () => {
            await call('mq', 'deleteMqSession', { clientName });
            navigate({ screen: 'clients' });
          }}>
          <p>Delete the session <strong class="mono">${visible(clientName)}</strong> with its subscriptions? A connected MQTT client is disconnected (MQTT 5: 0x8E).</p>
        <//>` : null}
    </section>`;
}

function Description({ session }: { session: MqSessionDescription }) {
  return html`
    <div class="counters" aria-label="Statistics">
      ${stat('Kind', KIND_TEXT[session.kind] ?? session.kind)}
      ${stat('Owner', session.owner)}
      ${session.connectedSince
        ? stat('Connected since', formatAgo(session.connectedSince), formatTime(session.connectedSince))
        : stat('Disconnected since', session.disconnectedSince ? formatAgo(session.disconnectedSince) : '—', session.disconnectedSince ? formatTime(session.disconnectedSince) : 'Not connected since the server started')}
      ${session.address !== null && stat('Address', session.address)}
      ${session.protocolVersion !== null && stat('Protocol', PROTOCOL_TEXT[session.protocolVersion] ?? `level ${session.protocolVersion}`)}
      ${session.keepAliveSeconds !== null && stat('Keep alive', session.keepAliveSeconds === 0 ? 'None' : formatDuration(session.keepAliveSeconds))}
      ${stat('In flight', formatCount(session.inflight), 'QoS 1 and 2 messages sent to it and not yet acknowledged')}
      ${stat('Queued', formatCount(session.queued), 'Messages logged after its position in the log: at most what it still has to receive')}
      ${stat('Subscriptions', formatCount(session.subscriptionCount))}
      ${stat('Messages published', formatCount(session.messagesPublished), `Last: ${formatTime(session.lastPublishedAt)}`)}
      ${stat('Messages received', formatCount(session.messagesReceived), `Last: ${formatTime(session.lastReceivedAt)}`)}
      ${stat('Publish rate', formatRate(session.publishRate), 'Since the session was created or the server started')}
      ${stat('Receive rate', formatRate(session.receiveRate), 'Since the session was created or the server started')}
      ${stat('Last published', formatAgo(session.lastPublishedAt), formatTime(session.lastPublishedAt))}
      ${stat('Last received', formatAgo(session.lastReceivedAt), formatTime(session.lastReceivedAt))}
      ${stat('Position', `message ${formatCount(session.position)}`, 'Its place in the message log')}
    </div>
    <p class="muted ops-position">It has read the message log up to message ${formatCount(session.position)}; ${session.queued === 0 ? 'nothing newer is waiting for it.' : `${formatCount(session.queued)} newer ${session.queued === 1 ? 'message was' : 'messages were'} logged since, of which it receives those its subscriptions match.`}</p>
    <div class="counters" aria-label="Session">
      ${stat('Session expiry', session.expiryInterval === 0 ? 'On disconnect' : session.expiryInterval >= 4294967295 ? 'Never' : formatDuration(session.expiryInterval))}
    </div>
    <section class="card" aria-label="Subscriptions">
      <h2>Subscriptions</h2>
      ${session.subscriptions.length === 0 ? html`<p class="muted">No subscriptions.</p>` : html`
        <table>
          <thead><tr><th>Topic filter</th><th>QoS</th><th>Options</th></tr></thead>
          <tbody>${session.subscriptions.map((s) => html`
            <tr key=${s.topicFilter}><td class="mono">${visible(s.topicFilter)}</td><td>${s.qos ?? '—'}</td><td class="muted">${options(s)}</td></tr>`)}
          </tbody>
        </table>`}
    </section>
    <div class="ops-columns">
      <${TopicList} title="Subscribed topics" topics=${session.subscribedTopics} empty="No topic of the log matches its subscriptions." />
      <${TopicList} title="Published topics" topics=${session.publishedTopics} empty="It has published nothing." />
    </div>`;
}

const PROTOCOL_TEXT: Record<number, string> = { 3: 'MQTT 3.1', 4: 'MQTT 3.1.1', 5: 'MQTT 5' };

function stat(label: string, value: string, title?: string) {
  return html`<div class="counter" role="group" aria-label=${label} title=${title}><div class="value ops-small">${value}</div><div class="label">${label}</div></div>`;
}

/** How retained messages reach a new subscription (retainHandling 1, 2), in the words of changeSubscriptions. */
const RETAIN_HANDLING_TEXT = { 1: 'onNewSubscription', 2: 'never' } as const;

/** The options a subscription is listed with (MQTT 5 names, as the server keeps them). */
function options(s: MqSessionSubscription): string {
  const parts: string[] = [];
  if (s.subscriptionIdentifier !== undefined) parts.push(`id ${s.subscriptionIdentifier}`);
  if (s.noLocal) parts.push('no local');
  if (s.retainAsPublished) parts.push('retain as published');
  if (s.retainHandling !== 0) parts.push(`retained: ${RETAIN_HANDLING_TEXT[s.retainHandling]}`);
  if (s.includeExpired) parts.push('expired included');
  if (s.binaryFormat) parts.push(`binary as ${s.binaryFormat}`);
  return parts.join(', ') || '—';
}

function TopicList({ title, topics, empty }: { title: string; topics: string[]; empty: string }) {
  return html`
    <section class="card" aria-label=${title}>
      <h2>${title} <span class="muted">(${formatCount(topics.length)}${topics.length >= 1000 ? '+' : ''})</span></h2>
      ${topics.length === 0 ? html`<p class="muted">${empty}</p>` : html`
        <ul class="ops-topics">
          ${topics.slice(0, TOPICS_SHOWN).map((t) => html`<li key=${t}><a class="mono" href=${topicHref(t)}>${t === '' ? '(empty)' : visible(t)}</a></li>`)}
          ${topics.length > TOPICS_SHOWN ? html`<li class="muted">and ${formatCount(topics.length - TOPICS_SHOWN)} more</li>` : null}
        </ul>`}
    </section>`;
}
