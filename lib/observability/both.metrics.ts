import type { RateLimitMetrics } from '../interfaces/metrics.interface.js';

/** Both metrics told of everything, when Prometheus and OpenTelemetry are both on. */
export function bothMetrics(a: RateLimitMetrics, b: RateLimitMetrics): RateLimitMetrics {
  return {
    decision: (rule, result) => (a.decision(rule, result), b.decision(rule, result)),
    duration: (seconds) => (a.duration(seconds), b.duration(seconds)),
    storeError: (operation) => (a.storeError(operation), b.storeError(operation)),
    circuit: (state) => (a.circuit(state), b.circuit(state)),
    blockCacheHit: () => (a.blockCacheHit(), b.blockCacheHit()),
    utilization: (rule, ratio) => (a.utilization?.(rule, ratio), b.utilization?.(rule, ratio)),
  };
}
