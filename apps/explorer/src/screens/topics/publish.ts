/**
 * Publish: one message through publishMessagesToMq (the path MQTT publishes take), with QoS,
 * retain and the MQTT 5 properties; the topic comes from the tree, a republished message fills
 * everything. The payload is text, JSON (checked here, with its line and column), or bytes as hex
 * or base64; Ctrl+Enter sends; the payloads sent are kept in a history (localStorage); messages
 * carry this console's client name as their publisher.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { call, errorText } from '../../api.js';
import { CONSOLE_CLIENT_NAME } from '../../live-mqtt.js';
import { emptyDraft, republishDraft, type PublishDraft } from './data.js';
import { checkBase64Input, jsonError, parseHexInput, textToHex } from './format.js';
import { rememberSent, sentHistory, type SentPayload } from './sent-history.js';

/** What is wrong with the payload for its type, checked as it is typed; null when it can be sent. */
export function payloadProblem(payload: string, type: PublishDraft['payloadType']): string | null {
  switch (type) {
    case 'json': {
      const problem = jsonError(payload);
      return problem === null ? null : `Not JSON at ${problem}`;
    }
    case 'hex': {
      const bytes = parseHexInput(payload);
      return typeof bytes === 'string' ? bytes : null;
    }
    case 'base64': return checkBase64Input(payload);
    default: return null;
  }
}

