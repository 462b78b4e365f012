import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimitModule, type RateLimitHeadersMode } from '../../lib/index.js';
import { HeadersController } from './fixtures/headers/headers.controller.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

const RATE_LIMIT_HEADERS = ['ratelimit', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const rateLimitHeadersOf = (headers: Record<string, unknown>) => RATE_LIMIT_HEADERS.filter((name) => headers[name] !== undefined);

const storeOption = useStoreOptions();

describe.each(PLATFORMS)('rate-limit headers on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication | undefined;
    let clock: ManualClock;

    async function start(headers?: RateLimitHeadersMode) {
      clock = new ManualClock();
      app = await startApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            ...storeOption(kind),
            keyPrefix: uniquePrefix('hdr'),
            clock: clock.now,
            ...(headers === undefined ? {} : { headers }),
            defaultRule: { limit: 3, window: '1m', algorithm: 'sliding-log' },
            rules: { burst: { limit: 2, window: '10s', algorithm: 'sliding-log' } },
            globalGuard: true,
          }),
        ],
        controllers: [HeadersController],
      });
      return app.getHttpServer();
    }

    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('describes the one rule of a route in draft fields by default', async () => {
      const server = await start();
      const first = await request(server).get('/one').expect(200);
      expect(first.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
      expect(first.headers['ratelimit']).toBe('"default";r=2;t=60');
      clock.advance(15_000);
      const second = await request(server).get('/one').expect(200);
      expect(second.headers['ratelimit']).toBe('"default";r=1;t=60');
      expect(second.headers['x-ratelimit-limit']).toBeUndefined();
    });

    it('answers 429 with a Retry-After equal to the retryAfter of the body', async () => {
      const server = await start('draft');
      await request(server).get('/one').expect(200);
      clock.advance(15_000);
      await request(server).get('/one').expect(200);
      clock.advance(15_000);
      await request(server).get('/one').expect(200);
      clock.advance(10_000);
      const refused = await request(server).get('/one').expect(429);
      // The oldest of the three requests (40 s ago) leaves the window in 20 s; the newest in 50 s.
      expect(refused.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 20 });
      expect(refused.headers['retry-after']).toBe('20');
      expect(refused.headers['ratelimit']).toBe('"default";r=0;t=50');
      expect(refused.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
    });

    it('lists every stacked rule in the draft fields, in the order default, class, handler', async () => {
      const server = await start('draft');
      const first = await request(server).get('/stacked').expect(200);
      expect(first.headers['ratelimit-policy']).toBe('"default";q=3;w=60, "burst";q=2;w=10, "hourly";q=5;w=3600');
      expect(first.headers['ratelimit']).toBe('"default";r=2;t=60, "burst";r=1;t=10, "hourly";r=4;t=3600');
      clock.advance(4_000);
      const second = await request(server).get('/stacked').expect(200);
      expect(second.headers['ratelimit']).toBe('"default";r=1;t=60, "burst";r=0;t=10, "hourly";r=3;t=3600');
    });

    it('refuses a stacked route when one rule refuses, with the wait of that rule', async () => {
      const server = await start('draft');
      await request(server).get('/stacked').expect(200);
      clock.advance(4_000);
      await request(server).get('/stacked').expect(200);
      clock.advance(2_000);
      const refused = await request(server).get('/stacked').expect(429);
      // "burst" is full until its first request, 6 s ago, leaves its 10 s window.
      expect(refused.body.retryAfter).toBe(4);
      expect(refused.headers['retry-after']).toBe('4');
      expect(refused.headers['ratelimit-policy']).toBe('"default";q=3;w=60, "burst";q=2;w=10, "hourly";q=5;w=3600');
      expect(refused.headers['ratelimit']).toContain('"burst";r=0;t=8');
    });

    it('gives the quota per window of a GCRA rule, not its burst, as q of the policy', async () => {
      const server = await start('draft');
      const res = await request(server).get('/gcra').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"gcra";q=12;w=60');
      expect(res.headers['ratelimit']).toBe('"gcra";r=1;t=5');
    });

    it('describes the rule with the least left in the legacy fields', async () => {
      const server = await start('legacy');
      const first = await request(server).get('/stacked').expect(200);
      expect(first.headers['x-ratelimit-limit']).toBe('2');
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
      expect(first.headers['x-ratelimit-reset']).toBe('10');
      expect(first.headers['ratelimit']).toBeUndefined();
      expect(first.headers['ratelimit-policy']).toBeUndefined();
    });

    it('describes the refusing rule with the longest wait in the legacy fields on a 429', async () => {
      const server = await start('legacy');
      await request(server).get('/stacked').expect(200); // T
      clock.advance(5_000);
      await request(server).get('/stacked').expect(200); // T+5: "burst" full
      clock.advance(6_000);
      await request(server).get('/stacked').expect(200); // T+11: "default" full, "burst" full again
      clock.advance(1_000);
      const refused = await request(server).get('/stacked').expect(429); // T+12
      // "burst" would wait 3 s, "default" 48 s: the legacy fields describe "default".
      expect(refused.headers['x-ratelimit-limit']).toBe('3');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['x-ratelimit-reset']).toBe('59');
      expect(refused.headers['retry-after']).toBe('48');
      expect(refused.body.retryAfter).toBe(48);
    });

    it('sends the draft and the legacy fields in "both" mode', async () => {
      const server = await start('both');
      const res = await request(server).get('/one').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
      expect(res.headers['ratelimit']).toBe('"default";r=2;t=60');
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe('2');
      expect(res.headers['x-ratelimit-reset']).toBe('60');
    });

    it('sends no rate-limit fields on allowed responses when headers are off', async () => {
      const server = await start(false);
      const res = await request(server).get('/stacked').expect(200);
      expect(rateLimitHeadersOf(res.headers)).toEqual([]);
      expect(res.headers['retry-after']).toBeUndefined();
    });

    it('still sends Retry-After, and only it, on a 429 when headers are off', async () => {
      const server = await start(false);
      for (let i = 0; i < 3; i++) {
        await request(server).get('/one').expect(200);
        clock.advance(10_000);
      }
      const refused = await request(server).get('/one').expect(429);
      expect(rateLimitHeadersOf(refused.headers)).toEqual([]);
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 30 });
    });
  });
});
