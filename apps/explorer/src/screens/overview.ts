/**
 * Overview: the server's live counters and the ten busiest topics, pushed every second by the
 * `overview` server-sent event (events.ts; its first figures come from one getMqOverview call).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { visible } from '../visible-text.js';
import type { ScreenProps } from '../app.js';
import { subscribeEvents, streamState, type Overview } from '../events.js';
import { formatCount, formatDuration, formatRate, topicHref } from '../format.js';
import { OverviewCharts } from './overview-charts.js';

interface CounterSpec {
  label: string;
  value: (o: Overview) => string;
  title?: string;
  /** The screen that lists what it counts. */
  href?: string;
  /** Highlight a change (counts; not rates or the uptime, which change every second). */
  flash?: boolean;
}

const COUNTERS: CounterSpec[] = [
  { label: 'Clients connected', value: (o) => formatCount(o.clientsConnected), href: '#/clients', flash: true },
  { label: 'Clients disconnected', value: (o) => formatCount(o.clientsDisconnected), title: 'Sessions kept without a connection', href: '#/clients', flash: true },
  { label: 'Topics', value: (o) => formatCount(o.topics), href: '#/topics', flash: true },
  { label: 'Subscriptions', value: (o) => formatCount(o.subscriptions), flash: true },
  { label: 'Messages in', value: (o) => formatRate(o.messagesInPerSecond), title: 'Messages received per second' },
  { label: 'Messages out', value: (o) => formatRate(o.messagesOutPerSecond), title: 'Messages delivered per second' },
  { label: 'Messages received', value: (o) => formatCount(o.messagesReceived), title: 'Since the server started' },
  { label: 'Messages sent', value: (o) => formatCount(o.messagesSent), title: 'Since the server started' },
  { label: 'Stored messages', value: (o) => formatCount(o.storedMessages) },
  { label: 'Retained messages', value: (o) => formatCount(o.retainedMessages), href: '#/retained', flash: true },
  { label: 'Tables', value: (o) => formatCount(o.tables), href: '#/tables', flash: true },
  { label: 'Uptime', value: (o) => formatDuration(o.uptimeSeconds) },
];

const STATE_TEXT = {
  idle: 'Not connected',
  connecting: 'Connecting…',
  live: 'Live',
  retrying: 'Reconnecting…',
  ended: 'Session ended',
} as const;

export function OverviewScreen(_props: ScreenProps) {
  const [overview, setOverview] = useState<Overview | null>(null);
  useEffect(() => subscribeEvents({ overview: setOverview }), []);
  const state = streamState.value;
  return html`
    <section class="ops-overview" aria-label="Overview">
      <div class="row ops-heading">
        <h1 class="grow">Overview</h1>
        <span class=${`ops-live ops-live-${state}`} role="status" aria-label="Live updates">${STATE_TEXT[state]}</span>
      </div>
      ${overview === null
        ? html`<p class="muted">Loading…</p>`
        : html`
          <div class="counters" aria-label="Counters">
            ${COUNTERS.map((spec) => html`<${Counter} key=${spec.label} spec=${spec} value=${spec.value(overview)} />`)}
          </div>
          <${OverviewCharts} />
          <${BusiestTopics} topics=${overview.busiestTopics ?? []} />`}
    </section>`;
}

function Counter({ spec, value }: { spec: CounterSpec; value: string }) {
  // The first figures are not a change: flash from the second value on.
  const first = useRef(value);
  const changed = spec.flash && value !== first.current;
  if (changed) first.current = '\u0000';
  return html`
    <div class="counter" role="group" aria-label=${spec.label} title=${spec.title}>
      ${changed
        ? html`<div class="value flash" key=${value}>${value}</div>`
        : html`<div class="value">${value}</div>`}
      <div class="label">${spec.href ? html`<a href=${spec.href}>${spec.label}</a>` : spec.label}</div>
    </div>`;
}

function BusiestTopics({ topics }: { topics: Overview['busiestTopics'] }) {
  return html`
    <section class="card ops-busiest" aria-label="Busiest topics">
      <h2>Busiest topics</h2>
      ${topics.length === 0
        ? html`<p class="muted">No messages in the last seconds.</p>`
        : html`
          <table>
            <thead><tr><th>Topic</th><th class="num">Messages</th></tr></thead>
            <tbody>
              ${topics.map((t) => html`
                <tr key=${t.topic}>
                  <td><a class="mono" href=${topicHref(t.topic)}>${t.topic === '' ? '(empty)' : visible(t.topic)}</a></td>
                  <td class="num">${formatRate(t.messagesPerSecond)}</td>
                </tr>`)}
            </tbody>
          </table>`}
    </section>`;
}