export function PublishTab(props: { topic: string; onPublished?: (id: number) => void }) {
  const [draft, setDraft] = useState<PublishDraft>(() => copyDraft(republishDraft.peek()) ?? emptyDraft(props.topic));
  const [error, setError] = useState('');
  const [result, setResult] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<SentPayload[]>(sentHistory);
  const problem = payloadProblem(draft.payload, draft.payloadType);

  // A republished message (on open, or while this tab is open) fills the form once.
  const pendingDraft = republishDraft.value;
  useEffect(() => {
    if (!pendingDraft) return;
    setDraft(copyDraft(pendingDraft)!);
    republishDraft.value = null;
  }, [pendingDraft]);
  useEffect(() => {
    setDraft((current) => (current.topic === props.topic ? current : { ...current, topic: props.topic }));
  }, [props.topic]);

  const update = (changes: Partial<PublishDraft>): void => setDraft({ ...draft, ...changes });
  const field = (name: keyof PublishDraft) => (event: Event) => update({ [name]: (event.target as HTMLInputElement).value } as Partial<PublishDraft>);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError('');
    setResult('');
    if (problem !== null) {
      setError(problem);
      return;
    }
    const binary = draft.payloadType === 'hex' || draft.payloadType === 'base64';
    const message: Record<string, unknown> = {
      payload: draft.payloadType === 'hex' ? draft.payload.replace(/\s+/g, '') : draft.payloadType === 'base64' ? draft.payload.replace(/\s+/g, '') : draft.payload,
      mqttPayloadType: binary ? 'binary' : draft.payloadType,
      qos: draft.qos,
      retain: draft.retain,
    };
    if (binary) message.binaryFormat = draft.payloadType;
    if (draft.contentType) message.contentType = draft.contentType;
    if (draft.responseTopic) message.responseTopic = draft.responseTopic;
    if (draft.correlationData) {
      // Correlation data is written in the message's binaryFormat.
      message.correlationData = draft.payloadType === 'base64' ? btoa(String.fromCharCode(...new TextEncoder().encode(draft.correlationData))) : textToHex(draft.correlationData);
      message.binaryFormat ??= 'hex';
    }
    if (draft.expirySeconds.trim() !== '') {
      const seconds = Number(draft.expirySeconds);
      if (!Number.isInteger(seconds) || seconds < 0) {
        setError('Message expiry must be a whole number of seconds.');
        return;
      }
      message.expirySeconds = seconds;
    }
    const properties = draft.userProperties.filter((property) => property.key !== '');
    if (properties.length > 0) message.userProperties = properties;
    setBusy(true);
    try {
      const published = await call<{ messageIds?: number[] }>('mq', 'publishMessagesToMq', { topic: draft.topic, clientName: CONSOLE_CLIENT_NAME, messages: [message] });
      const id = published.messageIds?.[0];
      setSent(rememberSent({ topic: draft.topic, payload: draft.payload, payloadType: draft.payloadType, time: new Date().toISOString() }));
      setResult(id !== undefined ? `Published message ${id} to ${draft.topic}.` : `Published to ${draft.topic}.`);
      if (id !== undefined) props.onPublished?.(id);
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  const setProperty = (index: number, changes: Partial<{ key: string; value: string }>): void => {
    const userProperties = draft.userProperties.map((property, i) => (i === index ? { ...property, ...changes } : property));
    update({ userProperties });
  };

  return html`
    <form class="publish" aria-label="Publish a message" onSubmit=${(event: Event) => { void submit(event); }}
      onKeyDown=${(event: KeyboardEvent) => {
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          (event.currentTarget as HTMLFormElement).requestSubmit();
        }
      }}>
      <label class="wide">Topic <input name="topic" required value=${draft.topic} onInput=${field('topic')} /></label>
      <label class="wide">Payload <textarea name="payload" rows="8" value=${draft.payload} onInput=${field('payload')}
        aria-invalid=${problem !== null} aria-describedby="payload-check"></textarea></label>
      <p id="payload-check" class=${problem ? 'error payload-check' : 'muted payload-check'} aria-live="polite">${problem ?? (draft.payloadType === 'json' ? 'Valid JSON.' : draft.payloadType === 'hex' || draft.payloadType === 'base64' ? `${draft.payloadType === 'hex' ? 'Hex' : 'Base64'} bytes.` : '')}</p>
      <div class="row">
        <label>Payload type <select value=${draft.payloadType} onChange=${(event: Event) => update({ payloadType: (event.target as HTMLSelectElement).value as PublishDraft['payloadType'] })}>
          <option value="utf8">Text (UTF-8, sent as typed)</option>
          <option value="json">JSON (checked)</option>
          <option value="hex">Bytes as hex</option>
          <option value="base64">Bytes as base64</option>
        </select></label>
        <label>QoS <select value=${String(draft.qos)} onChange=${(event: Event) => update({ qos: Number((event.target as HTMLSelectElement).value) })}>
          <option value="0">0</option><option value="1">1</option><option value="2">2</option>
        </select></label>
        <label class="check"><input type="checkbox" checked=${draft.retain} onChange=${(event: Event) => update({ retain: (event.target as HTMLInputElement).checked })} /> Retain</label>
      </div>
      <fieldset>
        <legend>MQTT 5 properties</legend>
        <div class="publish-grid">
          <label>Content type <input value=${draft.contentType} onInput=${field('contentType')} placeholder="application/json" /></label>
          <label>Response topic <input value=${draft.responseTopic} onInput=${field('responseTopic')} /></label>
          <label>Correlation data <input value=${draft.correlationData} onInput=${field('correlationData')} placeholder="text, sent as its UTF-8 bytes" /></label>
          <label>Message expiry (seconds) <input inputmode="numeric" value=${draft.expirySeconds} onInput=${field('expirySeconds')} /></label>
        </div>
        <div class="user-properties-edit" aria-label="User properties">
          <div class="muted">User properties</div>
          ${draft.userProperties.map((property, index) => html`
            <div class="row">
              <label>Key <input value=${property.key} aria-label=${`User property ${index + 1} key`} onInput=${(event: Event) => setProperty(index, { key: (event.target as HTMLInputElement).value })} /></label>
              <label>Value <input value=${property.value} aria-label=${`User property ${index + 1} value`} onInput=${(event: Event) => setProperty(index, { value: (event.target as HTMLInputElement).value })} /></label>
              <button type="button" aria-label=${`Remove user property ${index + 1}`} onClick=${() => update({ userProperties: draft.userProperties.filter((_, i) => i !== index) })}>Remove</button>
            </div>`)}
          <button type="button" onClick=${() => update({ userProperties: [...draft.userProperties, { key: '', value: '' }] })}>Add user property</button>
        </div>
      </fieldset>
      <div class="row">
        <button type="submit" class="primary" disabled=${busy || !draft.topic} title="Ctrl+Enter">Publish</button>
        <span class="muted">Ctrl+Enter · published as <span class="mono">${CONSOLE_CLIENT_NAME}</span></span>
        ${result && html`<span class="ok" role="status">${result}</span>`}
      </div>
      ${sent.length > 0 && html`
        <label class="wide">Sent before <select aria-label="Sent before" value="" onChange=${(event: Event) => {
          const chosen = sent[Number((event.target as HTMLSelectElement).value)];
          if (chosen) update({ topic: chosen.topic, payload: chosen.payload, payloadType: chosen.payloadType });
        }}>
          <option value="">${sent.length} sent payload${sent.length === 1 ? '' : 's'}: pick one to fill the form</option>
          ${sent.map((entry, index) => html`<option value=${index}>${entry.topic} · ${entry.payload.length > 60 ? `${entry.payload.slice(0, 60)}…` : entry.payload}</option>`)}
        </select></label>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>`;
}

function copyDraft(draft: PublishDraft | null): PublishDraft | null {
  return draft ? { ...draft, userProperties: draft.userProperties.map((property) => ({ ...property })) } : null;
}
