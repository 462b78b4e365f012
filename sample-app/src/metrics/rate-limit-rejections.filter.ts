import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RateLimitExceededException } from 'nestjs-redis-rate-limit';
import { MetricsRegistry } from './metrics.registry.js';

/**
 * Sees every 429, whether the guard refused the request or business code did (failed logins, SMS codes): a
 * guard throws before any interceptor runs, so a filter is the one place both pass through.
 */
@Catch(RateLimitExceededException)
export class RateLimitRejectionsFilter implements ExceptionFilter<RateLimitExceededException> {
  constructor(
    private readonly metrics: MetricsRegistry,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  catch(exception: RateLimitExceededException, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<{ route?: { path?: unknown } }>();
    const response = http.getResponse<unknown>();
    const { httpAdapter } = this.adapterHost;
    const route = typeof request.route?.path === 'string' ? request.route.path : 'unmatched';
    this.metrics.rateLimitRejections.inc({ route });
    // The guard sets Retry-After itself; an exception thrown by business code does not carry it.
    if (!httpAdapter.getHeader(response, 'Retry-After') && exception.retryAfterMs > 0) {
      httpAdapter.setHeader(response, 'Retry-After', String(Math.ceil(exception.retryAfterMs / 1000)));
    }
    httpAdapter.reply(response, exception.getResponse(), exception.getStatus());
  }
}
