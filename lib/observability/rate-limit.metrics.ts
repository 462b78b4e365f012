import type { CircuitState } from '../resilience/circuit-breaker.js';

/** What the module reports; a no-op when prom-client is not installed or metrics are off. */
export interface RateLimitMetrics {
  /** One rule's part in a decision; `'shadow_rejected'`: a shadow rule refused, and the request was not refused for it. */
  decision(rule: string, result: 'allowed' | 'rejected' | 'degraded' | 'shadow_rejected'): void;
  /** One request's decision took this long, in seconds (Prometheus counts in seconds). */
  duration(seconds: number): void;
  storeError(operation: string): void;
  circuit(state: CircuitState): void;
  blockCacheHit(): void;
  /**
   * One rule's share of its limit at a decision the store made (0..1 admitted, above 1 refused), for the
   * per-rule utilisation histogram. Optional, so that metrics objects written before it keep compiling.
   */
  utilization?(rule: string, ratio: number): void;
}

export interface RateLimitMetricsOptions {
  /** A prom-client `Registry`. @default prom-client's global registry */
  registry?: unknown;
  /** Prefix of every metric name. @default 'rate_limit_' */
  prefix?: string;
}

const NOOP: RateLimitMetrics = { decision() {}, duration() {}, storeError() {}, circuit() {}, blockCacheHit() {} };
/**
 * Utilisation buckets: tenths up to 0.9 so that `histogram_quantile(0.9, ...) > 0.9` is exact at the alert's
 * threshold; 0.95 and 1 for "nearly full" and "full"; above 1 only refused requests (their demand).
 */
export const UTILIZATION_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1, 1.25, 1.5, 2];
const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, 'half-open': 0.5, open: 1 };

type PromClient = typeof import('prom-client');

/**
 * Prometheus metrics through prom-client, an optional peer dependency: when it cannot be loaded, metrics are
 * a no-op. Metrics already registered under the same names (a second app in one process) are reused.
 */
export async function createMetrics(options: RateLimitMetricsOptions | false | undefined): Promise<RateLimitMetrics> {
  if (options === false) return NOOP;
  let prom: PromClient;
  try {
    const loaded = (await import('prom-client')) as PromClient & { default?: PromClient };
    prom = loaded.default ?? loaded;
  } catch {
    return NOOP;
  }
  const registry = (options?.registry ?? prom.register) as InstanceType<PromClient['Registry']>;
  const prefix = options?.prefix ?? 'rate_limit_';
  const metric = <T>(name: string, make: () => T): T => (registry.getSingleMetric(`${prefix}${name}`) as T | undefined) ?? make();

  const decisions = metric('decisions_total', () => new prom.Counter({ name: `${prefix}decisions_total`, help: 'Rate-limit decisions by rule and result: admitted requests per rule, refusals per refusing rule (degraded: decided by the failure policy; shadow_rejected: a shadow rule refused, the request was not refused for it).', labelNames: ['rule', 'result'], registers: [registry] }));
  const errors = metric('store_errors_total', () => new prom.Counter({ name: `${prefix}store_errors_total`, help: 'Store (Redis) failures and timeouts, by operation.', labelNames: ['operation'], registers: [registry] }));
  const latency = metric('decision_duration_seconds', () => new prom.Histogram({ name: `${prefix}decision_duration_seconds`, help: 'Time to decide one request, store round trip included.', buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25], registers: [registry] }));
  const circuit = metric('circuit_state', () => new prom.Gauge({ name: `${prefix}circuit_state`, help: 'Circuit breaker in front of the store: 0 closed, 0.5 half-open, 1 open.', registers: [registry] }));
  const hits = metric('local_block_hits_total', () => new prom.Counter({ name: `${prefix}local_block_hits_total`, help: 'Refusals answered by the local block cache without a store call.', registers: [registry] }));
  const utilization = metric('window_utilization', () => new prom.Histogram({ name: `${prefix}window_utilization`, help: 'Share of the rule\'s limit in use at each decision the store made: (limit - remaining) / limit after an admitted request; (limit - remaining + cost) / limit, above 1, for a refused one. GCRA: of its burst.', labelNames: ['rule'], buckets: UTILIZATION_BUCKETS, registers: [registry] }));
  // One child per rule name (rule names come from configuration, so the map is as small as the rule set): a
  // decision does not build a labels object.
  const utilizationByRule = new Map<string, { observe(value: number): void }>();
  // The same for the decisions counter: one child per rule name and result.
  const decisionsByRule = new Map<string, Record<string, { inc(): void }>>();
  circuit.set(0);
  return {
    decision: (rule, result) => {
      let children = decisionsByRule.get(rule);
      if (!children) decisionsByRule.set(rule, (children = {}));
      (children[result] ??= decisions.labels({ rule, result })).inc();
    },
    duration: (seconds) => latency.observe(seconds),
    storeError: (operation) => errors.inc({ operation }),
    circuit: (state) => circuit.set(CIRCUIT_VALUE[state]),
    blockCacheHit: () => hits.inc(),
    utilization: (rule, ratio) => {
      let child = utilizationByRule.get(rule);
      if (!child) utilizationByRule.set(rule, (child = utilization.labels({ rule })));
      child.observe(ratio);
    },
  };
}
