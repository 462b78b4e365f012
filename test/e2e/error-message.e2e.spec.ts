import { Controller, Post, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimit, RateLimitModule, SkipRateLimit, type RateLimitErrorDetail } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

@Controller()
@SkipRateLimit('default')
class AttemptsController {
  /** 5 attempts a minute, and 20 an hour. */
  @Post('attempt')
  @RateLimit({ name: 'attempts', limit: 5, window: '1m', algorithm: 'sliding-log' })
  @RateLimit({ name: 'hourly', limit: 20, window: '1h', algorithm: 'sliding-log' })
  attempt() {
    return { ok: true };
  }
}

const storeOption = useStoreOptions();

describe.each(PLATFORMS)('errorMessage(context, detail) on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication | undefined;
    let seen: RateLimitErrorDetail[];

    async function refusedAttempt(errorMessage: (detail: RateLimitErrorDetail) => string) {
      const clock = new ManualClock();
      seen = [];
      app = await startApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            ...storeOption(kind),
            keyPrefix: uniquePrefix('errmsg'),
            clock: clock.now,
            errorMessage: (_context, detail) => {
              seen.push(detail);
              return errorMessage(detail);
            },
            globalGuard: true,
          }),
        ],
        controllers: [AttemptsController],
      });
      const server = app.getHttpServer();
      for (let i = 0; i < 5; i++) {
        await request(server).post('/attempt').expect(201);
        clock.advance(1_000);
      }
      return request(server).post('/attempt').expect(429);
    }

    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('can say "5 of 5 attempts used" from the used count and the limit', async () => {
      const refused = await refusedAttempt((d) => `${d.used} of ${d.limit} attempts used`);
      expect(refused.body).toEqual({ statusCode: 429, message: '5 of 5 attempts used', retryAfter: 55 });
    });

    it('names the refusing rule, not the one that would have admitted', async () => {
      const refused = await refusedAttempt((d) => `rule ${d.rule}`);
      expect(refused.body.message).toBe('rule attempts');
    });

    it('gives throttler\'s totalHits, counting the refused request, and the wait in ms beside the decision fields', async () => {
      await refusedAttempt(() => 'no');
      expect(seen).toEqual([expect.objectContaining({ rule: 'attempts', allowed: false, limit: 5, remaining: 0, used: 5, totalHits: 6, retryAfterMs: 55_000 })]);
    });
  });
});
