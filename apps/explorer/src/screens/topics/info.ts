/** Info: describeTopics of the selected topic (counts, first/last, rates, subscribers, retention, table). */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { errorText } from '../../api.js';
import { formatHash } from '../../router.js';
import { describeTopic, type TopicDescription } from './data.js';
import { formatCount, formatTime } from './format.js';
import { findNode } from './tree-state.js';

export function InfoTab(props: { topic: string }) {
  const [info, setInfo] = useState<TopicDescription | null | undefined>(undefined);
  const [error, setError] = useState('');
  const [reloads, setReloads] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    setError('');
    describeTopic(props.topic, controller.signal).then(setInfo, (caught: unknown) => {
      if (!controller.signal.aborted) setError(errorText(caught));
    });
    return () => controller.abort();
  }, [props.topic, reloads]);

  const node = findNode(props.topic);
  return html`
    <section class="info" aria-label="Topic information">
      <div class="row"><span class="grow"></span><button type="button" onClick=${() => setReloads(reloads + 1)}>Refresh</button></div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${info === undefined && !error && html`<p class="muted">Loading…</p>`}
      ${info === null && html`<p class="muted">No message was ever published to <span class="mono">${props.topic}</span> itself${node ? html`; below it: ${formatCount(node.topicCount)} topics, ${formatCount(node.messageCount)} messages` : ''}.</p>`}
      ${info && html`
        <dl class="info-fields">
          <dt>Topic</dt><dd class="mono">${info.topic}</dd>
          <dt>Messages stored</dt><dd class="info-count">${formatCount(info.messageCount)}</dd>
          <dt>First message</dt><dd>${info.firstMessageId ?? '—'} <span class="muted">${formatTime(info.firstMessageTime)}</span></dd>
          <dt>Last message</dt><dd>${info.lastMessageId ?? '—'} <span class="muted">${formatTime(info.lastMessageTime)}</span></dd>
          <dt>Last minute</dt><dd>${formatCount(info.messagesLastMinute)}</dd>
          <dt>Last hour</dt><dd>${formatCount(info.messagesLastHour)}</dd>
          <dt>Last day</dt><dd>${formatCount(info.messagesLastDay)}</dd>
          <dt>Created</dt><dd>${formatTime(info.createdAt)}</dd>
          <dt>Subscribers</dt><dd>${info.subscribers.length === 0 ? html`<span class="muted">none</span>` : html`<ul class="plain">${info.subscribers.map((name) => html`<li class="mono"><a href=${formatHash({ screen: 'clients', path: [name] })}>${name}</a></li>`)}</ul>`}</dd>
          <dt>Retention</dt><dd>${info.retention ? html`<code>${retentionText(info.retention)}</code>` : html`<span class="muted">kept</span>`}</dd>
          <dt>Integration table</dt><dd><a href=${formatHash({ screen: 'tables', path: [info.databaseName, info.tableName] })}>${info.databaseName}.${info.tableName}</a></dd>
        </dl>`}
    </section>`;
}

function retentionText(retention: Record<string, unknown>): string {
  return Object.entries(retention).filter(([, value]) => value !== null && value !== undefined).map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`).join(', ');
}
