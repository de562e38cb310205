/**
 * Message detail: the payload as pretty JSON, raw text, hex or base64; QoS, retain, MQTT 5
 * properties, publisher, time; a diff against the previous message of the topic; copy; republish.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible } from '../../visible-text.js';
import { errorText } from '../../api.js';
import { diffLines, formatDelta, type DiffLine } from './diff.js';
import { canLinkNumbers, jsonParts } from './json-view.js';
import { readMessage, readPrevious, republishDraft, type PublishDraft } from './data.js';
import { bytesToBase64, bytesToHex, decodeUtf8, formatTime, hexDump, prettyText, TRANSFORM_PREFIX, transformValueText, type TopicMessage } from './format.js';

type View = 'pretty' | 'raw' | 'hex' | 'base64';

export interface MessageDetailProps {
  topic: string;
  /** A stored message by id (fetched), or a message at hand (live). */
  id?: number;
  message?: TopicMessage;
  /** For live messages: the previous one of the same topic, when known. */
  previous?: TopicMessage | null;
  onClose: () => void;
  onRepublish: (draft: PublishDraft) => void;
  /** Charts a number of the payload (its JSON path, '' for the payload itself) on the message's topic. */
  onChart?: (topic: string, path: string) => void;
}

export function MessageDetail(props: MessageDetailProps) {
  const [message, setMessage] = useState<TopicMessage | null>(props.message ?? null);
  const [previous, setPrevious] = useState<TopicMessage | null | undefined>(props.previous);
  const [error, setError] = useState('');
  const [view, setView] = useState<View>('pretty');
  const [copied, setCopied] = useState('');

  useEffect(() => {
    const controller = new AbortController();
    setError('');
    if (props.message) {
      setMessage(props.message);
      setPrevious(props.previous);
      if (props.previous === undefined && props.message.id !== undefined) {
        readPrevious(props.topic, props.message.id, controller.signal).then(setPrevious, () => setPrevious(null));
      } else if (props.previous === undefined) {
        setPrevious(null);
      }
    } else if (props.id !== undefined) {
      setMessage(null);
      setPrevious(undefined);
      const id = props.id;
      readMessage(props.topic, id, controller.signal).then((found) => {
        if (!found) {
          setError(`No message ${id} on ${props.topic}.`);
          return;
        }
        setMessage(found);
        return readPrevious(props.topic, id, controller.signal).then(setPrevious);
      }).catch((caught: unknown) => {
        if (!controller.signal.aborted) setError(errorText(caught));
      });
    }
    return () => controller.abort();
  }, [props.topic, props.id, props.message]);

  const title = message?.id !== undefined ? `Message ${message.id}` : props.id !== undefined ? `Message ${props.id}` : 'Live message';
  const body = message ? viewText(message, view) : '';

  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(body);
      setCopied('Copied.');
    } catch {
      setCopied('The browser did not allow copying; select the text instead.');
    }
  };

  const republish = (): void => {
    if (!message) return;
    // Bytes that are not UTF-8 go back as base64, so the republished payload is the same bytes.
    const draft: PublishDraft = {
      topic: message.topic,
      payload: message.text ?? bytesToBase64(message.bytes),
      payloadType: message.text === null ? 'base64' : 'utf8',
      qos: message.qos,
      retain: message.retain,
      contentType: message.contentType ?? '',
      responseTopic: message.responseTopic ?? '',
      correlationData: message.correlationData ? decodeUtf8(message.correlationData) ?? '' : '',
      expirySeconds: message.expirySeconds === undefined ? '' : String(message.expirySeconds),
      userProperties: message.userProperties.map((property) => ({ ...property })),
    };
    republishDraft.value = draft;
    props.onRepublish(draft);
  };

  return html`
    <section class="message-detail card" role="dialog" aria-label=${title}>
      <div class="row">
        <h3 class="grow">${title}</h3>
        <button type="button" onClick=${() => { void copy(); }} disabled=${!message}>Copy</button>
        <button type="button" onClick=${republish} disabled=${!message}>Republish</button>
        <button type="button" aria-label="Close message" onClick=${props.onClose}>✕</button>
      </div>
      ${copied && html`<p class="muted" role="status">${copied}</p>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${!message && !error && html`<p class="muted">Loading…</p>`}
      ${message && html`
        <dl class="message-fields">
          <dt>Topic</dt><dd class="mono">${visible(message.topic)}</dd>
          <dt>${message.live ? 'Received' : 'Stored'}</dt><dd title=${message.time}>${formatTime(message.time)} <span class="muted">${message.time}</span></dd>
          <dt>QoS</dt><dd>${message.qos}</dd>
          <dt>Retain</dt><dd>${message.retain ? 'yes' : 'no'}</dd>
          <dt>Size</dt><dd>${message.bytes.length.toLocaleString('en-US')} bytes</dd>
          ${message.publisher !== undefined && html`<dt>Publisher</dt><dd class="mono">${message.publisher ? visible(message.publisher) : '—'}</dd>`}
          ${message.contentType && html`<dt>Content type</dt><dd class="mono">${visible(message.contentType)}</dd>`}
          ${message.responseTopic && html`<dt>Response topic</dt><dd class="mono">${visible(message.responseTopic)}</dd>`}
          ${message.correlationData && html`<dt>Correlation data</dt><dd class="mono">${visible(decodeUtf8(message.correlationData) ?? bytesToHex(message.correlationData, true))}</dd>`}
          ${message.expirySeconds !== undefined && html`<dt>Message expiry</dt><dd>${message.expirySeconds} s${message.expired ? ' (expired)' : ''}</dd>`}
          ${message.payloadFormatIndicator !== undefined && html`<dt>Payload format</dt><dd>${message.payloadFormatIndicator ? 'UTF-8 (1)' : 'bytes (0)'}</dd>`}
          ${message.userProperties.length > 0 && html`<dt>User properties</dt><dd><table class="user-properties"><tbody>
            ${message.userProperties.map((property) => html`<tr><td class="mono">${visible(property.key)}</td><td class="mono">${visible(property.value)}</td></tr>`)}
          </tbody></table></dd>`}
          ${message.transformFields && Object.keys(message.transformFields).length > 0 && html`<dt>Transform fields</dt><dd><table class="transform-fields" aria-label="Transform fields"><tbody>
            ${Object.entries(message.transformFields).map(([name, value]) => html`<tr><td class="mono">${visible(name)}</td>
              <td class=${`mono${value === null ? ' muted' : ''}`}>${visible(transformValueText(value))}${props.onChart && typeof value === 'number'
                ? html` <button type="button" class="link" aria-label=${`Chart ${name}`} onClick=${() => props.onChart!(message.topic, `${TRANSFORM_PREFIX}${name}`)}>chart</button>` : ''}</td></tr>`)}
          </tbody></table></dd>`}
        </dl>
        <div class="tabs" role="tablist" aria-label="Payload view">
          ${(['pretty', 'raw', 'hex', 'base64'] as View[]).map((candidate) => html`
            <button type="button" role="tab" aria-selected=${view === candidate} class=${view === candidate ? 'active' : ''} onClick=${() => setView(candidate)}>${VIEW_NAMES[candidate]}</button>`)}
        </div>
        ${view === 'pretty' && props.onChart && message.json !== undefined && canLinkNumbers(message.json)
          ? html`<pre class="payload" aria-label="Payload">${jsonParts(message.json, (path) => props.onChart!(message.topic, path))}</pre>
            <p class="muted hint">Click a number to chart it.</p>`
          : html`<pre class=${`payload${view === 'hex' ? ' hex-dump' : ''}`} aria-label="Payload">${visible(body)}</pre>`}
        <h4>Changes since the previous message</h4>
        ${previous === undefined ? html`<p class="muted">Loading the previous message…</p>`
          : previous === null ? html`<p class="muted">No previous message of this topic.</p>`
          : html`<${DiffView} before=${prettyText(previous)} after=${prettyText(message)} previous=${previous} />`}
      `}
    </section>`;
}

const VIEW_NAMES: Record<View, string> = { pretty: 'Pretty', raw: 'Raw', hex: 'Hex', base64: 'Base64' };

function viewText(message: TopicMessage, view: View): string {
  switch (view) {
    case 'pretty': return prettyText(message);
    case 'raw': return message.text ?? bytesToHex(message.bytes, true);
    case 'hex': return hexDump(message.bytes);
    case 'base64': return bytesToBase64(message.bytes);
  }
}

function DiffView(props: { before: string; after: string; previous: TopicMessage }) {
  const lines = diffLines(props.before, props.after);
  const changed = lines.some((line) => line.kind !== 'same');
  return html`
    <p class="muted">Against ${props.previous.id !== undefined ? `message ${props.previous.id}` : 'the previous live message'} (${formatTime(props.previous.time)}).${changed ? '' : ' Same payload.'}</p>
    <pre class="diff" aria-label="Diff">${lines.map(diffLine)}</pre>`;
}

function diffLine(line: DiffLine) {
  if (line.kind === 'same') return html`<div class="diff-same"><span class="diff-sign"> </span>${visible(line.text)}</div>`;
  const sign = line.kind === 'added' ? '+' : '-';
  const cls = line.kind === 'added' ? 'diff-added' : 'diff-removed';
  if (!line.numbers || line.numbers.length === 0) return html`<div class=${cls}><span class="diff-sign">${sign}</span>${visible(line.text)}</div>`;
  const parts: unknown[] = [];
  let at = 0;
  for (const change of line.numbers) {
    parts.push(visible(line.text.slice(at, change.start)));
    parts.push(html`<mark class="diff-number" title=${`changed by ${formatDelta(change.delta)}`}>${line.text.slice(change.start, change.end)}</mark>`);
    at = change.end;
  }
  parts.push(visible(line.text.slice(at)));
  const delta = line.kind === 'added' ? html` <span class="diff-delta muted">(${line.numbers.map((change) => formatDelta(change.delta)).join(', ')})</span>` : '';
  return html`<div class=${cls}><span class="diff-sign">${sign}</span>${parts}${delta}</div>`;
}
