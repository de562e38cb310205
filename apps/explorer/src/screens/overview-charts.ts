/**
 * The Overview's charts of the last hour: messages in and out per second, clients connected and
 * kept. The server keeps the samples (plugins/explorer/overview-history.ts, one each 10 s), so they
 * show at once; the screen asks again every 10 s while open.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { login, loginSignal } from '../api.js';
import { loadUPlot, type UPlotInstance } from '../uplot.js';
import type { OverviewHistory, OverviewSample } from '../../../../lib/explorer/api-types.js';

type Sample = OverviewSample;

async function readHistory(signal: AbortSignal): Promise<OverviewHistory> {
  const response = await fetch('./overview-history', { headers: { authorization: `Bearer ${login.value?.token ?? ''}` }, signal: loginSignal(signal) });
  if (!response.ok) throw new Error(`overview history: HTTP ${response.status}`);
  return response.json() as Promise<OverviewHistory>;
}

interface ChartSpec {
  title: string;
  series: Array<{ label: string; color: string; value: (sample: Sample) => number }>;
}

const CHARTS: ChartSpec[] = [
  { title: 'Messages per second, last hour', series: [
    { label: 'in', color: '#2563eb', value: (s) => s.messagesInPerSecond },
    { label: 'out', color: '#059669', value: (s) => s.messagesOutPerSecond },
  ] },
  { title: 'Clients, last hour', series: [
    { label: 'connected', color: '#d97706', value: (s) => s.clientsConnected },
    { label: 'disconnected (kept)', color: '#7c3aed', value: (s) => s.clientsDisconnected },
  ] },
];

export function OverviewCharts() {
  const [samples, setSamples] = useState<Sample[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const controller = new AbortController();
    const load = (): void => {
      readHistory(controller.signal).then((history) => { setSamples(history.samples); setError(''); }, (caught: unknown) => {
        if (!controller.signal.aborted) setError((caught as Error).message);
      });
    };
    load();
    const timer = setInterval(load, 10_000);
    return () => {
      controller.abort();
      clearInterval(timer);
    };
  }, []);
  return html`
    <div class="ops-charts">
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${CHARTS.map((spec) => html`<${HistoryChart} key=${spec.title} spec=${spec} samples=${samples} />`)}
    </div>`;
}

function HistoryChart({ spec, samples }: { spec: ChartSpec; samples: Sample[] | null }) {
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<UPlotInstance | null>(null);
  const [failed, setFailed] = useState('');
  const data = (list: Sample[]): number[][] => [list.map((s) => Date.parse(s.time) / 1000), ...spec.series.map((series) => list.map(series.value))];

  useEffect(() => {
    if (!samples) return;
    if (plot.current) {
      plot.current.setData(data(samples));
      return;
    }
    let live = true;
    void loadUPlot().then((UPlot) => {
      const element = target.current;
      if (!live || !element || plot.current) return;
      plot.current = new UPlot({
        width: Math.max(280, element.clientWidth),
        height: 180,
        scales: { x: { time: true } },
        series: [{}, ...spec.series.map((series) => ({ label: series.label, stroke: series.color, width: 1.5 }))],
        axes: [{}, {}],
      }, data(samples), element);
    }).catch((error: unknown) => {
      // The chart module could not be fetched (the server restarting): said, not thrown at the page.
      if (live) setFailed(`The chart could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
    });
    return () => { live = false; };
  }, [samples]);

  useEffect(() => {
    const resize = new ResizeObserver(() => {
      const element = target.current;
      if (element && plot.current) plot.current.setSize({ width: Math.max(280, element.clientWidth), height: 180 });
    });
    if (target.current) resize.observe(target.current);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  const latest = samples && samples.length > 0 ? samples[samples.length - 1] : null;
  return html`
    <section class="card ops-chart" aria-label=${spec.title}>
      <h2>${spec.title}</h2>
      <p class="muted ops-chart-now">${samples === null ? 'Loading…' : `${samples.length.toLocaleString('en-US')} ${samples.length === 1 ? 'sample' : 'samples'}`}${latest ? html` · now: ${spec.series.map((series) => `${series.label} ${formatFigure(series.value(latest))}`).join(', ')}` : ''}</p>
      ${failed && html`<p class="muted">${failed}</p>`}
      <div class="ops-chart-plot" ref=${target}></div>
    </section>`;
}

function formatFigure(value: number): string {
  return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(1);
}
