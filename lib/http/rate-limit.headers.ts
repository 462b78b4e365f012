import { longestWaitMs, waitMs } from '../interfaces/decision.arithmetic.js';
import type { Decision } from '../interfaces/decision.interface.js';
import type { RateLimitHeadersMode } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';

/** One rule's outcome for the current request. */
export interface RuleOutcome {
  readonly rule: RateLimitRule;
  readonly decision: Decision;
  /** Units the request asked of the rule (its `cost`). @default 1 */
  readonly cost?: number;
}

const seconds = (ms: number) => Math.ceil(Math.max(0, ms) / 1000);

/**
 * The response headers for a request's outcomes. `draft`: the IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-11), one list member per rule; `legacy`: X-RateLimit-Limit /
 * -Remaining / -Reset (seconds until reset) of the most restrictive rule; `per-rule`: those three for every
 * rule, named `X-RateLimit-Limit-<rule>` (no suffix for `default`) as `@nestjs/throttler` names them, plus
 * `Retry-After-<rule>` for each refusing rule. `Retry-After` (seconds, rounded up, the longest wait) on a
 * refusal, whatever the mode.
 */
export function rateLimitHeaders(mode: RateLimitHeadersMode, outcomes: readonly RuleOutcome[], allowed: boolean): [string, string][] {
  const headers: [string, string][] = [];
  if (mode === 'draft' || mode === 'both') {
    // q per w is the rule's quota per window: for GCRA its limit, not the burst `decision.limit` reports.
    headers.push(['RateLimit-Policy', outcomes.length === 1 ? policyMember(outcomes[0].rule) : outcomes.map(({ rule }) => policyMember(rule)).join(', ')]);
    headers.push(['RateLimit', outcomes.map(({ rule, decision }) => `"${rule.name}";r=${decision.remaining};t=${seconds(decision.resetAfterMs)}`).join(', ')]);
  }
  if (mode === 'legacy' || mode === 'both') {
    const { decision } = mostRestrictive(outcomes, allowed);
    headers.push(['X-RateLimit-Limit', String(decision.limit)]);
    headers.push(['X-RateLimit-Remaining', String(decision.remaining)]);
    headers.push(['X-RateLimit-Reset', String(seconds(decision.resetAfterMs))]);
  }
  if (mode === 'per-rule') {
    for (const { rule, decision } of outcomes) {
      const suffix = ruleSuffix(rule.name);
      headers.push([`X-RateLimit-Limit${suffix}`, String(decision.limit)]);
      headers.push([`X-RateLimit-Remaining${suffix}`, String(decision.remaining)]);
      headers.push([`X-RateLimit-Reset${suffix}`, String(seconds(decision.resetAfterMs))]);
      // The default rule's own wait would be a second Retry-After: the one below, the longest wait, is what counts.
      if (!allowed && !decision.allowed && suffix !== '') headers.push([`Retry-After${suffix}`, String(seconds(waitMs(decision)))]);
    }
  }
  if (!allowed) headers.push(['Retry-After', String(seconds(retryAfterMs(outcomes)))]);
  return headers;
}

/**
 * The outcomes a response reports: every one with `shadowHeaders`, else those of the rules in force, so that a rule
 * tried out in shadow changes nothing a client sees, on a 200 and a 429 alike. The same array when nothing is left out.
 */
export function shownOutcomes(outcomes: readonly RuleOutcome[], shadowHeaders: boolean): readonly RuleOutcome[] {
  if (shadowHeaders) return outcomes;
  for (let i = 0; i < outcomes.length; i++) if (outcomes[i].decision.shadow) return outcomes.filter((o) => !o.decision.shadow);
  return outcomes;
}

/** A rule's member of RateLimit-Policy: the same for every request, so built once per rule (rules are immutable). */
function policyMember(rule: RateLimitRule): string {
  let member = POLICY_MEMBERS.get(rule);
  if (member === undefined) POLICY_MEMBERS.set(rule, (member = `"${rule.name}";q=${rule.limit};w=${seconds(rule.windowMs)}`));
  return member;
}
const POLICY_MEMBERS = new WeakMap<RateLimitRule, string>();

/** The wait before the same request can pass: the longest among the rules that refused. */
export function retryAfterMs(outcomes: readonly RuleOutcome[]): number {
  return longestWaitMs(outcomes.map((o) => o.decision));
}

/** Header names of `per-rule` mode: throttler's, where the `default` rule has no suffix. */
const ruleSuffix = (name: string) => (name === 'default' ? '' : `-${name}`);

/** Whether a response header is one `rateLimitHeaders` may have set, in any mode. */
export function isRateLimitHeader(name: string): boolean {
  return RATE_LIMIT_HEADER.test(name);
}
const RATE_LIMIT_HEADER = /^(ratelimit|ratelimit-policy|retry-after(-.+)?|x-ratelimit-(limit|remaining|reset)(-.+)?)$/i;

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
