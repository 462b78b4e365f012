import type { Decision } from '../interfaces/decision.interface.js';
import type { DecisionResult } from '../interfaces/metrics.interface.js';

/** A rule's decision as the metrics' `result` label and the span's `ratelimit.result` name it. */
export function decisionResult(d: Decision): DecisionResult {
  return d.degraded ? 'degraded' : d.allowed ? 'allowed' : d.shadow ? 'shadow_rejected' : 'rejected';
}
