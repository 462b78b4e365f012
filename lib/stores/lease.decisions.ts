import type { Decision } from '../interfaces/decision.interface.js';
import type { LeaseDecision } from '../interfaces/lease-store.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';

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
