import type { CircuitState } from './circuit-breaker.interface.js';

/** One rule's part in a decision; `'shadow_rejected'`: a shadow rule refused, and the request was not refused for it. */
export type DecisionResult = 'allowed' | 'rejected' | 'degraded' | 'shadow_rejected';

/** What the module reports; a no-op when prom-client is not installed or metrics are off. */
export interface RateLimitMetrics {
  /** One rule's part in a decision (see DecisionResult). */
  decision(rule: string, result: DecisionResult): void;
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
