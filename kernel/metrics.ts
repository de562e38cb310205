/**
 * The metrics sources every part of the engine adds its figures to (`engine.metrics`), and which
 * the metrics plugin serves to a monitoring system (docs/operations.md, "Metrics"). The kernel
 * keeps no exposition format and no dependency: a source is a name, a help text and a `read()`
 * called at scrape time over counters the code already keeps as plain numbers, so counting costs
 * nothing on hot paths; a histogram is observed once per commit or per request, never per message.
 * Plugins of third parties add theirs the same way (docs/plugins.md, "Metrics").
 */

export type MetricKind = 'counter' | 'gauge';
export type MetricLabels = Readonly<Record<string, string | number>>;

export interface MetricSample {
  labels?: MetricLabels;
  value: number;
}

export interface MetricSource {
  /** `engine_…` for the engine's own; a Prometheus name (`[a-zA-Z_:][a-zA-Z0-9_:]*`), counters ending in `_total`. */
  name: string;
  help: string;
  kind: MetricKind;
  /** The labels the samples carry (every sample carries all of them). */
  labelNames?: readonly string[];
  /** The figure now: one number, or one sample per label set. Called at scrape time only. */
  read(): number | readonly MetricSample[] | Promise<number | readonly MetricSample[]>;
}

export interface HistogramDefinition {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** Upper bounds in seconds, ascending (default LATENCY_BUCKETS). */
  buckets?: readonly number[];
}

/** One label set's observations: counts per bucket (not cumulative), their sum and count. */
export interface HistogramSeries {
  labels: MetricLabels;
  counts: readonly number[];
  sum: number;
  count: number;
}

/** Latency bounds in seconds: from a fast commit (~100 µs) to a stuck disk. */
export const LATENCY_BUCKETS: readonly number[] = Object.freeze([0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface MutableSeries {
  labels: MetricLabels;
  counts: number[];
  sum: number;
  count: number;
}

/** A latency histogram on plain arrays: `observe` is a bucket search and three additions. */
export class Histogram {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly buckets: readonly number[];
  private readonly series = new Map<string, MutableSeries>();
  private readonly unlabelled?: MutableSeries;

  constructor(definition: HistogramDefinition) {
    this.name = definition.name;
    this.help = definition.help;
    this.labelNames = definition.labelNames ?? [];
    this.buckets = definition.buckets ?? LATENCY_BUCKETS;
    if (this.labelNames.length === 0) {
      this.unlabelled = { labels: {}, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set('', this.unlabelled);
    }
  }

  /** One observation in seconds; `labelValues` in the order of `labelNames`. */
  observe(seconds: number, ...labelValues: string[]): void {
    const series = this.unlabelled ?? this.seriesOf(labelValues);
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && seconds > buckets[i]) i++;
    series.counts[i]++;
    series.sum += seconds;
    series.count++;
  }

  /** The observations so far, per label set (read at scrape time). */
  snapshot(): HistogramSeries[] {
    return [...this.series.values()].map((series) => ({ labels: series.labels, counts: [...series.counts], sum: series.sum, count: series.count }));
  }

  private seriesOf(labelValues: string[]): MutableSeries {
    const key = labelValues.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => { labels[name] = labelValues[i] ?? ''; });
      series = { labels, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    return series;
  }
}

/** A counter per label set, for figures no other part keeps (requests by route and status). */
export class LabelledCounter {
  private readonly values = new Map<string, { labels: MetricLabels; value: number }>();

  constructor(private readonly labelNames: readonly string[]) {}

  /** Adds one (or `by`) to the label set given in the order of `labelNames`. */
  inc(labelValues: readonly string[], by = 1): void {
    const key = labelValues.join('\u0000');
    const entry = this.values.get(key);
    if (entry !== undefined) {
      entry.value += by;
      return;
    }
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => { labels[name] = labelValues[i] ?? ''; });
    this.values.set(key, { labels, value: by });
  }

  samples(): MetricSample[] {
    return [...this.values.values()].map(({ labels, value }) => ({ labels, value }));
  }
}

export class MetricsRegistry {
  private readonly sourceList: MetricSource[] = [];
  private readonly histogramList: Histogram[] = [];
  private readonly names = new Set<string>();

  /** Adds a figure read at scrape time. Throws on a malformed or repeated name. */
  add(source: MetricSource): void {
    this.claim(source.name, source.labelNames);
    this.sourceList.push(source);
  }

  /** A counter kept here by label set (for figures no other part counts), served as `name`. */
  counter(definition: { name: string; help: string; labelNames: readonly string[] }): LabelledCounter {
    const counter = new LabelledCounter(definition.labelNames);
    this.add({ ...definition, kind: 'counter', read: () => counter.samples() });
    return counter;
  }

  /** A latency histogram, observed once per request or per commit. Throws on a malformed or repeated name. */
  histogram(definition: HistogramDefinition): Histogram {
    this.claim(definition.name, definition.labelNames);
    const histogram = new Histogram(definition);
    this.histogramList.push(histogram);
    return histogram;
  }

  sources(): readonly MetricSource[] {
    return this.sourceList;
  }

  histograms(): readonly Histogram[] {
    return this.histogramList;
  }

  private claim(name: string, labelNames: readonly string[] = []): void {
    if (!METRIC_NAME.test(name)) throw new Error(`"${name}" is not a metric name`);
    for (const label of labelNames) if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new Error(`metric ${name}: "${label}" is not a label name`);
    if (this.names.has(name)) throw new Error(`metric ${name} is added twice`);
    this.names.add(name);
  }
}
