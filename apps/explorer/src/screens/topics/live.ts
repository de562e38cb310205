/**
 * Live: the selected topic's traffic over the page's MQTT connection (live-mqtt.ts), subscribed
 * to the topic, or to `<path>/#` when the node has children. At most 500 rows are kept (newest
 * first); older ones and those arriving while paused are counted as skipped. The DOM is updated
 * at most four times a second, whatever the rate.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible, visibleText } from '../../visible-text.js';
import { errorText } from '../../api.js';
import { liveError, liveStatus, subscribedFilters, subscribeLive, type LiveMessage } from '../../live-mqtt.js';
import { hasChildren } from './data.js';
import { useViewportHeight } from './viewport.js';
import { decodeUtf8, formatTimeMillis, parseJson, preview, type TopicMessage } from './format.js';

export const LIVE_ROWS = 500;
const RENDER_INTERVAL_MS = 250;

let sequence = 0;

export function fromLive(message: LiveMessage): TopicMessage {
  const bytes = new Uint8Array(message.payload);
  const text = decodeUtf8(bytes);
  const properties = message.properties;
  const userProperties: Array<{ key: string; value: string }> = [];
  for (const [key, value] of Object.entries(properties.userProperties ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) userProperties.push({ key, value: String(one) });
  }
  return {
    key: `live:${++sequence}`,
    topic: message.topic,
    time: new Date(message.receivedAt).toISOString(),
    live: true,
    bytes,
    text,
    json: parseJson(text),
    qos: message.qos,
    retain: message.retain,
    contentType: properties.contentType,
    responseTopic: properties.responseTopic,
    correlationData: properties.correlationData ? new Uint8Array(properties.correlationData) : undefined,
    expirySeconds: properties.messageExpiryInterval,
    userProperties,
    payloadFormatIndicator: properties.payloadFormatIndicator,
  };
}

/** A kept live message, converted for display only when its row is shown. */
interface LiveEntry {
  raw: LiveMessage;
  message?: TopicMessage;
}

function messageOf(entry: LiveEntry): TopicMessage {
  entry.message ??= fromLive(entry.raw);
  return entry.message;
}

export function LiveTab(props: { path: string; onOpen: (message: TopicMessage, previous: TopicMessage | null) => void; selectedKey?: string }) {
  const [filter, setFilter] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [paused, setPaused] = useState(false);
  const [, setTick] = useState(0);
  const rows = useRef<LiveEntry[]>([]);
  const counts = useRef({ received: 0, skipped: 0 });
  const pausedRef = useRef(false);
  pausedRef.current = paused;

  useEffect(() => {
    const controller = new AbortController();
    setFilter(null);
    setError('');
    rows.current = [];
    counts.current = { received: 0, skipped: 0 };
    setTick((n) => n + 1);
    hasChildren(props.path, controller.signal).then((children) => {
      setFilter(children ? `${props.path}/#` : props.path);
    }, (caught: unknown) => {
      if (!controller.signal.aborted) setError(errorText(caught));
    });
    return () => controller.abort();
  }, [props.path]);

  useEffect(() => {
    if (filter === null) return;
    let dirty = false;
    const timer = setInterval(() => {
      if (!dirty) return;
      dirty = false;
      setTick((n) => n + 1);
    }, RENDER_INTERVAL_MS);
    let stop: () => void = () => undefined;
    try {
      stop = subscribeLive(filter, (message) => {
        counts.current.received++;
        if (pausedRef.current) {
          counts.current.skipped++;
          dirty = true;
          return;
        }
        const list = rows.current;
        list.unshift({ raw: message });
        if (list.length > LIVE_ROWS) {
          counts.current.skipped += list.length - LIVE_ROWS;
          list.length = LIVE_ROWS;
        }
        dirty = true;
      });
    } catch (caught) {
      setError(errorText(caught));
    }
    return () => {
      clearInterval(timer);
      stop();
    };
  }, [filter]);

  const list = rows.current;
  const connection = liveStatus.value;
  const status = connection === 'connected' && filter !== null && !subscribedFilters.value.has(filter) ? 'subscribing' : connection;
  const open = (message: TopicMessage, index: number): void => {
    const previous = list.slice(index + 1).find((candidate) => candidate.raw.topic === message.topic);
    props.onOpen(message, previous ? messageOf(previous) : null);
  };

  return html`
    <section class="live" aria-label="Live messages">
      <div class="row live-tools">
        <span class=${`live-status status-${status}`} role="status">${STATUS_TEXT[status]}${filter ? html` · <span class="mono">${visible(filter)}</span>` : ''}</span>
        <span class="grow"></span>
        <span class="live-counts"><span class="live-received">${counts.current.received.toLocaleString('en-US')} received</span> · <span class="live-skipped">${counts.current.skipped.toLocaleString('en-US')} skipped</span></span>
        <button type="button" aria-pressed=${paused} onClick=${() => setPaused(!paused)}>${paused ? 'Resume' : 'Pause'}</button>
        <button type="button" onClick=${() => { rows.current = []; counts.current = { received: 0, skipped: 0 }; setTick((n) => n + 1); }}>Clear</button>
      </div>
      ${(error || (status === 'error' && liveError.value)) && html`<p class="error" role="alert">${error || liveError.value}</p>`}
      ${list.length === 0 ? html`<p class="muted">${filter ? 'Waiting for messages…' : 'Subscribing…'}</p>` : html`
        <${LiveRows} list=${list} selectedKey=${props.selectedKey} onOpen=${open} />`}
    </section>`;
}

