import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { RateLimitMetrics } from '../interfaces/metrics.interface.js';
import { claimUncounted, refusalRule } from '../observability/refusal.registry.js';
import type { RateLimitExceededException } from './rate-limit.exception.js';
import { setHeaders } from './execution-context.adapter.js';
import { isRateLimitHeader, rateLimitHeaders, shownOutcomes } from './rate-limit.headers.js';

/** Counts each refusal of the exception that no metric has counted yet (one found by `peek`), under its rule. */
export function countRefusals(exception: RateLimitExceededException, metrics: RateLimitMetrics | undefined): void {
  exception.decisions.forEach((decision, i) => {
    if (decision.allowed) return;
    const rule = exception.rules[i] ?? refusalRule(decision);
    if (rule && claimUncounted(decision, rule)) metrics?.decision(rule.name, decision.degraded ? 'degraded' : 'rejected');
  });
}

/**
 * Sets, on an Express response or a Fastify reply that is not yet sent, `Retry-After` and the rate-limit headers
 * of the exception's rules in the module's `headers` mode (shadow rules only with `shadowHeaders`), in place of any
 * the guard set earlier in the request (those described the route's rules, which admitted it).
 */
export function setRefusalHeaders(exception: RateLimitExceededException, response: unknown, settings: RateLimitSettings): void {
  removeRateLimitHeaders(response);
  const outcomes = shownOutcomes(exception.outcomes, settings.shadowHeaders);
  const headers = outcomes.length > 0 ? rateLimitHeaders(settings.headers, outcomes, false).filter(([name]) => name !== 'Retry-After') : [];
  // The thrower's wait, which the body's retryAfter reports too.
  headers.push(['Retry-After', String(Math.ceil(Math.max(0, exception.retryAfterMs) / 1000))]);
  setHeaders(response, headers);
}

function removeRateLimitHeaders(response: unknown): void {
  const res = response as { getHeaderNames?(): string[]; getHeaders?(): Record<string, unknown>; removeHeader?(name: string): unknown; headersSent?: boolean; sent?: boolean };
  if (typeof res?.removeHeader !== 'function' || res.headersSent || res.sent) return;
  const names = typeof res.getHeaderNames === 'function' ? res.getHeaderNames() : Object.keys(res.getHeaders?.() ?? {});
  for (const name of names) if (isRateLimitHeader(name)) res.removeHeader(name);
}
