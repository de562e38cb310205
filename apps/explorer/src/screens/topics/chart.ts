/**
 * Chart: numbers of a topic's payloads (the payload itself, or a JSON path such as `temp` or
 * `a.b[0]`) over its stored history since a start time, plus live points as they arrive. uPlot is
 * loaded with a dynamic import when this tab opens.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { ApiError, errorText } from '../../api.js';
import { setQuery } from '../../router.js';
import { subscribedFilters, subscribeLive } from '../../live-mqtt.js';
import { hasChildren, readMessages } from './data.js';
import { isoMillis, numberAt, parseJsonPath, type TopicMessage } from './format.js';
import { fromLive } from './live.js';

const RANGES: ReadonlyArray<{ id: string; label: string; seconds: number }> = [
  { id: '5m', label: 'Last 5 minutes', seconds: 300 },
  { id: '1h', label: 'Last hour', seconds: 3600 },
  { id: '24h', label: 'Last 24 hours', seconds: 86_400 },
  { id: '7d', label: 'Last 7 days', seconds: 604_800 },
];
const MAX_STORED = 10_000;
const MAX_POINTS = 20_000;
/** The server's code for a path that is no topic (nothing was ever published to it itself). */
const TOPIC_NOT_FOUND = 14244;

/** Why a path that is no topic cannot be charted: a branch (topics below it) or nothing at all. */
async function notTopicText(path: string, signal: AbortSignal): Promise<string> {
  return await hasChildren(path, signal)
    ? `Only a topic can be charted; ${path} is a branch: pick one of its topics.`
    : `Only a topic can be charted; nothing was ever published to ${path}.`;
}

interface UPlotInstance {
  setData(data: number[][]): void;
  setSize(size: { width: number; height: number }): void;
  destroy(): void;
}
type UPlotConstructor = new (options: Record<string, unknown>, data: number[][], target: HTMLElement) => UPlotInstance;

let uplotLoading: Promise<UPlotConstructor> | null = null;

function loadUPlot(): Promise<UPlotConstructor> {
  if (!uplotLoading) {
    if (!document.querySelector('link[data-uplot]')) {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = './vendor/uplot.css';
      link.dataset.uplot = '';
      document.head.append(link);
    }
    uplotLoading = import('uplot').then((module) => (module as unknown as { default: UPlotConstructor }).default);
    uplotLoading.catch(() => { uplotLoading = null; });
  }
  return uplotLoading;
}

