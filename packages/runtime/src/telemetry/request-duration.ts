import type { Metric, Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
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
  /** The three labels' names, in the order `observe` takes their values (default method, route, status). */
  labelNames?: readonly [string, string, string];
}

/**
 * A histogram of three labels for what is observed once per request: the edge's request durations (by method, route
 * template and status) and the MCP gateway's calls (by MCP method, outcome and error class). prom-client's Histogram
 * (and a child from its `labels`) turns the label object into a string key and looks it up in a dictionary on every
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
  private readonly labelNames: readonly [string, string, string];
  /** first label's value → second's → third's → series. */
  private byFirst = new Map<string, Map<string, Map<string | number, Series>>>();
  /** The series in the order they were first observed (the order of the exposition). */
  private ordered: Series[] = [];

  constructor(options: RequestDurationOptions) {
    this.name = options.name;
    this.help = options.help;
    this.bounds = [...options.buckets].sort((a, b) => a - b);
    this.labelNames = options.labelNames ?? ['method', 'route', 'status'];
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** One observation of `seconds` under the three labels' values (for the edge: method, route, status). */
  observe(first: string, second: string, third: string | number, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let bySecond = this.byFirst.get(first);
    if (!bySecond) this.byFirst.set(first, (bySecond = new Map()));
    let byThird = bySecond.get(second);
    if (!byThird) bySecond.set(second, (byThird = new Map()));
    let series = byThird.get(third);
    if (!series) {
      const [firstName, secondName, thirdName] = this.labelNames;
      const labels = { [firstName]: first, [secondName]: second, [thirdName]: String(third) };
      series = { labels, perBucket: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      byThird.set(third, series);
      this.ordered.push(series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    series.perBucket[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  reset(): void {
    this.byFirst = new Map();
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