const ROW_HEIGHT = 26;
const OVERSCAN = 6;

/** The kept rows, newest first; only those in view are in the DOM (a fixed row height window). */
function LiveRows(props: { list: LiveEntry[]; selectedKey?: string; onOpen: (message: TopicMessage, index: number) => void }) {
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const height = useViewportHeight(viewport, 480);
  const { list } = props;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(list.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const rows = [];
  for (let index = first; index < last; index++) {
    const message = messageOf(list[index]);
    rows.push(html`
      <div key=${message.key} role="row" class=${`live-row message-row${message.key === props.selectedKey ? ' selected' : ''}`} tabindex="0"
        style=${`top:${index * ROW_HEIGHT}px`} data-key=${message.key}
        onClick=${() => props.onOpen(message, index)}
        onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter') props.onOpen(message, index); }}>
        <span role="cell" class="live-time" title=${message.time}>${formatTimeMillis(message.time)}</span>
        <span role="cell" class="live-topic mono" title=${visibleText(message.topic)}>${visible(message.topic)}</span>
        <span role="cell" class="live-qos">${message.qos}</span>
        <span role="cell" class="live-retain">${message.retain ? 'R' : ''}</span>
        <span role="cell" class="live-payload mono payload-cell">${visible(preview(message, 200))}</span>
      </div>`);
  }
  return html`
    <div class="live-table" role="table" aria-label="Live messages table" aria-rowcount=${list.length}>
      <div class="live-head" role="row">
        <span role="columnheader">Received</span><span role="columnheader">Topic</span><span role="columnheader">QoS</span><span role="columnheader" title="Retain">R</span><span role="columnheader">Payload</span>
      </div>
      <div class="live-scroll" ref=${viewport} onScroll=${(event: Event) => setScrollTop((event.target as HTMLElement).scrollTop)}>
        <div class="live-spacer" style=${`height:${list.length * ROW_HEIGHT}px`} role="rowgroup">${rows}</div>
      </div>
    </div>`;
}

const STATUS_TEXT: Record<string, string> = {
  idle: 'Not connected',
  connecting: 'Connecting…',
  connected: 'Live',
  subscribing: 'Subscribing…',
  reconnecting: 'Reconnecting…',
  error: 'Connection error',
};