export function ChartTab(props: { topic: string; query: Record<string, string> }) {
  const jsonPath = props.query.field ?? '';
  const range = RANGES.find((candidate) => candidate.id === props.query.range) ?? RANGES[1];
  const [pathText, setPathText] = useState(jsonPath);
  const [error, setError] = useState('');
  const [notTopic, setNotTopic] = useState('');
  const [loading, setLoading] = useState(true);
  const [counts, setCounts] = useState({ points: 0, stored: 0, live: 0, skipped: 0 });
  const [truncated, setTruncated] = useState(false);
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<UPlotInstance | null>(null);

  useEffect(() => setPathText(jsonPath), [jsonPath]);

  useEffect(() => {
    const controller = new AbortController();
    const xs: number[] = [];
    const ys: number[] = [];
    let steps: Array<string | number>;
    let skipped = 0;
    let live = 0;
    let stored = 0;
    let dirty = false;
    let stopLive: () => void = () => undefined;
    setError('');
    setNotTopic('');
    setLoading(true);
    setCounts({ points: 0, stored: 0, live: 0, skipped: 0 });
    try {
      steps = parseJsonPath(jsonPath);
    } catch (caught) {
      setError(errorText(caught));
      setLoading(false);
      return;
    }
    const add = (message: TopicMessage): boolean => {
      const value = numberAt(message, steps);
      if (value === null) {
        skipped++;
        return false;
      }
      const x = isoMillis(message.time) / 1000;
      // Keep time order (live points may race the stored read).
      let at = xs.length;
      while (at > 0 && xs[at - 1] > x) at--;
      xs.splice(at, 0, x);
      ys.splice(at, 0, value);
      if (xs.length > MAX_POINTS) {
        xs.shift();
        ys.shift();
      }
      return true;
    };
    const publish = (): void => {
      setCounts({ points: xs.length, stored, live, skipped });
      plot.current?.setData([xs, ys]);
    };
    const pending: TopicMessage[] = [];
    let storedDone = false;
    // Live points from now on; those arriving before the stored read ends wait for it.
    try {
      stopLive = subscribeLive(props.topic, (message) => {
        if (message.retain) return; // a retained message is already in the history
        const converted = fromLive(message);
        if (!storedDone) {
          pending.push(converted);
          return;
        }
        if (add(converted)) live++;
        dirty = true;
      });
    } catch (caught) {
      setError(errorText(caught));
    }
    const timer = setInterval(() => {
      if (!dirty) return;
      dirty = false;
      publish();
    }, 500);
    (async () => {
      const UPlot = await loadUPlot();
      const since = new Date(Date.now() - range.seconds * 1000).toISOString();
      const messages = await readMessages(props.topic, { startFrom: since, maxMessages: MAX_STORED }, controller.signal);
      if (controller.signal.aborted) return;
      setTruncated(messages.length === MAX_STORED);
      const lastStoredMillis = messages.length > 0 ? isoMillis(messages[messages.length - 1].time) : 0;
      for (const message of messages) if (add(message)) stored++;
      storedDone = true;
      for (const message of pending) if (isoMillis(message.time) > lastStoredMillis && add(message)) live++;
      pending.length = 0;
      const element = target.current;
      if (!element) return;
      plot.current?.destroy();
      const width = Math.max(320, element.clientWidth);
      plot.current = new UPlot({
        width,
        height: 320,
        scales: { x: { time: true } },
        series: [{}, { label: jsonPath || 'payload', stroke: '#2563eb', width: 1.5, points: { show: xs.length < 200 } }],
        axes: [{}, {}],
      }, [xs, ys], element);
      publish();
    })().catch(async (caught: unknown) => {
      if (controller.signal.aborted) return;
      if (caught instanceof ApiError && caught.code === TOPIC_NOT_FOUND) setNotTopic(await notTopicText(props.topic, controller.signal));
      else setError(errorText(caught));
    }).catch((caught: unknown) => {
      if (!controller.signal.aborted) setError(errorText(caught));
    }).finally(() => {
      if (!controller.signal.aborted) setLoading(false);
    });
    const resize = new ResizeObserver(() => {
      const element = target.current;
      if (element && plot.current) plot.current.setSize({ width: Math.max(320, element.clientWidth), height: 320 });
    });
    if (target.current) resize.observe(target.current);
    return () => {
      controller.abort();
      clearInterval(timer);
      stopLive();
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [props.topic, jsonPath, range.id]);

  return html`
    <section class="chart" aria-label="Chart">
      <form class="row" onSubmit=${(event: Event) => { event.preventDefault(); setQuery({ field: pathText.trim() || undefined }); }}>
        <label>JSON path <input name="field" placeholder="(the payload) e.g. temp or a.b[0]" value=${pathText}
          onInput=${(event: Event) => setPathText((event.target as HTMLInputElement).value)} /></label>
        <button type="submit">Plot</button>
        <label>Range <select value=${range.id} onChange=${(event: Event) => setQuery({ range: (event.target as HTMLSelectElement).value })}>
          ${RANGES.map((candidate) => html`<option value=${candidate.id}>${candidate.label}</option>`)}
        </select></label>
        <span class="grow"></span>
        <span class="chart-live muted">${subscribedFilters.value.has(props.topic) ? 'Live updates on' : 'Connecting for live updates…'}</span>
        <span class="chart-count" role="status"><span class="chart-points">${counts.points.toLocaleString('en-US')} points</span>
          <span class="muted"> (${counts.stored} stored, ${counts.live} live${counts.skipped ? `, ${counts.skipped} not numeric` : ''})</span></span>
      </form>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${notTopic && html`<p class="chart-not-topic">${notTopic}</p>`}
      ${truncated && html`<p class="muted">The range holds more than ${MAX_STORED.toLocaleString('en-US')} stored messages: the first ${MAX_STORED.toLocaleString('en-US')} are plotted; pick a shorter range for the latest.</p>`}
      ${loading && html`<p class="muted">Loading…</p>`}
      <div class="chart-plot" ref=${target}></div>
      ${!loading && counts.points === 0 && !error && !notTopic && html`<p class="muted">No numeric values${jsonPath ? ` at ${jsonPath}` : ''} in this range.</p>`}
    </section>`;
}
