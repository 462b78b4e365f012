import { Inject, Injectable, Optional, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { catchError, throwError, type Observable } from 'rxjs';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { RateLimitMetrics } from '../interfaces/metrics.interface.js';
import { RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS } from '../interfaces/rate-limit.constants.js';
import { RateLimitExceededException } from './rate-limit.exception.js';
import { countRefusals, setRefusalHeaders } from './rate-limit-refusal.response.js';
import { holdingLeases, takePendingLeases } from './handler-lease.binder.js';

/**
 * What the module does around a handler call, where the app registers it: for every handler with
 * `globalInterceptor: true`, or with `@UseInterceptors(RateLimitInterceptor)` on a controller, gateway or handler.
 * Not registered by default: Nest runs a layer of Observables around every handler that has any interceptor, which
 * costs each request of the app 7-12 µs (the HTTP bench), rate-limited or not.
 * - A 429 that business code throws (`enforce`, or `RateLimitExceededException` after a `peek`) gets its
 *   `Retry-After` and the rate-limit headers of the refusing rules, and a refusal no metric has counted is counted;
 *   the exception then goes on to whatever filter the app has. An interceptor rather than a filter: an app's own
 *   catch-all filter keeps seeing every 429, as it did. The guard's own 429 sets its headers itself; a 429 thrown
 *   in another guard (which runs before interceptors) needs `RateLimitExceptionFilter`.
 * - The leases of concurrency rules of a call with no HTTP response to wait for (a WebSocket message, a GraphQL
 *   resolver without one, another transport) are taken here, once every guard admitted the call (the guard
 *   decided its rate rules), and released when the handler completes, fails or is unsubscribed; a lease not free
 *   refuses the call as the guard would have (http/handler-lease.binder.ts). Over HTTP the guard takes them and
 *   the response's end releases them (http/request-lease.binder.ts). Without this interceptor on such a call, the
 *   guard refuses it rather than leave its concurrency rules unenforced (see `interceptorRunsFor`).
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

/** Nest's metadata key of `@UseInterceptors` (INTERCEPTORS_METADATA, the same since Nest 5). */
const INTERCEPTORS_METADATA = '__interceptors__';

/**
 * Whether RateLimitInterceptor runs for a class's handler: registered by `globalInterceptor`, or named in
 * `@UseInterceptors` of the handler or its class (as the class or an instance). An interceptor the app registers
 * itself as `APP_INTERCEPTOR` or with `useGlobalInterceptors` is not seen here.
 */
export function interceptorRunsFor(reflector: Reflector, cls: Function, handler: Function, global: boolean): boolean {
  return global || namesInterceptor(reflector, handler) || namesInterceptor(reflector, cls);
}

function namesInterceptor(reflector: Reflector, target: Function): boolean {
  const listed = reflector.get<unknown[] | undefined>(INTERCEPTORS_METADATA, target);
  return listed?.some((entry) => entry === RateLimitInterceptor || entry instanceof RateLimitInterceptor) ?? false;
}
