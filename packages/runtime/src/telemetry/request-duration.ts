import type { Metric, Registry } from 'prom-client';

interface Series {
  labels: { method: string; route: string; status: string };
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  perBucket: Float64Array;
  sum: number;
  count: number;
}

interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
  /** Buckets carry prom-client's "no exemplar" (exemplars are not kept). */
  exemplar?: null;
}

export interface RequestDurationOptions {
  name: string;
  help: string;
  buckets: readonly number[];
  registers: Registry[];
}

/**
 * The edge's request-duration histogram: one observation per HTTP request, by method, route template and status.
 * prom-client's Histogram turns the label object into a string key and looks it up in a dictionary on every
 * observation; on the gateway's data plane that cost about 2 % of the edge's CPU per call (docs/performance.md, "what a
 * call's bookkeeping costs"). This one finds its series through maps of the label values, with nothing made per
 * observation, and gives the registry its values in the shape prom-client's Histogram does, so /metrics shows the
 * same text (tested against prom-client's own).
 */
export class RequestDurationHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: readonly number[];
  /** method → route → status → series. */
  private byMethod = new Map<string, Map<string, Map<number, Series>>>();
  /** The series in the order they were first observed (the order of the exposition). */
  private ordered: Series[] = [];

  constructor(options: RequestDurationOptions) {
    this.name = options.name;
    this.help = options.help;
    this.bounds = [...options.buckets].sort((a, b) => a - b);
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let byRoute = this.byMethod.get(method);
    if (!byRoute) this.byMethod.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, perBucket: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.ordered.push(series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    series.perBucket[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  reset(): void {
    this.byMethod = new Map();
    this.ordered = [];
  }

  /** What the registry formats for /metrics: each bucket's cumulative count, then `+Inf`, sum and count. */
  getForPromString(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    for (const series of this.ordered) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += series.perBucket[index]!;
        values.push({ labels: { le: bound }, sharedLabels: series.labels, value: cumulative, metricName: `${this.name}_bucket`, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_bucket`, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** The same values with each series' labels merged in (the registry's JSON form). */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Array<Omit<ExportedValue, 'sharedLabels'>> }> {
    const exported = await this.getForPromString();
    return {
      ...exported,
      values: exported.values.map(({ sharedLabels, labels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } })),
    };
  }
}
