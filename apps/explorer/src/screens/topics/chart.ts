/**
 * Chart: numbers of a topic's payloads (the payload itself, or JSON paths such as `temp` or
 * `a.b[0]`, several series at once: `field=temp,humidity` in the URL) over its stored history
 * since a start time (the newest 10,000 messages at most), plus live points as they arrive. The
 * numeric fields found in the payloads are offered, and the topic's numeric transform fields
 * (`@name`: the server's integration-table column, read from the stored messages); drag across the plot to zoom (double-click or
 * "Reset zoom" to go back); the hover shows the time to the millisecond. uPlot is loaded with a
 * dynamic import when this tab opens.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { ApiError, errorText } from '../../api.js';
import { setQuery } from '../../router.js';
import { subscribedFilters, subscribeLive } from '../../live-mqtt.js';
import { hasChildren, readMessages } from './data.js';
import { formatTimeMillis, isoMillis, seriesNumber, seriesSource, TRANSFORM_PREFIX, type SeriesSource, type TopicMessage } from './format.js';
import { numericFieldsOf } from './json-paths.js';
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

const COLORS = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];
/** Messages whose JSON is searched for numeric fields to offer. */
const FIELD_SAMPLE = 50;

/** The transform fields holding a number in some of the messages, as series names (`@name`). */
function numericTransformFields(messages: TopicMessage[]): string[] {
  const names = new Set<string>();
  for (const message of messages) {
    for (const [name, value] of Object.entries(message.transformFields ?? {})) if (typeof value === 'number') names.add(`${TRANSFORM_PREFIX}${name}`);
  }
  return [...names];
}

/** The series of the `field` parameter: JSON paths separated by commas ('' alone: the payload itself). */
export function seriesPaths(field: string | undefined): string[] {
  const paths = (field ?? '').split(',').map((path) => path.trim()).filter((path) => path !== '');
  return paths.length > 0 ? paths : [''];
}

function fieldParam(paths: string[]): string | undefined {
  const kept = paths.filter((path) => path !== '');
  return kept.length > 0 ? kept.join(',') : undefined;
}

import { loadUPlot, type UPlotInstance } from '../../uplot.js';

