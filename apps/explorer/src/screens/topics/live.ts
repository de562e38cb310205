/**
 * Live: the selected topic's traffic over the page's MQTT connection (live-mqtt.ts), subscribed
 * to the topic, or to `<path>/#` when the node has children. At most 500 rows are kept (newest
 * first); older ones and those arriving while paused are counted as skipped. The DOM is updated
 * at most four times a second, whatever the rate.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { errorText } from '../../api.js';
import { liveError, liveStatus, subscribedFilters, subscribeLive, type LiveMessage } from '../../live-mqtt.js';
import { hasChildren } from './data.js';
import { decodeUtf8, formatTime, parseJson, preview, type TopicMessage } from './format.js';

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

export function LiveTab(props: { path: string; onOpen: (message: TopicMessage, previous: TopicMessage | null) => void; selectedKey?: string }) {
  const [filter, setFilter] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [paused, setPaused] = useState(false);
  const [, setTick] = useState(0);
  const rows = useRef<TopicMessage[]>([]);
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
        list.unshift(fromLive(message));
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
    const previous = list.slice(index + 1).find((candidate) => candidate.topic === message.topic) ?? null;
    props.onOpen(message, previous);
  };

  return html`
    <section class="live" aria-label="Live messages">
      <div class="row live-tools">
        <span class=${`live-status status-${status}`} role="status">${STATUS_TEXT[status]}${filter ? html` · <span class="mono">${filter}</span>` : ''}</span>
        <span class="grow"></span>
        <span class="live-counts"><span class="live-received">${counts.current.received.toLocaleString('en-US')} received</span> · <span class="live-skipped">${counts.current.skipped.toLocaleString('en-US')} skipped</span></span>
        <button type="button" aria-pressed=${paused} onClick=${() => setPaused(!paused)}>${paused ? 'Resume' : 'Pause'}</button>
        <button type="button" onClick=${() => { rows.current = []; counts.current = { received: 0, skipped: 0 }; setTick((n) => n + 1); }}>Clear</button>
      </div>
      ${(error || (status === 'error' && liveError.value)) && html`<p class="error" role="alert">${error || liveError.value}</p>`}
      ${list.length === 0 ? html`<p class="muted">${filter ? 'Waiting for messages…' : 'Subscribing…'}</p>` : html`
        <div class="live-scroll">
          <table class="messages" aria-label="Live messages table">
            <thead><tr><th>Received</th><th>Topic</th><th>QoS</th><th>Retain</th><th>Payload</th></tr></thead>
            <tbody>
              ${list.map((message, index) => html`
                <tr key=${message.key} class=${`message-row live-row${message.key === props.selectedKey ? ' selected' : ''}`} tabindex="0"
                  onClick=${() => open(message, index)}
                  onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter') open(message, index); }}>
                  <td title=${message.time}>${formatTime(message.time)}</td>
                  <td class="mono">${message.topic}</td>
                  <td>${message.qos}</td>
                  <td>${message.retain ? 'yes' : ''}</td>
                  <td class="mono payload-cell">${preview(message)}</td>
                </tr>`)}
            </tbody>
          </table>
        </div>`}
    </section>`;
}

const STATUS_TEXT: Record<string, string> = {
  idle: 'Not connected',
  connecting: 'Connecting…',
  connected: 'Live',
  subscribing: 'Subscribing…',
  reconnecting: 'Reconnecting…',
  error: 'Connection error',
};
