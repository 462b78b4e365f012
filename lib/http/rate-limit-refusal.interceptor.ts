import { Inject, Injectable, Optional, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import type { RateLimitSettings } from '../config/module-options.validator.js';
import type { RateLimitMetrics } from '../observability/rate-limit.metrics.js';
import { RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS } from '../rate-limit.constants.js';
import { RateLimitExceededException } from '../rate-limit.exception.js';
import { countRefusals, setRefusalHeaders } from './rate-limit-refusal.response.js';

/**
 * Gives a 429 that business code throws (`enforce`, or `RateLimitExceededException` after a `peek`) its
 * `Retry-After` and the rate-limit headers of the refusing rules, and counts a refusal no metric has counted,
 * then lets the exception go on to whatever filter the app has. Registered globally by the module. An
 * interceptor rather than a filter: an app's own catch-all filter keeps seeing every 429, as it did. The
 * guard's own 429 sets its headers itself; a 429 thrown in another guard (which runs before interceptors)
 * needs `RateLimitExceptionFilter`.
 */
@Injectable()
export class RateLimitRefusalInterceptor implements NestInterceptor {
  constructor(
    @Inject(RATE_LIMIT_SETTINGS) private readonly settings: RateLimitSettings,
    @Optional() @Inject(RATE_LIMIT_METRICS) private readonly metrics?: RateLimitMetrics,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (error instanceof RateLimitExceededException) {
          countRefusals(error, this.metrics);
          if (context.getType() === 'http') setRefusalHeaders(error, context.switchToHttp().getResponse(), this.settings);
        }
        return throwError(() => error);
      }),
    );
  }
}