export function ChartTab(props: { topic: string; query: Record<string, string> }) {
  const paths = seriesPaths(props.query.field);
  const pathsKey = paths.join(',');
  const range = RANGES.find((candidate) => candidate.id === props.query.range) ?? RANGES[1];
  const [pathText, setPathText] = useState(fieldParam(paths) ?? '');
  const [error, setError] = useState('');
  const [notTopic, setNotTopic] = useState('');
  const [loading, setLoading] = useState(true);
  const [counts, setCounts] = useState({ points: 0, stored: 0, live: 0, skipped: 0 });
  const [truncated, setTruncated] = useState(false);
  const [fields, setFields] = useState<string[]>([]);
  const [zoom, setZoom] = useState<{ min: number; max: number } | null>(null);
  const [latest, setLatest] = useState<{ time: number; values: Array<number | null> } | null>(null);
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<UPlotInstance | null>(null);
  const fullRange = useRef<{ min: number; max: number } | null>(null);

  useEffect(() => setPathText(fieldParam(paths) ?? ''), [pathsKey]);

  useEffect(() => {
    const controller = new AbortController();
    const xs: number[] = [];
    const ys: Array<Array<number | null>> = paths.map(() => []);
    let sources: SeriesSource[];
    // Transform fields are computed by the server: with one of them charted, live points are read back from the log.
    let readsLog = false;
    let logReadWanted = false;
    let logReading = false;
    let lastStoredId = 0;
    const since = new Date(Date.now() - range.seconds * 1000).toISOString();
    let skipped = 0;
    let live = 0;
    let stored = 0;
    let dirty = false;
    let stopLive: () => void = () => undefined;
    setError('');
    setNotTopic('');
    setLoading(true);
    setZoom(null);
    setLatest(null);
    setCounts({ points: 0, stored: 0, live: 0, skipped: 0 });
    try {
      sources = paths.map((path) => seriesSource(path));
      readsLog = sources.some((source) => 'transformField' in source);
    } catch (caught) {
      setError(errorText(caught));
      setLoading(false);
      return;
    }
    // A message is a point when one of the series finds a number in it.
    const add = (message: TopicMessage): boolean => {
      const values = sources.map((source) => seriesNumber(message, source));
      if (values.every((value) => value === null)) {
        skipped++;
        return false;
      }
      const x = isoMillis(message.time) / 1000;
      // Keep time order (live points may race the stored read).
      let at = xs.length;
      while (at > 0 && xs[at - 1] > x) at--;
      xs.splice(at, 0, x);
      values.forEach((value, index) => ys[index].splice(at, 0, value));
      if (xs.length > MAX_POINTS) {
        xs.shift();
        for (const series of ys) series.shift();
      }
      return true;
    };
    const publish = (): void => {
      setCounts({ points: xs.length, stored, live, skipped });
      // Each series' newest value (a message may hold only some of the fields).
      setLatest(xs.length === 0 ? null : { time: xs[xs.length - 1], values: ys.map((series) => {
        for (let at = series.length - 1; at >= 0; at--) if (series[at] !== null) return series[at];
        return null;
      }) });
      if (!plot.current) return;
      plot.current.setData([xs, ...ys]);
      if (xs.length > 0) fullRange.current = { min: xs[0], max: xs[xs.length - 1] };
    };
    const pending: TopicMessage[] = [];
    let storedDone = false;
    // Live points from now on; those arriving before the stored read ends wait for it.
    try {
      stopLive = subscribeLive(props.topic, (message) => {
        if (message.retain) return; // a retained message is already in the history
        if (readsLog) {
          logReadWanted = true;
          return;
        }
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
    // The messages stored after the last one read, with their transform fields: the live points of a transform series.
    const readLogTail = async (): Promise<void> => {
      if (logReading || !storedDone || !logReadWanted) return;
      logReading = true;
      logReadWanted = false;
      try {
        const messages = await readMessages(props.topic, { startFrom: lastStoredId > 0 ? lastStoredId + 1 : since, maxMessages: MAX_STORED }, controller.signal);
        for (const message of messages) {
          if (add(message)) live++;
          lastStoredId = Math.max(lastStoredId, message.id ?? 0);
        }
        if (messages.length > 0) dirty = true;
      } catch (caught) {
        if (!controller.signal.aborted) setError(errorText(caught));
      } finally {
        logReading = false;
      }
    };
    const timer = setInterval(() => {
      void readLogTail();
      if (!dirty) return;
      dirty = false;
      publish();
    }, 500);
    (async () => {
      const UPlot = await loadUPlot();
      let messages = await readMessages(props.topic, { startFrom: since, maxMessages: MAX_STORED }, controller.signal);
      const more = messages.length === MAX_STORED;
      // More than MAX_STORED in the range: the newest MAX_STORED, which then all lie in it.
      if (more) messages = await readMessages(props.topic, { startFrom: 'tail', maxMessages: MAX_STORED }, controller.signal);
      if (controller.signal.aborted) return;
      setTruncated(more);
      const sample = messages.slice(-FIELD_SAMPLE);
      setFields([...numericTransformFields(sample), ...numericFieldsOf(sample.map((message) => message.json))]);
      lastStoredId = messages.length > 0 ? messages[messages.length - 1].id ?? 0 : 0;
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
        // Drag across the plot zooms the time axis; a double click goes back.
        cursor: { drag: { x: true, y: false, setScale: true } },
        series: [
          { label: 'Time', value: (_plot: unknown, seconds: number | null) => (seconds === null ? '—' : formatTimeMillis(new Date(seconds * 1000).toISOString())) },
          ...paths.map((path, index) => ({ label: path || 'payload', stroke: COLORS[index % COLORS.length], width: 1.5, spanGaps: true, points: { show: xs.length < 200 } })),
        ],
        axes: [{}, {}],
        hooks: {
          setScale: [(chart: UPlotInstance, key: string) => {
            if (key !== 'x') return;
            const scale = (chart as unknown as { scales: Record<string, { min: number; max: number }> }).scales.x;
            const full = fullRange.current;
            setZoom(full && (scale.min > full.min + 1e-6 || scale.max < full.max - 1e-6) ? { min: scale.min, max: scale.max } : null);
          }],
        },
      }, [xs, ...ys], element);
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
  }, [props.topic, pathsKey, range.id]);

  const toggleField = (path: string): void => {
    const current = paths.filter((candidate) => candidate !== '');
    const next = current.includes(path) ? current.filter((candidate) => candidate !== path) : [...current, path];
    setQuery({ field: fieldParam(next) });
  };
  const resetZoom = (): void => {
    const full = fullRange.current;
    if (plot.current && full) plot.current.setScale('x', full);
  };
  const count = (n: number): string => n.toLocaleString('en-US');

  return html`
    <section class="chart" aria-label="Chart">
      <form class="row" onSubmit=${(event: Event) => { event.preventDefault(); setQuery({ field: fieldParam(seriesPaths(pathText)) }); }}>
        <label>JSON paths <input name="field" placeholder="(the payload) e.g. temp, a.b[0], @transformField" value=${pathText}
          onInput=${(event: Event) => setPathText((event.target as HTMLInputElement).value)} /></label>
        <button type="submit">Plot</button>
        <label>Range <select value=${range.id} onChange=${(event: Event) => setQuery({ range: (event.target as HTMLSelectElement).value })}>
          ${RANGES.map((candidate) => html`<option value=${candidate.id}>${candidate.label}</option>`)}
        </select></label>
        <span class="grow"></span>
        <span class="chart-live muted">${subscribedFilters.value.has(props.topic) ? 'Live updates on' : 'Connecting for live updates…'}</span>
        <span class="chart-count" role="status"><span class="chart-points">${count(counts.points)} ${counts.points === 1 ? 'point' : 'points'}</span>
          <span class="muted"> (${count(counts.stored)} stored, ${count(counts.live)} live${counts.skipped ? `, ${count(counts.skipped)} not numeric` : ''})</span></span>
      </form>
      ${fields.length > 0 && html`
        <div class="row chart-fields" role="group" aria-label="Numeric fields">
          <span class="muted">Numeric fields:</span>
          ${fields.map((path) => html`<button type="button" class="chip" aria-pressed=${paths.includes(path)} title=${path.startsWith(TRANSFORM_PREFIX) ? 'Transform field' : 'JSON path'} onClick=${() => toggleField(path)}>${path}</button>`)}
        </div>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${notTopic && html`<p class="chart-not-topic">${notTopic}</p>`}
      ${truncated && html`<p class="muted chart-truncated">The range holds more than ${count(MAX_STORED)} stored messages: the newest ${count(MAX_STORED)} are plotted.</p>`}
      ${loading && html`<p class="muted">Loading…</p>`}
      ${zoom && html`<p class="row chart-zoom"><span class="muted">Zoomed: ${formatTimeMillis(new Date(zoom.min * 1000).toISOString())} – ${formatTimeMillis(new Date(zoom.max * 1000).toISOString())}</span>
        <button type="button" onClick=${resetZoom}>Reset zoom</button></p>`}
      ${latest && html`<p class="chart-latest"><span class="muted">Latest (${formatTimeMillis(new Date(latest.time * 1000).toISOString())}):</span>
        ${paths.map((path, index) => html` <span class="mono" style=${`color:${COLORS[index % COLORS.length]}`}>${path || 'payload'} = ${latest.values[index] ?? '—'}</span>`)}</p>`}
      <div class="chart-plot" ref=${target} title="Drag across to zoom, double-click to reset"></div>
      ${!loading && counts.points === 0 && !error && !notTopic && html`<p class="muted">No numeric values${paths[0] ? ` at ${paths.join(', ')}` : ''} in this range.</p>`}
    </section>`;
}
