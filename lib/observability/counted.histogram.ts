import { CountedMetric, type CountedSeries, type MetricSample } from './counted.metric.js';

/** One series of a counted histogram: bucket counts, sum and count, as prom-client keeps them. */
export class HistogramSeries implements CountedSeries {
  /** Observations per bucket, not cumulative: [i] counts the values in (bounds[i - 1], bounds[i]]. */
  readonly buckets: Float64Array;
  /** Every observation, those above the last bound (only in `+Inf`) included. */
  count = 0;
  sum = 0;
  listed = false;

  constructor(
    private readonly owner: CountedHistogram,
    private readonly bounds: Float64Array,
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.buckets = new Float64Array(bounds.length);
  }

  /**
   * prom-client's `observe(value)`. A value that is not a finite number is dropped: prom-client would throw,
   * and a metric must not fail the decision it describes.
   */
  observe(value: number): void {
    if (value - value !== 0) return;
    if (!this.listed) this.owner.list(this);
    const bounds = this.bounds;
    // The first bound at or above the value, as prom-client's findBound (`value <= bound`); none: only +Inf.
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    if (i < bounds.length) this.buckets[i]++;
    this.sum += value;
    this.count++;
  }

  clear(): void {
    this.buckets.fill(0);
    this.count = 0;
    this.sum = 0;
    this.listed = false;
  }
}

/** A prom-client Histogram counted in place (see CountedMetric): `series(...)` once, then `observe()` on it. */
export class CountedHistogram extends CountedMetric<HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: Float64Array;

  constructor(
    name: string,
    help: string,
    readonly buckets: readonly number[],
    labelNames: readonly string[] = [],
  ) {
    super(name, help, labelNames);
    this.bounds = Float64Array.from(buckets);
    // prom-client lists an unlabelled histogram, all zeros, from its construction (not after a reset).
    if (labelNames.length === 0) this.list(this.series());
  }

  /** What prom-client's Histogram#getForPromString() returns: the rule's labels as `sharedLabels`. */
  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: MetricSample[]; aggregator: 'sum' }> {
    const bucketName = `${this.name}_bucket`;
    const values: MetricSample[] = [];
    for (const s of this.listed) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.buckets[i];
        values.push({ labels: { le: this.buckets[i] }, sharedLabels: s.labels, value: cumulative, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** What prom-client's Histogram#get() returns: each sample's labels with the series' labels merged in. */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; values: MetricSample[]; aggregator: 'sum' }> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...sample }) => ({ ...sample, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  protected create(labels: Record<string, string>): HistogramSeries {
    return new HistogramSeries(this, this.bounds, labels);
  }
}
