/**
 * The API console (API Explorer): a template per JSON action (admin, db, mq) and per REST route,
 * edited as JSON and sent as is; the answer pretty-printed with its HTTP status and time. The
 * session's token never appears on screen or in the history: the editor holds the literal
 * `"authToken": "<your session>"` (REST: no token at all), replaced by the real token only in the
 * request sent (REST: an `Authorization: Bearer` header). Deep link: `#/console?action=db.listTables`.
 * The editor is CodeMirror (console/json-editor.ts), imported when the screen first opens; the
 * text is checked as JSON as it is typed, and a request that is not JSON is not sent.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { login, loginSignal } from '../api.js';
import { setQuery } from '../router.js';
import type { ScreenProps } from '../app.js';
import {
  ACTION_TEMPLATES, REST_BASE, REST_TEMPLATES, TOKEN_PLACEHOLDER, restTemplatesFromOpenApi, templateKey, templateText,
  type RestTemplate, type Template,
} from './console/templates.js';
import { loadRealNames, withRealNames, type RealNames } from './console/real-names.js';
import { addHistory, readHistory, writeHistory, type HistoryEntry } from './console/history.js';
import type { JsonEditor } from './console/json-editor.js';
import { jsonProblem, problemText } from '../json-check.js';

type EditorModule = typeof import('./console/json-editor.js');

/** CodeMirror's module, imported once when the console first opens (never on the first load). */
let editorModule: Promise<EditorModule> | undefined;
const loadEditorModule = (): Promise<EditorModule> => (editorModule ??= import('./console/json-editor.js'));

const LABEL_ID = 'console-request-label';

const DEFAULT_KEY = 'db.listTables';

interface Response {
  label: string;
  status: number;
  ms: number;
  text: string;
  errorCode?: number;
}

/** Names from the server for the templates, found once per page load. */
let realNames: RealNames | undefined;

/** REST routes from the server's OpenAPI document, read once per page load. */
let openApiRoutes: RestTemplate[] | undefined;

