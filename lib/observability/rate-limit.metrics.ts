import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { CircuitState } from '../interfaces/circuit-breaker.interface.js';
import type { DecisionResult, RateLimitMetrics, RateLimitMetricsOptions } from '../interfaces/metrics.interface.js';
import { CountedCounter, type CounterSeries } from './counted.counter.js';
import { CountedHistogram, type HistogramSeries } from './counted.histogram.js';

/** The metrics of a module whose metrics are off (or without prom-client): a decision need not be timed for them. */
export const NO_METRICS: RateLimitMetrics = { decision() {}, duration() {}, storeError() {}, circuit() {}, blockCacheHit() {} };
/**
 * Utilisation buckets: tenths up to 0.9 so that `histogram_quantile(0.9, ...) > 0.9` is exact at the alert's
 * threshold; 0.95 and 1 for "nearly full" and "full"; above 1 only refused requests (their demand).
 */
export const UTILIZATION_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1, 1.25, 1.5, 2];
/** Decision duration buckets, in seconds: from half a millisecond (a memory decision) to a slow store's 250 ms. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];
export const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, 'half-open': 0.5, open: 1 };

type PromClient = typeof import('prom-client');
type PromRegistry = InstanceType<PromClient['Registry']>;

/** One rule's series, made at its first decision: a decision counts into them without a lookup by labels. */
interface RuleMeter {
  readonly rule: string;
  readonly allowed: CounterSeries;
  readonly rejected: CounterSeries;
  readonly degraded: CounterSeries;
  readonly shadow_rejected: CounterSeries;
  readonly utilization: HistogramSeries;
}

/**
 * Prometheus metrics through prom-client, an optional peer dependency: when it cannot be loaded, metrics are
 * a no-op. The per-decision metrics (decisions, duration, utilisation, block-cache hits) are counted in
 * place and read by the registry when it collects (CountedMetric): a decision costs a few additions, not
 * prom-client's label hashing. Metrics already registered under the same names by this module (a second app
 * in one process) are shared; a name taken by another metric is refused at start-up.
 */
export async function createMetrics(options: RateLimitMetricsOptions | false | undefined): Promise<RateLimitMetrics> {
  if (options === false) return NO_METRICS;
  let prom: PromClient;
  try {
    const loaded = (await import('prom-client')) as PromClient & { default?: PromClient };
    prom = loaded.default ?? loaded;
  } catch {
    return NO_METRICS;
  }
  const registry = (options?.registry ?? prom.register) as PromRegistry;
  const prefix = options?.prefix ?? 'rate_limit_';
  const metric = <T>(name: string, make: () => T): T => (registry.getSingleMetric(`${prefix}${name}`) as T | undefined) ?? make();
  const counted = <T extends CountedCounter | CountedHistogram>(name: string, kind: new (...args: never[]) => T, make: (name: string) => T): T => {
    const existing = registry.getSingleMetric(`${prefix}${name}`) as unknown;
    if (existing instanceof kind) return existing;
    if (existing) throw new RateLimitConfigError('metrics.prefix', prefix, `a prefix whose metric names are free in the registry: ${prefix}${name} is already registered by other code`);
    const made = make(`${prefix}${name}`);
    registry.registerMetric(made as never);
    return made;
  };

  const decisions = counted('decisions_total', CountedCounter, (name) => new CountedCounter(name, 'Rate-limit decisions by rule and result: admitted requests per rule, refusals per refusing rule (degraded: decided by the failure policy; shadow_rejected: a shadow rule refused, the request was not refused for it).', ['rule', 'result']));
  const errors = metric('store_errors_total', () => new prom.Counter({ name: `${prefix}store_errors_total`, help: 'Store (Redis) failures and timeouts, by operation.', labelNames: ['operation'], registers: [registry] }));
  const latency = counted('decision_duration_seconds', CountedHistogram, (name) => new CountedHistogram(name, 'Time to decide one request, store round trip included.', DURATION_BUCKETS));
  const circuit = metric('circuit_state', () => new prom.Gauge({ name: `${prefix}circuit_state`, help: 'Circuit breaker in front of the store: 0 closed, 0.5 half-open, 1 open.', registers: [registry] }));
  const hits = counted('local_block_hits_total', CountedCounter, (name) => new CountedCounter(name, 'Refusals answered by the local block cache without a store call.'));
  const utilization = counted('window_utilization', CountedHistogram, (name) => new CountedHistogram(name, 'Share of the rule\'s limit in use at each decision the store made: (limit - remaining) / limit after an admitted request; (limit - remaining + cost) / limit, above 1, for a refused one. GCRA: of its burst.', UTILIZATION_BUCKETS, ['rule']));
  const latencySeries = latency.series();
  const hitSeries = hits.series();
  // Rule names come from configuration, so the map is as small as the rule set; most requests meet the rule
  // of the one before (one rule per route), which is checked first.
  const meters = new Map<string, RuleMeter>();
  let last: RuleMeter | undefined;
  const meter = (rule: string): RuleMeter => {
    if (last?.rule === rule) return last;
    let found = meters.get(rule);
    if (!found) {
      const series = (result: DecisionResult) => decisions.series(rule, result);
      found = { rule, allowed: series('allowed'), rejected: series('rejected'), degraded: series('degraded'), shadow_rejected: series('shadow_rejected'), utilization: utilization.series(rule) };
      meters.set(rule, found);
    }
    return (last = found);
  };
  circuit.set(0);
  return {
    decision: (rule, result) => meter(rule)[result].inc(),
    duration: (seconds) => latencySeries.observe(seconds),
    storeError: (operation) => errors.inc({ operation }),
    circuit: (state) => circuit.set(CIRCUIT_VALUE[state]),
    blockCacheHit: () => hitSeries.inc(),
    utilization: (rule, ratio) => meter(rule).utilization.observe(ratio),
  };
}
