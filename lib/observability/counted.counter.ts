import { CountedMetric, type CountedSeries, type MetricSample } from './counted.metric.js';

/** One series of a counted counter. */
export class CounterSeries implements CountedSeries {
  value = 0;
  listed = false;

  constructor(
    private readonly owner: CountedCounter,
    readonly labels: Readonly<Record<string, string>>,
  ) {}

  /** prom-client's `inc()`: one more. */
  inc(): void {
    if (!this.listed) this.owner.list(this);
    this.value++;
  }

  clear(): void {
    this.value = 0;
    this.listed = false;
  }
}

/** A prom-client Counter counted in place (see CountedMetric): `series(...)` once, then `inc()` on it. */
export class CountedCounter extends CountedMetric<CounterSeries> {
  readonly type = 'counter';

  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, labelNames);
    // prom-client lists an unlabelled counter at 0 before its first inc(), and again after a reset.
    if (labelNames.length === 0) this.list(this.series());
  }

  override reset(): void {
    super.reset();
    if (this.labelNames.length === 0) this.list(this.series());
  }

  /** What prom-client's Counter#get() returns after the same inc() calls. */
  async get(): Promise<{ name: string; help: string; type: 'counter'; values: MetricSample[]; aggregator: 'sum' }> {
    return { help: this.help, name: this.name, type: this.type, values: this.listed.map((s) => ({ value: s.value, labels: { ...s.labels } })), aggregator: this.aggregator };
  }

  protected create(labels: Record<string, string>): CounterSeries {
    return new CounterSeries(this, labels);
  }
}
