import type { OpenTelemetryAttributes as Attributes, OpenTelemetryMeter as Meter } from '../interfaces/open-telemetry.interface.js';
import type { DecisionResult, RateLimitMetrics } from '../interfaces/metrics.interface.js';
import { CIRCUIT_VALUE, DURATION_BUCKETS, UTILIZATION_BUCKETS } from './rate-limit.metrics.js';

const RESULTS: readonly DecisionResult[] = ['allowed', 'rejected', 'degraded', 'shadow_rejected'];

/** One rule's decisions, counted in place, and its attribute sets: made at its first decision. */
interface RuleCounts extends Record<DecisionResult, number> {
  readonly rule: string;
  /** `{ ratelimit.rule, ratelimit.result }` of each result. */
  readonly attributes: Readonly<Record<DecisionResult, Attributes>>;
  /** `{ ratelimit.rule }`, for the utilisation histogram. */
  readonly ruleAttributes: Attributes;
}

// A second app in one process on the same Meter shares its instruments, as the Prometheus metrics share a registry's.
const made = new WeakMap<Meter, RateLimitMetrics>();

/**
 * The Prometheus metrics (rate-limit.metrics.ts) as OpenTelemetry instruments, made once on `meter`. The counters
 * are counted in place and read by asynchronous instruments when the reader collects: a decision costs an
 * addition, not the SDK's attribute hashing. The histograms have no asynchronous kind: a decision records into
 * them, with an attribute object made once per rule.
 */
export function openTelemetryMetrics(meter: Meter): RateLimitMetrics {
  let metrics = made.get(meter);
  if (!metrics) made.set(meter, (metrics = makeMetrics(meter)));
  return metrics;
}

function makeMetrics(meter: Meter): RateLimitMetrics {
  // Rule names come from configuration, so the map is as small as the rule set; most requests meet the rule of
  // the one before (one rule per route), which is checked first.
  const rules = new Map<string, RuleCounts>();
  let last: RuleCounts | undefined;
  const counts = (rule: string): RuleCounts => {
    if (last?.rule === rule) return last;
    let found = rules.get(rule);
    if (!found) {
      const of = (result: DecisionResult): Attributes => ({ 'ratelimit.rule': rule, 'ratelimit.result': result });
      const attributes = { allowed: of('allowed'), rejected: of('rejected'), degraded: of('degraded'), shadow_rejected: of('shadow_rejected') };
      found = { rule, allowed: 0, rejected: 0, degraded: 0, shadow_rejected: 0, attributes, ruleAttributes: { 'ratelimit.rule': rule } };
      rules.set(rule, found);
    }
    return (last = found);
  };
  let blockHits = 0;
  let circuit = 0;
  const errorAttributes = new Map<string, Attributes>();

  meter
    .createObservableCounter('ratelimit.decisions', { unit: '{decision}', description: 'Rate-limit decisions by rule and result (rate_limit_decisions_total).' })
    .addCallback((observer) => {
      for (const c of rules.values()) {
        for (const result of RESULTS) if (c[result] > 0) observer.observe(c[result], c.attributes[result]);
      }
    });
  meter
    .createObservableCounter('ratelimit.local_block.hits', { unit: '{hit}', description: 'Refusals answered by the local block cache without a store call (rate_limit_local_block_hits_total).' })
    .addCallback((observer) => observer.observe(blockHits));
  meter
    .createObservableGauge('ratelimit.circuit.state', { unit: '1', description: 'Circuit breaker in front of the store: 0 closed, 0.5 half-open, 1 open (rate_limit_circuit_state).' })
    .addCallback((observer) => observer.observe(circuit));
  const duration = meter.createHistogram('ratelimit.decision.duration', {
    unit: 's',
    description: 'Time to decide one request, store round trip included (rate_limit_decision_duration_seconds).',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const utilization = meter.createHistogram('ratelimit.window.utilization', {
    unit: '1',
    description: "Share of the rule's limit in use at each decision the store made, above 1 for a refused request (rate_limit_window_utilization).",
    advice: { explicitBucketBoundaries: UTILIZATION_BUCKETS },
  });
  const errors = meter.createCounter('ratelimit.store.errors', { unit: '{error}', description: 'Store (Redis) failures and timeouts, by operation (rate_limit_store_errors_total).' });

  return {
    decision: (rule, result) => void counts(rule)[result]++,
    duration: (seconds) => duration.record(seconds),
    storeError: (operation) => {
      let attributes = errorAttributes.get(operation);
      if (!attributes) errorAttributes.set(operation, (attributes = { 'ratelimit.store.operation': operation }));
      errors.add(1, attributes);
    },
    circuit: (state) => void (circuit = CIRCUIT_VALUE[state]),
    blockCacheHit: () => void blockHits++,
    utilization: (rule, ratio) => utilization.record(ratio, counts(rule).ruleAttributes),
  };
}
