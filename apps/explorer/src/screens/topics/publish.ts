/**
 * Publish: one message through publishMessagesToMq (the path MQTT publishes take), with QoS,
 * retain and the MQTT 5 properties; the topic comes from the tree, a republished message fills
 * everything.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { call, errorText } from '../../api.js';
import { emptyDraft, republishDraft, type PublishDraft } from './data.js';
import { textToHex } from './format.js';

export function PublishTab(props: { topic: string; onPublished?: (id: number) => void }) {
  const [draft, setDraft] = useState<PublishDraft>(() => copyDraft(republishDraft.peek()) ?? emptyDraft(props.topic));
  const [error, setError] = useState('');
  const [result, setResult] = useState('');
  const [busy, setBusy] = useState(false);

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
    const message: Record<string, unknown> = {
      payload: draft.payload,
      mqttPayloadType: draft.payloadType,
      qos: draft.qos,
      retain: draft.retain,
    };
    if (draft.contentType) message.contentType = draft.contentType;
    if (draft.responseTopic) message.responseTopic = draft.responseTopic;
    if (draft.correlationData) {
      message.correlationData = textToHex(draft.correlationData);
      message.binaryFormat = 'hex';
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
      const published = await call<{ messageIds?: number[] }>('mq', 'publishMessagesToMq', { topic: draft.topic, messages: [message] });
      const id = published.messageIds?.[0];
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
    <form class="publish" aria-label="Publish a message" onSubmit=${(event: Event) => { void submit(event); }}>
      <label class="wide">Topic <input name="topic" required value=${draft.topic} onInput=${field('topic')} /></label>
      <label class="wide">Payload <textarea name="payload" rows="8" value=${draft.payload} onInput=${field('payload')}></textarea></label>
      <div class="row">
        <label>Payload type <select value=${draft.payloadType} onChange=${(event: Event) => update({ payloadType: (event.target as HTMLSelectElement).value as PublishDraft['payloadType'] })}>
          <option value="utf8">Text (UTF-8, sent as typed)</option>
          <option value="json">JSON (checked)</option>
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
        <button type="submit" class="primary" disabled=${busy || !draft.topic}>Publish</button>
        ${result && html`<span class="ok" role="status">${result}</span>`}
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>`;
}

function copyDraft(draft: PublishDraft | null): PublishDraft | null {
  return draft ? { ...draft, userProperties: draft.userProperties.map((property) => ({ ...property })) } : null;
}
