import type { CircuitState } from '../resilience/circuit-breaker.js';

/** What the module reports; a no-op when prom-client is not installed or metrics are off. */
export interface RateLimitMetrics {
  /** One rule's part in a decision. */
  decision(rule: string, result: 'allowed' | 'rejected' | 'degraded'): void;
  /** One request's decision took this long, in seconds (Prometheus counts in seconds). */
  duration(seconds: number): void;
  storeError(operation: string): void;
  circuit(state: CircuitState): void;
  blockCacheHit(): void;
}

export interface RateLimitMetricsOptions {
  /** A prom-client `Registry`. @default prom-client's global registry */
  registry?: unknown;
  /** Prefix of every metric name. @default 'rate_limit_' */
  prefix?: string;
}

const NOOP: RateLimitMetrics = { decision() {}, duration() {}, storeError() {}, circuit() {}, blockCacheHit() {} };
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

  const decisions = metric('decisions_total', () => new prom.Counter({ name: `${prefix}decisions_total`, help: 'Rate-limit decisions by rule and result: admitted requests per rule, refusals per refusing rule (degraded: decided by the failure policy).', labelNames: ['rule', 'result'], registers: [registry] }));
  const errors = metric('store_errors_total', () => new prom.Counter({ name: `${prefix}store_errors_total`, help: 'Store (Redis) failures and timeouts, by operation.', labelNames: ['operation'], registers: [registry] }));
  const latency = metric('decision_duration_seconds', () => new prom.Histogram({ name: `${prefix}decision_duration_seconds`, help: 'Time to decide one request, store round trip included.', buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25], registers: [registry] }));
  const circuit = metric('circuit_state', () => new prom.Gauge({ name: `${prefix}circuit_state`, help: 'Circuit breaker in front of the store: 0 closed, 0.5 half-open, 1 open.', registers: [registry] }));
  const hits = metric('local_block_hits_total', () => new prom.Counter({ name: `${prefix}local_block_hits_total`, help: 'Refusals answered by the local block cache without a store call.', registers: [registry] }));
  circuit.set(0);
  return {
    decision: (rule, result) => decisions.inc({ rule, result }),
    duration: (seconds) => latency.observe(seconds),
    storeError: (operation) => errors.inc({ operation }),
    circuit: (state) => circuit.set(CIRCUIT_VALUE[state]),
    blockCacheHit: () => hits.inc(),
  };
}
