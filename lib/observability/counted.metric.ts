/** What a counted series keeps besides its counts: its labels, and whether a scrape lists it. */
export interface CountedSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** Observed since the last reset (or an unlabelled series prom-client lists from the start). */
  listed: boolean;
  /** Back to zero, unlisted: what prom-client's `reset()` does to a series. */
  clear(): void;
}

/** A sample as prom-client's registry reads it from a metric's `get()` / `getForPromString()`. */
export interface MetricSample {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
  exemplar?: null;
}

/**
 * A metric counted in place and handed to prom-client only when its registry collects: a decision bumps a
 * number in a series record it holds, where prom-client's own `inc()` / `observe()` would hash the labels,
 * validate them and look the series up on every call. The registry only needs `name`, `help`, `type`,
 * `aggregator`, `get()` and `reset()` of a metric; what `get()` returns here is what prom-client's Counter or
 * Histogram would return after the same calls (same values, labels, series order), so scrapes cannot tell.
 */
export abstract class CountedMetric<S extends CountedSeries> {
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum';
  private readonly byLabels = new Map<string, S>();
  /** Series in the order prom-client lists them: by first observation since the last reset. */
  protected listed: S[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /**
   * The series of these label values (in `labelNames` order), made once: callers keep it and count into it.
   * It is listed at its first observation, as prom-client lists a series at its first `inc()` / `observe()`.
   */
  series(...values: string[]): S {
    if (values.length !== this.labelNames.length) throw new TypeError(`${this.name} takes the labels ${this.labelNames.join(', ') || '(none)'}, not ${values.length} values`);
    const key = values.join('\u0000');
    let series = this.byLabels.get(key);
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]));
      this.byLabels.set(key, (series = this.create(labels)));
    }
    return series;
  }

  /** Called by a series at its first observation since the last reset. */
  list(series: S): void {
    series.listed = true;
    this.listed.push(series);
  }

  /** `registry.resetMetrics()`: every series back to zero and unlisted, the records callers hold still valid. */
  reset(): void {
    for (const series of this.byLabels.values()) series.clear();
    this.listed = [];
  }

  protected abstract create(labels: Record<string, string>): S;
}
