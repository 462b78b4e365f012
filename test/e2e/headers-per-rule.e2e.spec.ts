import { Controller, Get, Param, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimitModule, RateLimitService } from '../../lib/index.js';
import { HeadersController } from './fixtures/headers/headers.controller.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

/** Business code: 1 export a minute per user, under the default rule of the guard. */
@Controller()
class ExportController {
  constructor(private readonly rateLimit: RateLimitService) {}

  @Get('export/:user')
  async export(@Param('user') user: string) {
    await this.rateLimit.enforce(`user:${user}`, 'exports');
    return { ok: true };
  }
}

const sliding = (limit: number, window: string) => ({ limit, window, algorithm: 'sliding-log' as const });
const storeOption = useStoreOptions();

describe.each(PLATFORMS)('"per-rule" headers on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication | undefined;
    let clock: ManualClock;

    async function start() {
      clock = new ManualClock();
      app = await startApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            ...storeOption(kind),
            keyPrefix: uniquePrefix('perrule'),
            clock: clock.now,
            headers: 'per-rule',
            defaultRule: sliding(3, '1m'),
            rules: { burst: sliding(2, '10s'), exports: sliding(1, '1m') },
            globalGuard: true,
            globalInterceptor: true,
          }),
        ],
        controllers: [HeadersController, ExportController],
      });
      return app.getHttpServer();
    }

    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('names the default rule\'s fields without a suffix, as throttler does', async () => {
      const res = await request(await start()).get('/one').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe('2');
      expect(res.headers['x-ratelimit-reset']).toBe('60');
      expect(res.headers['ratelimit']).toBeUndefined();
    });

    it('gives every stacked rule its own X-RateLimit fields, suffixed with its name', async () => {
      const res = await request(await start()).get('/stacked').expect(200);
      expect(res.headers['x-ratelimit-remaining']).toBe('2');
      expect(res.headers['x-ratelimit-limit-burst']).toBe('2');
      expect(res.headers['x-ratelimit-remaining-burst']).toBe('1');
      expect(res.headers['x-ratelimit-reset-burst']).toBe('10');
      expect(res.headers['x-ratelimit-limit-hourly']).toBe('5');
      expect(res.headers['x-ratelimit-remaining-hourly']).toBe('4');
      expect(res.headers['x-ratelimit-reset-hourly']).toBe('3600');
    });

    it('sends Retry-After-<rule> for the refusing rule and Retry-After with the longest wait', async () => {
      const server = await start();
      await request(server).get('/stacked').expect(200);
      clock.advance(4_000);
      await request(server).get('/stacked').expect(200);
      clock.advance(2_000);
      const refused = await request(server).get('/stacked').expect(429);
      expect(refused.headers['retry-after-burst']).toBe('4');
      expect(refused.headers['retry-after']).toBe('4');
      expect(refused.headers['retry-after-hourly']).toBeUndefined();
      expect(refused.headers['x-ratelimit-remaining-burst']).toBe('0');
    });

    it('sends only Retry-After when the default rule refuses', async () => {
      const server = await start();
      for (let i = 0; i < 3; i++) {
        await request(server).get('/one').expect(200);
        clock.advance(10_000);
      }
      const refused = await request(server).get('/one').expect(429);
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(Object.keys(refused.headers).filter((name) => name.startsWith('retry-after-'))).toEqual([]);
    });

    it('answers an enforce refusal with the fields of its rule in place of the guard\'s', async () => {
      const server = await start();
      await request(server).get('/export/alice').expect(200);
      const refused = await request(server).get('/export/alice').expect(429);
      expect(refused.headers['x-ratelimit-limit-exports']).toBe('1');
      expect(refused.headers['x-ratelimit-remaining-exports']).toBe('0');
      expect(refused.headers['retry-after-exports']).toBe('60');
      expect(refused.headers['retry-after']).toBe('60');
      // The guard's default rule admitted the request: its fields describe nothing about this 429.
      expect(refused.headers['x-ratelimit-limit']).toBeUndefined();
    });
  });
});
