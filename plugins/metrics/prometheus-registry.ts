/**
 * The kernel's metrics sources (kernel/metrics.ts) as a prom-client registry, with Node's own
 * figures (`collectDefaultMetrics`: event-loop lag, heap, GC, CPU, open files). Counters and
 * gauges are prom-client metrics whose `collect()` reads the source at scrape time; a histogram
 * is handed to prom-client as the values it already holds (prom-client cannot be told counts,
 * only observations, and observing through it would cost per request).
 */
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';
import type { Histogram, MetricSample, MetricsRegistry, MetricSource } from '../../kernel/metrics';

/**
 * The process's own figures, one registry per process, made on the first scrape: they describe
 * the process, not an engine, and each `collectDefaultMetrics` starts an event-loop monitor and a
 * GC observer that are never stopped (tests start many engines in one process).
 */
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class PrometheusRegistry {
  readonly registry = new Registry();
  private readonly served = new Set<string>();

  constructor(private readonly sources: MetricsRegistry) {}

  /** The exposition text (Prometheus text format 0.0.4). Sources added since the last scrape join it. */
  async text(): Promise<string> {
    for (const source of this.sources.sources()) if (!this.served.has(source.name)) this.serveSource(source);
    for (const histogram of this.sources.histograms()) if (!this.served.has(histogram.name)) this.serveHistogram(histogram);
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${own}\n${process}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private serveSource(source: MetricSource): void {
    this.served.add(source.name);
    const labelNames = [...(source.labelNames ?? [])];
    const configuration = { name: source.name, help: source.help, labelNames, registers: [this.registry] };
    if (source.kind === 'counter') {
      new Counter({
        ...configuration,
        async collect() {
          const read = await source.read();
          this.reset();
          for (const sample of samplesOf(read)) this.inc(sample.labels ?? {}, sample.value);
        },
      });
    } else {
      new Gauge({
        ...configuration,
        async collect() {
          const read = await source.read();
          this.reset();
          for (const sample of samplesOf(read)) this.set(sample.labels ?? {}, sample.value);
        },
      });
    }
  }

  private serveHistogram(histogram: Histogram): void {
    this.served.add(histogram.name);
    const { name, help, buckets } = histogram;
    const metric = {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({
        name, help, type: 'histogram', aggregator: 'sum',
        values: histogram.snapshot().flatMap((series) => {
          const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
          let cumulative = 0;
          buckets.forEach((bound, i) => {
            cumulative += series.counts[i];
            values.push({ metricName: `${name}_bucket`, labels: { ...series.labels, le: bound }, value: cumulative });
          });
          values.push({ metricName: `${name}_bucket`, labels: { ...series.labels, le: '+Inf' }, value: series.count });
          values.push({ metricName: `${name}_sum`, labels: series.labels, value: series.sum });
          values.push({ metricName: `${name}_count`, labels: series.labels, value: series.count });
          return values;
        }),
      }),
      reset: () => undefined,
    };
    this.registry.registerMetric(metric as unknown as Metric);
  }
}

function samplesOf(read: number | readonly MetricSample[]): readonly MetricSample[] {
  return typeof read === 'number' ? [{ value: read }] : read;
}
