import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { finalize, type Observable } from 'rxjs';
import { takePendingRelease } from './request-lease.binder.js';

/**
 * Releases the leases the guard took for a handler call that has no HTTP response to wait for (a WebSocket
 * message, a GraphQL resolver without one, another transport) when the handler completes, fails or is
 * unsubscribed. Registered globally by the module; over HTTP the response's end releases instead.
 */
@Injectable()
export class LeaseReleaseInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const release = takePendingRelease(context);
    return release ? next.handle().pipe(finalize(release)) : next.handle();
  }
}
