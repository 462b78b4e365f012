import { Catch, Inject, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { RateLimitSettings } from '../config/module-options.validator.js';
import type { RateLimitMetrics } from '../observability/rate-limit.metrics.js';
import { claimUncounted, refusalRule } from '../observability/refusal.registry.js';
import { RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS } from '../rate-limit.constants.js';
import { RateLimitExceededException } from '../rate-limit.exception.js';
import { setHeaders } from './execution-context.adapter.js';
import { isRateLimitHeader, rateLimitHeaders } from './rate-limit.headers.js';

/**
 * Answers every `RateLimitExceededException` over HTTP (Express and Fastify), wherever it was thrown (guard,
 * `enforce`, user code after `peek`): 429 with its body, `Retry-After` and the rate-limit headers of its rules
 * in the module's `headers` mode, in place of any the guard set earlier for the route's own rules. A refusal
 * no metric has counted yet (one found by `peek`) is counted here, once. Registered globally by the module;
 * extend it (and call `super.catch`) to do more with a 429, as an app-wide filter of your own would hide it.
 */
@Catch(RateLimitExceededException)
export class RateLimitExceptionFilter implements ExceptionFilter<RateLimitExceededException> {
  constructor(
    @Inject(RATE_LIMIT_SETTINGS) protected readonly settings: RateLimitSettings,
    protected readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(RATE_LIMIT_METRICS) protected readonly metrics?: RateLimitMetrics,
  ) {}

  catch(exception: RateLimitExceededException, host: ArgumentsHost): unknown {
    this.count(exception);
    const type = host.getType<string>();
    if (type === 'http') return this.reply(exception, host);
    // WebSocket gateways: what Nest does without this filter. Its package exists whenever a gateway does.
    if (type === 'ws') return import('@nestjs/websockets').then(({ BaseWsExceptionFilter }) => new BaseWsExceptionFilter().catch(exception, host));
    // GraphQL and the rest: rethrown, as Nest's own filter for them does, so the resolver's error is unchanged.
    throw exception;
  }

  /** Counts each refusal of the exception that no metric has counted yet, under its rule. */
  protected count(exception: RateLimitExceededException): void {
    exception.decisions.forEach((decision, i) => {
      if (decision.allowed) return;
      const rule = exception.rules[i] ?? refusalRule(decision);
      if (rule && claimUncounted(decision, rule)) this.metrics?.decision(rule.name, decision.degraded ? 'degraded' : 'rejected');
    });
  }

  protected reply(exception: RateLimitExceededException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<unknown>();
    const { httpAdapter } = this.adapterHost;
    if (httpAdapter.isHeadersSent(response)) {
      httpAdapter.end(response);
      return;
    }
    // Headers set earlier in this request described the guard's rules, which admitted it.
    removeRateLimitHeaders(response);
    const outcomes = exception.outcomes;
    const headers = outcomes.length > 0 ? rateLimitHeaders(this.settings.headers, outcomes, false).filter(([name]) => name !== 'Retry-After') : [];
    // The thrower's wait, which the body's retryAfter reports too.
    headers.push(['Retry-After', String(Math.ceil(Math.max(0, exception.retryAfterMs) / 1000))]);
    setHeaders(response, headers);
    httpAdapter.reply(response, exception.getResponse(), exception.getStatus());
  }
}

/** Removes the rate-limit headers of an Express response or a Fastify reply. */
function removeRateLimitHeaders(response: unknown): void {
  const res = response as { getHeaderNames?(): string[]; getHeaders?(): Record<string, unknown>; removeHeader?(name: string): unknown };
  if (typeof res?.removeHeader !== 'function') return;
  const names = typeof res.getHeaderNames === 'function' ? res.getHeaderNames() : Object.keys(res.getHeaders?.() ?? {});
  for (const name of names) if (isRateLimitHeader(name)) res.removeHeader(name);
}
