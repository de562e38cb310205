/** One topic's retained message: payload pretty or raw (binary as hex or base64), properties. */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible } from '../../visible-text.js';
import { call, errorText } from '../../api.js';
import { formatHash } from '../../router.js';
import { binaryAsText, formatBytes, formatPayload, formatTime, topicHref } from '../../format.js';
import { DeleteOneDialog, backToList } from './list.js';
import { retainedHash, type RetainedMessage, type RetainedPage } from './types.js';

export function RetainedView({ topic, filter }: { topic: string; filter: string }) {
  const [message, setMessage] = useState<RetainedMessage | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState('');
  const [pretty, setPretty] = useState(true);
  const [bytesAs, setBytesAs] = useState<'text' | 'hex' | 'base64'>('text');
  const binaryFormat = bytesAs === 'base64' ? 'base64' : 'hex';
  const [reload, setReload] = useState(0);
  const [confirming, setConfirming] = useState(false);

  useEffect(() => {
    const abort = new AbortController();
    // A topic has no wildcards, so as a filter it matches itself only.
    call<RetainedPage>('mq', 'listRetainedMessages', { topicFilter: topic, limit: 1, binaryFormat }, abort.signal)
      .then((result) => {
        const found = result.messages.find((m) => m.topic === topic) ?? null;
        setMessage(found);
        setMissing(found === null);
        setError('');
      })
      .catch((e) => { if (!abort.signal.aborted) setError(errorText(e)); });
    return () => abort.abort();
  }, [topic, binaryFormat, reload]);

  // Binary payloads: as UTF-8 text when they are text (and asked), else in hex or base64.
  const asText = message?.binaryFormat && bytesAs === 'text' ? binaryAsText(message.payload, message.binaryFormat) : null;
  const payloadText = message ? formatPayload(asText ?? message.payload, pretty) : '';
  return html`
    <section class="ops-retained-one" aria-label="Retained message">
      <p><a href=${formatHash(retainedHash(filter))}>← Retained messages${filter === '#' ? '' : ` matching ${filter}`}</a></p>
      <div class="row ops-heading">
        <h1 class="grow mono ops-break">${visible(topic)}</h1>
        <a href=${topicHref(topic)}>Open topic</a>
        <button type="button" onClick=${() => setReload((n) => n + 1)}>Refresh</button>
        ${message ? html`<button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete</button>` : null}
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      ${missing ? html`<p class="notice" role="status">No retained message on this topic.</p>` : null}
      ${message ? html`
        <section class="card" aria-label="Payload">
          <div class="row">
            <h2 class="grow">Payload <span class="muted">${payloadSize(message)}</span></h2>
            <div class="tabs" role="group" aria-label="Payload view">
              <button type="button" class=${pretty ? 'active' : ''} aria-pressed=${pretty} onClick=${() => setPretty(true)}>Pretty</button>
              <button type="button" class=${pretty ? '' : 'active'} aria-pressed=${!pretty} onClick=${() => setPretty(false)}>Raw</button>
            </div>
            ${message.binaryFormat ? html`
              <label>Bytes as <select value=${bytesAs} onChange=${(event: Event) => setBytesAs((event.currentTarget as HTMLSelectElement).value as 'text' | 'hex' | 'base64')}>
                <option value="text">text</option><option value="hex">hex</option><option value="base64">base64</option>
              </select></label>` : null}
          </div>
          ${message.binaryFormat && bytesAs === 'text' && asText === null ? html`<p class="muted">Not UTF-8 text: shown in hex.</p>` : null}
          <pre class="ops-payload" aria-label="Payload text">${payloadText === '' ? html`<span class="muted">(empty)</span>` : visible(payloadText)}</pre>
        </section>
        <section class="card" aria-label="Properties">
          <h2>Properties</h2>
          <table class="ops-properties">
            <tbody>
              ${property('Message id', message.id)}
              ${property('Time', message.timestamp ? `${formatTime(message.timestamp, true)} (${message.timestamp})` : undefined)}
              ${property('QoS', message.qos)}
              ${property('Publisher', message.publisher)}
              ${property('Content type', message.contentType)}
              ${property('Payload format', message.payloadFormatIndicator === undefined ? undefined : message.payloadFormatIndicator ? 'UTF-8 text (1)' : 'bytes (0)')}
              ${property('Response topic', message.responseTopic)}
              ${property('Correlation data', message.correlationData)}
              ${property('Expiry', message.expirySeconds === null || message.expirySeconds === undefined ? 'never' : `${message.expirySeconds} s`)}
              ${message.messageHasExpired ? property('Expired', 'yes') : null}
              ${property('Binary format', message.binaryFormat)}
            </tbody>
          </table>
          <h3>User properties</h3>
          ${(message.userProperties ?? []).length === 0 ? html`<p class="muted">None.</p>` : html`
            <table aria-label="User properties">
              <thead><tr><th>Key</th><th>Value</th></tr></thead>
              <tbody>${(message.userProperties ?? []).map((p, i) => html`<tr key=${i}><td class="mono">${p.key}</td><td class="mono">${p.value}</td></tr>`)}</tbody>
            </table>`}
        </section>` : null}
      ${confirming ? html`<${DeleteOneDialog} topic=${topic} onClose=${() => setConfirming(false)} onDone=${() => backToList(filter)} />` : null}
    </section>`;
}

function property(label: string, value: unknown) {
  if (value === undefined || value === null || value === '') return null;
  return html`<tr><th scope="row">${label}</th><td class="mono ops-break">${visible(String(value))}</td></tr>`;
}

function payloadSize(message: RetainedMessage): string {
  const p = message.payload;
  if (message.binaryFormat === 'hex' && typeof p === 'string') return formatBytes(p.length / 2);
  if (message.binaryFormat === 'base64' && typeof p === 'string') return formatBytes(Math.floor((p.length * 3) / 4) - (p.endsWith('==') ? 2 : p.endsWith('=') ? 1 : 0));
  if (typeof p === 'string') return formatBytes(new TextEncoder().encode(p).length);
  if (p === undefined) return '';
  return formatBytes(new TextEncoder().encode(JSON.stringify(p)).length);
}
