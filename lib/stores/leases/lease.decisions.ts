import type { Decision } from '../../interfaces/decision.interface.js';
import type { LeaseDecision } from '../../interfaces/lease-store.interface.js';
import type { RateLimitRule } from '../../interfaces/rule.interface.js';
import type { RuleKey } from '../../interfaces/store.interface.js';
import { asShadow } from '../../shadow/shadow-mode.decider.js';

/**
 * Longest Retry-After of a refused lease, in ms. A slot frees when a request in flight ends, which no store can
 * foresee; the oldest lease's expiry (up to `leaseMs`, minutes) is only the latest it can happen. So clients are
 * told 1 s, or less when the oldest lease expires sooner.
 */
export const LEASE_RETRY_AFTER_MS = 1_000;

/** A lease decision in the one `Decision` shape the headers, the exception and the metrics read. */
export function leaseDecision(d: LeaseDecision): Decision {
  const retryAfterMs = d.acquired ? 0 : Math.min(d.retryAfterMs, LEASE_RETRY_AFTER_MS);
  return { allowed: d.acquired, limit: d.limit, remaining: Math.max(0, d.limit - d.inFlight), resetAfterMs: retryAfterMs, retryAfterMs, ...(d.degraded ? { degraded: d.degraded } : {}) };
}

/** A concurrency rule of a request that a rate rule refused first: no lease was asked for, none is held. */
export function leaseNotAsked(rule: RateLimitRule): Decision {
  return { allowed: true, limit: rule.limit, remaining: rule.limit, resetAfterMs: 0, retryAfterMs: 0 };
}

/**
 * The decision of every entry of a request in order: the rate rules' as `rated` decided them, the concurrency rules'
 * from `lease` (called in order, marked when the rule is a shadow one).
 */
export function withLeaseDecisions(entries: readonly RuleKey[], rated: readonly Decision[], lease: (entry: RuleKey) => Decision): Decision[] {
  const decisions: Decision[] = new Array(entries.length);
  for (let i = 0, r = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry.rule.algorithm !== 'concurrency') {
      decisions[i] = rated[r++];
      continue;
    }
    const decision = lease(entry);
    decisions[i] = entry.shadow ? asShadow(decision) : decision;
  }
  return decisions;
}
