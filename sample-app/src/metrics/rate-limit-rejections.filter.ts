import { Catch, Inject, type ArgumentsHost } from '@nestjs/common';
import { RateLimitExceededException, RateLimitExceptionFilter } from 'nestjs-redis-rate-limit';
import { MetricsRegistry } from './metrics.registry.js';

/**
 * Sees every 429, whether the guard refused the request or business code did (failed logins, SMS codes): a
 * guard throws before any interceptor runs, so a filter is the one place both pass through. It extends the
 * library's filter, which answers the 429 with Retry-After and the rate-limit headers of the refusing rules.
 */
@Catch(RateLimitExceededException)
export class RateLimitRejectionsFilter extends RateLimitExceptionFilter {
  // A property, so that the library's constructor and its injections stay as they are.
  @Inject(MetricsRegistry) private readonly registry!: MetricsRegistry;

  override catch(exception: RateLimitExceededException, host: ArgumentsHost): unknown {
    if (host.getType() === 'http') {
      const request = host.switchToHttp().getRequest<{ route?: { path?: unknown } }>();
      const route = typeof request.route?.path === 'string' ? request.route.path : 'unmatched';
      this.registry.rateLimitRejections.inc({ route });
    }
    return super.catch(exception, host);
  }
}
