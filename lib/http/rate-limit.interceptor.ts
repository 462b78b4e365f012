import { Inject, Injectable, Optional, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import type { RateLimitSettings } from '../config/module-options.validator.js';
import type { RateLimitMetrics } from '../observability/rate-limit.metrics.js';
import { RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS } from '../rate-limit.constants.js';
import { RateLimitExceededException } from '../rate-limit.exception.js';
import { countRefusals, setRefusalHeaders } from './rate-limit-refusal.response.js';
import { holdingLeases, takePendingLeases } from './handler-lease.binder.js';

/**
 * What the module does around every handler call, registered globally: one interceptor, because each global
 * interceptor costs every request of the app a layer of Observables (about 2 µs on Express), rate-limited or not.
 * - A 429 that business code throws (`enforce`, or `RateLimitExceededException` after a `peek`) gets its
 *   `Retry-After` and the rate-limit headers of the refusing rules, and a refusal no metric has counted is counted;
 *   the exception then goes on to whatever filter the app has. An interceptor rather than a filter: an app's own
 *   catch-all filter keeps seeing every 429, as it did. The guard's own 429 sets its headers itself; a 429 thrown
 *   in another guard (which runs before interceptors) needs `RateLimitExceptionFilter`.
 * - The leases of concurrency rules of a call with no HTTP response to wait for (a WebSocket message, a GraphQL
 *   resolver without one, another transport) are taken here, once every guard admitted the call (the guard
 *   decided its rate rules), and released when the handler completes, fails or is unsubscribed; a lease not free
 *   refuses the call as the guard would have (http/handler-lease.binder.ts). Over HTTP the guard takes them and
 *   the response's end releases them (http/request-lease.binder.ts).
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  private readonly onError = (context: ExecutionContext) => (error: unknown) => {
    if (error instanceof RateLimitExceededException) {
      countRefusals(error, this.metrics);
      if (context.getType() === 'http') setRefusalHeaders(error, context.switchToHttp().getResponse(), this.settings);
    }
    return throwError(() => error);
  };

  constructor(
    @Inject(RATE_LIMIT_SETTINGS) private readonly settings: RateLimitSettings,
    @Optional() @Inject(RATE_LIMIT_METRICS) private readonly metrics?: RateLimitMetrics,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handled = next.handle().pipe(catchError(this.onError(context)));
    const leases = takePendingLeases(context);
    return leases ? holdingLeases(leases, context, handled) : handled;
  }
}
