import { Controller, Get, Injectable, Module, type INestApplication, type MiddlewareConsumer, type NestMiddleware, type NestModule } from '@nestjs/common';
import { trace, type Attributes } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { RateLimit } from '../../../lib/index.js';
import type { TestTelemetry } from '../../support/open-telemetry.js';

/** The header the rules of these routes count per. */
export const CLIENT_HEADER = 'x-client';
const KEY = `header:${CLIENT_HEADER}`;

@Controller('otel')
export class TracedController {
  @Get('one')
  @RateLimit({ name: 'one', limit: 2, window: '1m', algorithm: 'fixed-window', key: KEY })
  one() {
    return { ok: true };
  }

  @Get('shadow')
  @RateLimit({ name: 'trial', limit: 1, window: '1m', algorithm: 'sliding-log', mode: 'shadow', key: KEY })
  shadow() {
    return { ok: true };
  }

  /** Two rules, all-or-nothing: `burst` refuses the second request, `sustained` would admit it. */
  @Get('stacked')
  @RateLimit({ name: 'burst', limit: 1, window: '1m', algorithm: 'token-bucket', key: KEY })
  @RateLimit({ name: 'sustained', limit: 100, window: '1h', algorithm: 'sliding-window', key: KEY })
  stacked() {
    return { ok: true };
  }
}

/**
 * Each request in an active span of the global tracer named by its x-span header, ended when the response is
 * sent: what HTTP instrumentation gives an app.
 */
@Injectable()
class SpanMiddleware implements NestMiddleware {
  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    trace.getTracer('test-http').startActiveSpan(String(req.headers['x-span']), (span) => {
      res.on('finish', () => span.end());
      next();
    });
  }
}

/** TracedController's routes, each request in a span of its own. */
@Module({ controllers: [TracedController], providers: [SpanMiddleware] })
export class TracedModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(SpanMiddleware).forRoutes(TracedController);
  }
}

let spans = 0;

/** GET `path` of `app` as `client`, in a span of its own; resolves to the status and the span's `ratelimit.*` attributes. */
export async function tracedGet(app: INestApplication, telemetry: TestTelemetry, path: string, client: string): Promise<{ status: number; attributes: Attributes }> {
  const name = `request-${++spans}`;
  const { status } = await request(app.getHttpServer()).get(path).set(CLIENT_HEADER, client).set('x-span', name);
  // The span ends on the response's 'finish', which the client may see a moment before.
  for (let i = 0; i < 500 && !telemetry.spans().some((s) => s.name === name); i++) await new Promise((r) => setTimeout(r, 10));
  return { status, attributes: telemetry.rateLimitAttributes(name) };
}

/** The `ratelimit.*` attributes of a one-rule decision. */
export const decided = (rule: string, algorithm: string, result: string, allowed: boolean, { shadow = false, degraded = false } = {}): Attributes => ({
  'ratelimit.rule': rule,
  'ratelimit.algorithm': algorithm,
  'ratelimit.result': result,
  'ratelimit.allowed': allowed,
  'ratelimit.degraded': degraded,
  'ratelimit.shadow': shadow,
});
