import { Catch, Inject, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { RateLimitMetrics } from '../interfaces/metrics.interface.js';
import { RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS } from '../interfaces/rate-limit.constants.js';
import { RateLimitExceededException } from './rate-limit.exception.js';
import { countRefusals, setRefusalHeaders } from './rate-limit-refusal.response.js';

/**
 * Answers a `RateLimitExceededException` over HTTP (Express and Fastify) with its body, `Retry-After` and the
 * rate-limit headers of its rules, and counts a refusal no metric has counted yet. Not registered by the module
 * (its `RateLimitInterceptor` covers 429s thrown by handlers and services, and the guard sets its own):
 * register it (`APP_FILTER`) when your own guards throw the exception, or extend it in a filter of your own.
 */
@Catch(RateLimitExceededException)
export class RateLimitExceptionFilter implements ExceptionFilter<RateLimitExceededException> {
  constructor(
    @Inject(RATE_LIMIT_SETTINGS) protected readonly settings: RateLimitSettings,
    protected readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(RATE_LIMIT_METRICS) protected readonly metrics?: RateLimitMetrics,
  ) {}

  catch(exception: RateLimitExceededException, host: ArgumentsHost): unknown {
    countRefusals(exception, this.metrics);
    const type = host.getType<string>();
    if (type === 'http') return this.reply(exception, host);
    // WebSocket gateways: what Nest does without this filter. Its package exists whenever a gateway does.
    if (type === 'ws') return import('@nestjs/websockets').then(({ BaseWsExceptionFilter }) => new BaseWsExceptionFilter().catch(exception, host));
    // GraphQL and the rest: rethrown, as Nest's own filter for them does, so the resolver's error is unchanged.
    throw exception;
  }

  protected reply(exception: RateLimitExceededException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<unknown>();
    const { httpAdapter } = this.adapterHost;
    if (httpAdapter.isHeadersSent(response)) {
      httpAdapter.end(response);
      return;
    }
    setRefusalHeaders(exception, response, this.settings);
    httpAdapter.reply(response, exception.getResponse(), exception.getStatus());
  }
}
