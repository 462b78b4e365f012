import { Controller, Get, Param } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { RateLimit, RateLimitExceptionFilter, RateLimitService, type RateLimitModuleOptions } from '../../lib/index.js';
import { PLATFORMS } from './support/http-app.js';
import { statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';

@Controller('shadow-refusals')
class ShadowRefusalsController {
  constructor(private readonly rateLimit: RateLimitService) {}

  /** A rule in force (3 a minute) stacked with one tried out in shadow (5 a minute). */
  @Get('stacked')
  @RateLimit({ name: 'inforce', limit: 3, window: '1m' })
  @RateLimit({ name: 'trial', limit: 5, window: '1m', mode: 'shadow' })
  stacked() {
    return { ok: true };
  }

  /** In force 3 per 10 seconds, in shadow 5 a minute: the shadow rule runs out while the rule in force still admits. */
  @Get('windows')
  @RateLimit({ name: 'inforce', limit: 3, window: '10s', algorithm: 'sliding-log' })
  @RateLimit({ name: 'trial', limit: 5, window: '1m', algorithm: 'sliding-log', mode: 'shadow' })
  windows() {
    return { ok: true };
  }

  /** The same pair, enforced by business code: `reports` in force, `reports-trial` in shadow. */
  @Get('enforced/:user')
  async enforced(@Param('user') user: string) {
    await this.rateLimit.enforce(`user:${user}`, ['reports', 'reports-trial']);
    return { ok: true };
  }
}

const rules: RateLimitModuleOptions['rules'] = {
  reports: { limit: 3, window: '1m' },
  'reports-trial': { limit: 5, window: '1m', mode: 'shadow' },
};

const redis = useRedisServer();

describe.each(PLATFORMS)('shadow rules in the headers of a 429 on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    /** The module as the README recommends it, with RateLimitExceptionFilter registered. */
    const startApp = (options: Partial<RateLimitModuleOptions> = {}) =>
      start(
        { globalGuard: true, globalInterceptor: true, rules, ...options },
        { controllers: [ShadowRefusalsController], providers: [{ provide: APP_FILTER, useClass: RateLimitExceptionFilter }] },
      );

    it('leaves a shadow rule out of the headers of the guard\'s 429 answered by RateLimitExceptionFilter', async () => {
      const { http } = await startApp();
      const send = () => http().get('/shadow-refusals/stacked');
      expect(await statuses(3, send)).toEqual([200, 200, 200]);
      const res = await send().expect(429);
      expect(res.headers['ratelimit-policy']).toBe('"inforce";q=3;w=60');
      expect(res.headers['ratelimit']).toMatch(/^"inforce";r=0;t=\d+$/);
    });

    it('leaves a shadow rule out of the per-rule headers of the guard\'s 429 answered by RateLimitExceptionFilter', async () => {
      const { http } = await startApp({ headers: 'per-rule' });
      const send = () => http().get('/shadow-refusals/stacked');
      await statuses(3, send);
      const res = await send().expect(429);
      expect(Object.keys(res.headers).filter((name) => name.endsWith('-trial'))).toEqual([]);
      expect(res.headers['x-ratelimit-remaining-inforce']).toBe('0');
    });

    it('leaves a shadow rule out of the headers of the 429 that enforce throws through RateLimitInterceptor', async () => {
      const { http } = await startApp();
      const send = () => http().get('/shadow-refusals/enforced/ann');
      expect(await statuses(3, send)).toEqual([200, 200, 200]);
      const res = await send().expect(429);
      expect(res.headers['ratelimit-policy']).toBe('"reports";q=3;w=60');
      expect(res.headers['ratelimit']).toMatch(/^"reports";r=0;t=\d+$/);
    });

    it('reports on the guard\'s 429s what a shadow rule holds, with shadowHeaders: true', async () => {
      const { http } = await startApp({ headers: 'per-rule', shadowHeaders: true });
      const send = () => http().get('/shadow-refusals/stacked');
      await statuses(3, send);
      // The three admitted requests charged the shadow rule too; the refused ones charge nothing anywhere.
      for (const res of [await send().expect(429), await send().expect(429)]) {
        expect(res.headers['x-ratelimit-limit-trial']).toBe('5');
        expect(res.headers['x-ratelimit-remaining-trial']).toBe('2');
        expect(Number(res.headers['x-ratelimit-reset-trial'])).toBeGreaterThan(0);
        expect(res.headers['retry-after-trial']).toBeUndefined();
      }
    });

    it('reports on the 429 enforce throws what a shadow rule holds, with shadowHeaders: true', async () => {
      const { http } = await startApp({ shadowHeaders: true });
      const send = () => http().get('/shadow-refusals/enforced/bob');
      await statuses(3, send);
      const res = await send().expect(429);
      expect(res.headers['ratelimit-policy']).toBe('"reports";q=3;w=60, "reports-trial";q=5;w=60');
      expect(res.headers['ratelimit']).toMatch(/^"reports";r=0;t=\d+, "reports-trial";r=2;t=[1-9]\d*$/);
    });

    it('keeps Retry-After the wait of the rule in force when the shadow rule, spent too, would make the client wait longer', async () => {
      const { http, clock } = await startApp({ headers: 'per-rule', shadowHeaders: true });
      const send = () => http().get('/shadow-refusals/windows');
      expect(await statuses(3, send)).toEqual([200, 200, 200]);
      clock.advance(11_000);
      // The shadow rule's 5 a minute run out on the second of these; its refusal admits all the same.
      expect(await statuses(3, send)).toEqual([200, 200, 200]);
      const res = await send().expect(429);
      expect(res.headers['retry-after']).toBe('10');
      expect(res.body.retryAfter).toBe(10);
      expect(res.headers['retry-after-trial']).toBeUndefined();
      expect(res.headers['x-ratelimit-remaining-trial']).toBe('0');
    });
  });
});