export function ConsoleScreen(props: ScreenProps) {
  useEffect(() => { void loadOpenApi(); }, []);
  const [restRoutes, setRestRoutes] = useState<readonly RestTemplate[]>(openApiRoutes ?? REST_TEMPLATES);
  const [restNote, setRestNote] = useState(openApiRoutes ? 'From the server\'s OpenAPI document.' : '');
  const [filter, setFilter] = useState('');
  const [editor, setEditor] = useState<{ key: string; text: string } | null>(null);
  const [response, setResponse] = useState<Response | null>(null);
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const [history, setHistory] = useState<HistoryEntry[]>(readHistory);
  const [names, setNames] = useState<RealNames>(realNames ?? {});
  const filled = (chosen: Template): string => withRealNames(templateText(chosen), names);
  const [editorState, setEditorState] = useState<'loading' | 'ready' | 'failed'>('loading');
  const [editorFailure, setEditorFailure] = useState('');
  const host = useRef<HTMLDivElement>(null);
  const codeEditor = useRef<JsonEditor | null>(null);
  // The editor's callbacks read these, so they always see the current route and request.
  const currentKey = useRef('');
  const sendRef = useRef<() => void>(() => undefined);
  const editorTextRef = useRef('');
  editorTextRef.current = editor?.text ?? '';

  // The server's own names for the templates, once a page load; an untouched editor takes them.
  useEffect(() => {
    if (realNames) return;
    const abort = new AbortController();
    void loadRealNames(abort.signal).then((found) => {
      realNames = found;
      setNames(found);
      setEditor((current) => {
        const shown = current && templates.find((candidate) => templateKey(candidate) === current.key);
        return current && shown && current.text === templateText(shown) ? { key: current.key, text: withRealNames(current.text, found) } : current;
      });
    });
    return () => abort.abort();
  }, []);

  const templates = useMemo<Template[]>(() => [...ACTION_TEMPLATES, ...restRoutes], [restRoutes]);
  const key = props.route.query.action || DEFAULT_KEY;
  const template = templates.find((candidate) => templateKey(candidate) === key);
  currentKey.current = key;
  sendRef.current = () => { void send(); };

  // CodeMirror, once its module is here; the text stays in `editor` (the editor reports each change).
  useEffect(() => {
    let cancelled = false;
    loadEditorModule().then((module) => {
      if (cancelled || !host.current) return;
      codeEditor.current = module.createJsonEditor(host.current, {
        text: editorTextRef.current,
        labelledBy: LABEL_ID,
        onChange: (text) => setEditor({ key: currentKey.current, text }),
        onSubmit: () => sendRef.current(),
      });
      setEditorState('ready');
    }, (failure: unknown) => {
      if (cancelled) return;
      setEditorFailure(failure instanceof Error ? failure.message : String(failure));
      setEditorState('failed');
    });
    return () => {
      cancelled = true;
      codeEditor.current?.destroy();
      codeEditor.current = null;
    };
  }, []);

  // Texts set from outside (a template, the history, the server's names) go into CodeMirror.
  useEffect(() => codeEditor.current?.setText(editor?.text ?? ''), [editor?.text, editorState]);
  const problem = useMemo(() => (editor && editor.text.trim() !== '' ? jsonProblem(editor.text) : null), [editor?.text]);

  useEffect(() => {
    if (editor?.key === key) return;
    setEditor({ key, text: template ? filled(template) : textOfKey(key) });
    setError('');
  }, [key, template]);

  async function loadOpenApi() {
    if (openApiRoutes) return;
    const token = login.value?.token;
    try {
      const answer = await fetch(`${REST_BASE}/openapi`, { headers: { authorization: `Bearer ${token ?? ''}` }, signal: loginSignal() });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      openApiRoutes = restTemplatesFromOpenApi(await answer.json());
      setRestRoutes(openApiRoutes);
      setRestNote('From the server\'s OpenAPI document.');
    } catch (failure) {
      setRestNote(`The OpenAPI document could not be read (${failure instanceof Error ? failure.message : String(failure)}): the routes of docs/rest.md.`);
    }
  }

  async function send() {
    if (!editor || sending) return;
    let request: Record<string, unknown>;
    const notJson = jsonProblem(editor.text);
    if (notJson) {
      setError(`The request is not valid JSON: ${problemText(notJson)}`);
      return;
    }
    try {
      const parsed = JSON.parse(editor.text) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('it must be a JSON object');
      request = parsed as Record<string, unknown>;
    } catch (failure) {
      setError(`The request is not valid JSON: ${failure instanceof Error ? failure.message : String(failure)}`);
      return;
    }
    const token = login.value?.token;
    const rest = typeof request.method === 'string' && typeof request.path === 'string';
    let url = '/api';
    let init: RequestInit;
    let label: string;
    let sentKey = editor.key;
    if (rest) {
      const path = request.path as string;
      if (!path.startsWith('/') || path.startsWith('//')) {
        setError('The path must start with / (a path on this server, e.g. /engine/api/v1/table/main).');
        return;
      }
      url = path;
      const method = (request.method as string).toUpperCase();
      const body = request.body === undefined || request.body === null ? undefined : JSON.stringify(request.body);
      init = { method, headers: { authorization: `Bearer ${token ?? ''}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body };
      label = `${method} ${path}`;
      sentKey = label;
    } else {
      const envelope = { ...request };
      if (envelope.authToken === TOKEN_PLACEHOLDER) envelope.authToken = token;
      init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) };
      label = `${typeof request.api === 'string' ? `${request.api} ` : ''}${String(request.action)}`;
      if (typeof request.api === 'string' && typeof request.action === 'string') sentKey = `${request.api}.${request.action}`;
    }
    setSending(true);
    setError('');
    const started = performance.now();
    try {
      const answer = await fetch(url, init);
      const text = await answer.text();
      const ms = Math.round(performance.now() - started);
      let shown = text;
      let errorCode: number | undefined;
      try {
        const json = JSON.parse(text) as unknown;
        shown = JSON.stringify(json, null, 2);
        if (!rest && json && typeof json === 'object' && typeof (json as { errorCode?: unknown }).errorCode === 'number') errorCode = (json as { errorCode: number }).errorCode;
      } catch {
        // Not JSON: shown as it came.
      }
      if (token) shown = shown.split(token).join(TOKEN_PLACEHOLDER);
      setResponse({ label, status: answer.status, ms, text: shown, errorCode });
      setHistory(addHistory({ key: sentKey, label, text: editor.text, at: new Date().toISOString(), status: answer.status, ms, errorCode }, token));
    } catch (failure) {
      setError(`The request failed: ${failure instanceof Error ? failure.message : String(failure)}`);
    } finally {
      setSending(false);
    }
  }

  function choose(next: string) {
    setResponse(null);
    setQuery({ action: next });
  }

  function reload(entry: HistoryEntry) {
    setEditor({ key: entry.key, text: entry.text });
    setResponse(null);
    setError('');
    setQuery({ action: entry.key });
  }

  const needle = filter.trim().toLowerCase();
  const match = (candidate: Template) => !needle || `${templateKey(candidate)} ${candidate.summary}`.toLowerCase().includes(needle);
  const groups: Array<{ title: string; items: Template[]; rest?: boolean }> = [
    { title: 'admin', items: ACTION_TEMPLATES.filter((candidate) => candidate.api === 'admin') },
    { title: 'db', items: ACTION_TEMPLATES.filter((candidate) => candidate.api === 'db') },
    { title: 'mq', items: ACTION_TEMPLATES.filter((candidate) => candidate.api === 'mq') },
    { title: 'REST', items: [...restRoutes], rest: true },
  ];
  const title = template ? (template.kind === 'action' ? `${template.api} · ${template.action}` : `${template.method} ${template.path.slice(REST_BASE.length) || '/'}`) : key;

  return html`
    <div class="console-screen">
      <aside class="console-actions card" aria-label="Actions">
        <label class="field">Find an action or route
          <input type="search" value=${filter} onInput=${(event: Event) => setFilter((event.target as HTMLInputElement).value)} />
        </label>
        ${groups.map((group) => {
          const items = group.items.filter(match);
          return html`
            <details open=${!group.rest || needle !== '' || template?.kind === 'rest'}>
              <summary>${group.rest ? 'REST routes' : `${group.title} api`} <span class="muted small">(${items.length})</span></summary>
              ${group.rest && html`<p class="muted small">${restNote || 'Sent with the session as a Bearer token.'} <a href="/engine/api/v1/documentation" target="_blank" rel="noopener">OpenAPI UI</a></p>`}
              <ul class="action-links" aria-label=${group.rest ? 'REST routes' : `${group.title} actions`}>
                ${items.map((candidate) => {
                  const candidateKey = templateKey(candidate);
                  const name = candidate.kind === 'action' ? candidate.action : `${candidate.method} ${candidate.path.slice(REST_BASE.length)}`;
                  return html`<li><button type="button" title=${candidate.summary} class=${candidateKey === key ? 'active' : ''} aria-current=${candidateKey === key ? 'true' : undefined}
                    onClick=${() => choose(candidateKey)}>${name}</button></li>`;
                })}
              </ul>
            </details>`;
        })}
      </aside>

      <section class="console-main" aria-label="Request">
        <div class="card console-editor">
          <h2>${title}</h2>
          ${template && html`<p class="summary">${template.summary}</p>`}
          <form onSubmit=${(event: Event) => { event.preventDefault(); void send(); }}>
            <div class="field">
              <span id=${LABEL_ID}>${template?.kind === 'rest' || editor?.text.includes('"method"') ? 'Request (method, path, body; sent with your session as a Bearer token)' : 'Request envelope (POST /api)'}</span>
              <div class="json-editor" ref=${host} hidden=${editorState !== 'ready'}></div>
              ${editorState === 'loading' && html`<p class="muted">Loading the editor…</p>`}
              ${editorState === 'failed' && html`
                <p class="muted small">The editor could not be loaded (${editorFailure}): a plain text box instead.</p>
                <textarea aria-labelledby=${LABEL_ID} spellcheck=${false} rows=${Math.max(10, Math.min(28, (editor?.text.split('\n').length ?? 0) + 2))} value=${editor?.text ?? ''}
                  onInput=${(event: Event) => setEditor({ key, text: (event.target as HTMLTextAreaElement).value })}
                  onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); void send(); } }}></textarea>`}
              <p id="request-check" class=${`small ${problem ? 'error' : 'muted'}`} aria-live="polite">${problem ? `Not JSON at ${problemText(problem)}` : editor?.text.trim() ? 'Valid JSON.' : ''}</p>
            </div>
            <div class="row">
              <button type="submit" class="primary" disabled=${sending}>Send</button>
              ${template && html`<button type="button" onClick=${() => setEditor({ key, text: filled(template) })}>Reset to template</button>`}
              <span class="muted small">Ctrl+Enter sends. <code>${TOKEN_PLACEHOLDER}</code> is replaced by your session's token only in the request sent.</span>
            </div>
          </form>
          ${error && html`<p class="error" role="alert">${error}</p>`}
        </div>
        ${response && html`
          <section class="card console-response" aria-label="Response">
            <div class="row">
              <strong>Response</strong>
              <span class=${`http-status ${response.status < 400 && !response.errorCode ? 'ok' : 'bad'}`}>HTTP ${response.status}</span>
              ${response.errorCode !== undefined && html`<span class=${response.errorCode === 0 ? 'muted' : 'error'}>errorCode ${response.errorCode}</span>`}
              <span class="muted">${response.ms} ms</span>
              <span class="muted small grow">${response.label}</span>
            </div>
            <pre aria-label="Response body">${response.text}</pre>
          </section>`}
      </section>

      <aside class="console-history card" aria-label="History">
        <div class="row"><h3 class="grow">History</h3>
          ${history.length > 0 && html`<button type="button" onClick=${() => { writeHistory([]); setHistory([]); }}>Clear</button>`}
        </div>
        ${history.length === 0 && html`<p class="muted small">Sent requests appear here (kept in this browser, without tokens).</p>`}
        <ul class="history-list">
          ${history.map((entry) => html`
            <li><button type="button" onClick=${() => reload(entry)} title="Load into the editor">
              <span class="what">${entry.label}</span>
              <span class="when">HTTP ${entry.status}${entry.errorCode ? ` · error ${entry.errorCode}` : ''} · ${entry.ms} ms · ${new Date(entry.at).toLocaleTimeString()}</span>
            </button></li>`)}
        </ul>
      </aside>
    </div>`;
}

/** An editor text for a deep link without a template: a REST request or an action envelope. */
function textOfKey(key: string): string {
  const rest = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)$/.exec(key);
  if (rest) return JSON.stringify({ method: rest[1], path: rest[2], body: null }, null, 2);
  const action = /^(admin|db|mq)\.(\w+)$/.exec(key);
  if (action) return JSON.stringify({ api: action[1], action: action[2], params: {}, authToken: TOKEN_PLACEHOLDER }, null, 2);
  return '';
}
