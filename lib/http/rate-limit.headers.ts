import type { Decision } from '../interfaces/decision.interface.js';
import type { RateLimitHeadersMode } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';

/** One rule's outcome for the current request. */
export interface RuleOutcome {
  readonly rule: RateLimitRule;
  readonly decision: Decision;
}

const seconds = (ms: number) => Math.ceil(Math.max(0, ms) / 1000);

/**
 * The response headers for a request's outcomes. `draft`: the IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-11), one list member per rule; `legacy`: X-RateLimit-Limit /
 * -Remaining / -Reset (seconds until reset) of the most restrictive rule. `Retry-After` (seconds, rounded
 * up) on a refusal, whatever the mode.
 */
export function rateLimitHeaders(mode: RateLimitHeadersMode, outcomes: readonly RuleOutcome[], allowed: boolean): [string, string][] {
  const headers: [string, string][] = [];
  if (mode === 'draft' || mode === 'both') {
    // q per w is the rule's quota per window: for GCRA its limit, not the burst `decision.limit` reports.
    headers.push(['RateLimit-Policy', outcomes.map(({ rule }) => `"${rule.name}";q=${rule.limit};w=${seconds(rule.windowMs)}`).join(', ')]);
    headers.push(['RateLimit', outcomes.map(({ rule, decision }) => `"${rule.name}";r=${decision.remaining};t=${seconds(decision.resetAfterMs)}`).join(', ')]);
  }
  if (mode === 'legacy' || mode === 'both') {
    const { decision } = mostRestrictive(outcomes, allowed);
    headers.push(['X-RateLimit-Limit', String(decision.limit)]);
    headers.push(['X-RateLimit-Remaining', String(decision.remaining)]);
    headers.push(['X-RateLimit-Reset', String(seconds(decision.resetAfterMs))]);
  }
  if (!allowed) headers.push(['Retry-After', String(seconds(retryAfterMs(outcomes)))]);
  return headers;
}

/** The wait before the same request can pass: the longest among the rules that refused. */
export function retryAfterMs(outcomes: readonly RuleOutcome[]): number {
  return longestWaitMs(outcomes.map((o) => o.decision));
}

/** `retryAfterMs` of a request's decisions: the longest wait among those that refused. */
export function longestWaitMs(decisions: readonly Decision[]): number {
  let wait = 0;
  for (const decision of decisions) {
    if (!decision.allowed) wait = Math.max(wait, decision.retryAfterMs < 0 ? decision.resetAfterMs : decision.retryAfterMs);
  }
  return wait;
}

/** On a refusal, the refusing rule that makes the client wait longest; otherwise the rule with least left. */
export function mostRestrictive(outcomes: readonly RuleOutcome[], allowed: boolean): RuleOutcome {
  let best = outcomes[0];
  for (const o of outcomes) {
    const d = o.decision;
    const b = best.decision;
    const better = allowed
      ? d.remaining < b.remaining || (d.remaining === b.remaining && d.resetAfterMs > b.resetAfterMs)
      : !d.allowed && (b.allowed || d.retryAfterMs > b.retryAfterMs);
    if (better) best = o;
  }
  return best;
}
