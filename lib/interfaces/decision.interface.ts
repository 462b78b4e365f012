import type { FailurePolicy } from './rule.interface.js';

/** The answer to "may this request pass?", the same shape for every algorithm and store. */
export interface Decision {
  /** Whether the request was admitted (and, for `consume`, recorded). */
  allowed: boolean;
  /** The most the rule admits at once: the limit, or the bucket capacity (GCRA: `max_burst + 1`). */
  limit: number;
  /** What is left after this request if it was admitted; what is left now if it was refused. */
  remaining: number;
  /** Milliseconds until the key is back to its full budget (0 when it already is). */
  resetAfterMs: number;
  /** 0 when allowed; otherwise the exact wait in milliseconds after which the same request passes, if nothing else arrives. */
  retryAfterMs: number;
  /**
   * Set only when the store could not decide (Redis down, slow, or its circuit open) and the failure policy did:
   * `'open'` admitted without counting, `'closed'` refused, `'memory'` decided on the embedded store.
   */
  degraded?: FailurePolicy;
  /**
   * Set on the decision of a shadow rule (`mode: 'shadow'`): `allowed` is what the rule decided, but its refusal
   * refuses nothing (`MultiDecision.allowed`, `enforce` and the guard admit). Absent on rules in force.
   */
  shadow?: true;
}

/** The answer of `consumeAll`: admitted only if every rule admits; then recorded in all, otherwise in none. */
export interface MultiDecision {
  /** Whether every rule admitted the request. */
  allowed: boolean;
  /** One decision per entry, in the order given. A rule that would have admitted says so even when another refused. */
  decisions: Decision[];
}
