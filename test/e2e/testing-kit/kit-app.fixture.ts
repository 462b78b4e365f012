import { Controller, Get, HttpException, Injectable, Module, Param, Post, type INestApplication, type DynamicModule } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { RateLimit, RateLimitModule, RateLimitService, SkipRateLimit, type RateLimitModuleOptions } from 'nestjs-redis-rate-limit';
import { RateLimitTesting, type RateLimitTestingOptions } from 'nestjs-redis-rate-limit/testing';
import type { Platform } from '../support/http-app.js';

/** Business code with a named rule, as an app's service would use it. */
@Injectable()
export class LoginAttempts {
  constructor(private readonly limits: RateLimitService) {}

  async attempt(user: string): Promise<void> {
    await this.limits.enforce(user, 'login');
  }
}

@Controller()
export class KitController {
  constructor(private readonly attempts: LoginAttempts) {}

  /** The default rule (2 a minute per IP), from the global guard. */
  @Get('items')
  items() {
    return ['a', 'b'];
  }

  /** The named rule `login` (2 a minute per user), from business code. */
  @SkipRateLimit()
  @Post('login/:user')
  async login(@Param('user') user: string) {
    await this.attempts.attempt(user);
    return { ok: true };
  }

  /** An inline rule with a lockout, from a decorator. */
  @RateLimit({ name: 'export', limit: 1, window: '1m', lockout: '10m' })
  @Get('export')
  export() {
    return { ok: true };
  }

  /** A 429 that is not the module's: no Retry-After, no rate-limit fields. */
  @SkipRateLimit()
  @Get('home-made-429')
  homeMade() {
    throw new HttpException('Too Many Requests', 429);
  }
}

/** The app of the kit's tests: a default rule, a named rule, an inline rule, the global guard; `overrides` over them. */
export function kitModule(options: RateLimitModuleOptions): DynamicModule {
  @Module({ controllers: [KitController], providers: [LoginAttempts] })
  class KitAppModule {}
  return {
    module: KitAppModule,
    imports: [
      RateLimitModule.forRoot({
        defaultRule: { limit: 2, window: '1m' },
        rules: { login: { limit: 2, window: '1m', algorithm: 'sliding-log' } },
        globalGuard: true,
        // The headers of a refusal by business code (enforce) come from the interceptor.
        globalInterceptor: true,
        ...options,
      }),
    ],
  };
}

/** Compiles the module with the testing kit (or without it, with `install: false`) and serves it on a free port. */
export async function startKitApp(
  platform: Platform,
  module: DynamicModule,
  kit: RateLimitTestingOptions | false = {},
): Promise<INestApplication> {
  const builder = Test.createTestingModule({ imports: [module] });
  const moduleRef = await (kit === false ? builder : RateLimitTesting.install(builder, kit)).compile();
  const app = moduleRef.createNestApplication(platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(), { logger: false });
  await app.init();
  if (platform === 'fastify') await app.getHttpAdapter().getInstance().ready();
  await app.listen(0, '127.0.0.1');
  return app;
}
