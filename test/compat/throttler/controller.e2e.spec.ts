import type { INestApplication } from '@nestjs/common';
import { APP_GUARD, type AbstractHttpAdapter } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { RATE_LIMIT_MODULE_OPTIONS, RateLimitGuard } from '../../../lib/index.js';
import type { ManualClock } from '../../support/manual.clock.js';
import { ControllerModule } from './app/controllers/controller.module.js';
import { ThrottleTestController } from './app/controllers/throttle-test.controller.js';
import { ADAPTERS, listen, STORES, useCompatSetup } from './utility/compat-setup.js';
import { httPromise } from './utility/httpromise.js';

/**
 * @nestjs/throttler's test/controller.e2e-spec.ts, on this module: the same scenarios and assertions, its module
 * setup translated (see ./app), its sleeps replaced by moving the clock. Two assertions differ by design:
 * - the 429's body: ours is `{ statusCode, message: 'Too Many Requests', retryAfter }`, where throttler's message is
 *   'ThrottlerException: Too Many Requests' (the `errorMessage` option gives that text back, if a client matches it);
 * - Retry-After after a block is the block's remaining time, as throttler's, because the fixture's rules take
 *   `afterLockout: 'restart'` (the documented option for throttler's block semantics).
 */
const compat = useCompatSetup();

describe.each(ADAPTERS)('$adapterName Throttler', ({ adapter }: { adapter: () => AbstractHttpAdapter }) => {
  describe.each(STORES)('on the %s store', (kind) => {
    let app: INestApplication;
    let clock: ManualClock;
    const setTimeout = async (ms: number) => clock.advance(ms);

    beforeAll(async () => {
      const { setup, clock: appClock } = compat(kind);
      clock = appClock;
      const moduleFixture: TestingModule = await Test.createTestingModule({
        imports: [ControllerModule.register(setup)],
        controllers: [ThrottleTestController],
        providers: [
          {
            provide: APP_GUARD,
            useClass: RateLimitGuard,
          },
        ],
      }).compile();

      app = moduleFixture.createNestApplication(adapter(), { logger: false });
      await app.listen(0);
    });

    afterAll(async () => {
      await app?.close();
    });

    describe('controllers', () => {
      let appUrl: string;
      beforeAll(async () => {
        appUrl = await app.getUrl();
      });

      /**
       * Tests for setting `@Throttle()` at the method level and for ignore routes
       */
      describe('AppController', () => {
        it('GET /ignored', async () => {
          const response = await httPromise(appUrl + '/ignored');
          expect(response.data).toEqual({ ignored: true });
          expect(response.headers).not.toMatchObject({
            'x-ratelimit-limit': '2',
            'x-ratelimit-remaining': '1',
            'x-ratelimit-reset': /^\d+$/,
          });
        });
        it('GET /ignore-user-agents', async () => {
          const response = await httPromise(appUrl + '/ignore-user-agents', 'GET', {
            'user-agent': 'throttler-test/0.0.0',
          });
          expect(response.data).toEqual({ ignored: true });
          expect(response.headers).not.toMatchObject({
            'x-ratelimit-limit': '2',
            'x-ratelimit-remaining': '1',
            'x-ratelimit-reset': /^\d+$/,
          });
        });
        it('GET /', async () => {
          const response = await httPromise(appUrl + '/');
          expect(response.data).toEqual({ success: true });
          expect(response.headers).toMatchObject({
            'x-ratelimit-limit': '2',
            'x-ratelimit-remaining': '1',
            'x-ratelimit-reset': /^\d+$/,
          });
        });
      });
      /**
       * Tests for setting `@Throttle()` at the class level and overriding at the method level
       */
      describe('LimitController', () => {
        it.each`
          method   | url          | limit | blockDuration
          ${'GET'} | ${''}        | ${2}  | ${5000}
          ${'GET'} | ${'/higher'} | ${5}  | ${15000}
        `('$method $url', async ({ method, url, limit, blockDuration }: { method: 'GET'; url: string; limit: number; blockDuration: number }) => {
          for (let i = 0; i < limit; i++) {
            const response = await httPromise(appUrl + '/limit' + url, method);
            expect(response.data).toEqual({ success: true });
            expect(response.headers).toMatchObject({
              'x-ratelimit-limit': limit.toString(),
              'x-ratelimit-remaining': (limit - (i + 1)).toString(),
              'x-ratelimit-reset': /^\d+$/,
            });
          }
          const errRes = await httPromise(appUrl + '/limit' + url, method);
          // throttler: { statusCode: 429, message: /ThrottlerException/ }
          expect(errRes.data).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: blockDuration / 1000 });
          expect(errRes.headers).toMatchObject({
            'retry-after': /^\d+$/,
          });
          // The block's own length, as throttler's timeToBlockExpire (the window's 10 s without afterLockout: 'restart').
          expect(errRes.headers['retry-after']).toBe(String(blockDuration / 1000));
          expect(errRes.status).toBe(429);
          await setTimeout(blockDuration);
          const response = await httPromise(appUrl + '/limit' + url, method);
          expect(response.data).toEqual({ success: true });
          expect(response.headers).toMatchObject({
            'x-ratelimit-limit': limit.toString(),
            'x-ratelimit-remaining': (limit - 1).toString(),
            'x-ratelimit-reset': /^\d+$/,
          });
        });
      });
      /** Not in throttler's suite: what the LimitController's rule does without afterLockout: 'restart'. */
      describe('LimitController under our default (afterLockout: resume)', () => {
        it('a 5 s block on 2 per 10 s says Retry-After: 10 and refuses again after 5 s', async () => {
          for (let i = 0; i < 2; i++) expect((await httPromise(appUrl + '/limit/resume')).status).toBe(200);
          const errRes = await httPromise(appUrl + '/limit/resume');
          expect(errRes.status).toBe(429);
          expect(errRes.headers['retry-after']).toBe('10');
          await setTimeout(5000);
          const again = await httPromise(appUrl + '/limit/resume');
          expect(again.status).toBe(429);
          expect(again.headers['retry-after']).toBe('5');
          await setTimeout(5000);
          expect((await httPromise(appUrl + '/limit/resume')).status).toBe(200);
        });
      });
      /**
       * Tests for setting throttle values at the `forRoot` level
       */
      describe('DefaultController', () => {
        it('GET /default', async () => {
          const limit = 5;
          const blockDuration = 20000; // 20 second
          for (let i = 0; i < limit; i++) {
            const response = await httPromise(appUrl + '/default');
            expect(response.data).toEqual({ success: true });
            expect(response.headers).toMatchObject({
              'x-ratelimit-limit': limit.toString(),
              'x-ratelimit-remaining': (limit - (i + 1)).toString(),
              'x-ratelimit-reset': /^\d+$/,
            });
          }
          const errRes = await httPromise(appUrl + '/default');
          // throttler: { statusCode: 429, message: /ThrottlerException/ }
          expect(errRes.data).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 20 });
          expect(errRes.headers).toMatchObject({
            'retry-after': /^\d+$/,
          });
          expect(errRes.status).toBe(429);
          await setTimeout(blockDuration);
          const response = await httPromise(appUrl + '/default');
          expect(response.data).toEqual({ success: true });
          expect(response.headers).toMatchObject({
            'x-ratelimit-limit': limit.toString(),
            'x-ratelimit-remaining': (limit - 1).toString(),
            'x-ratelimit-reset': /^\d+$/,
          });
        });
      });

      describe('ThrottlerTestController', () => {
        it('GET /test/throttle', async () => {
          const makeRequest = async () => httPromise(appUrl + '/test/throttle', 'POST', {}, {});
          const res1 = await makeRequest();
          expect(res1.status).toBe(201);
          await setTimeout(1000);
          const res2 = await makeRequest();
          expect(res2.status).toBe(201);
          const res3 = await makeRequest();
          expect(res3.status).toBe(429);
          const res4 = await makeRequest();
          expect(res4.status).toBe(429);
        });
      });
    });
  });
});

describe('SkipIf suite', () => {
  const { setup } = compat('memory');

  it('should skip throttling if skipIf returns true', async () => {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [ControllerModule.register(setup)],
      providers: [
        {
          provide: APP_GUARD,
          useClass: RateLimitGuard,
        },
      ],
    })
      // throttler: .overrideProvider(THROTTLER_OPTIONS).useValue([{ skipIf: () => true, limit: 5 }])
      .overrideProvider(RATE_LIMIT_MODULE_OPTIONS)
      .useValue({
        ...setup,
        headers: 'per-rule',
        defaultRule: {
          skipIf: () => true,
          limit: 5,
          window: '60s',
        },
      })
      .compile();

    const app = moduleFixture.createNestApplication({ logger: false });
    try {
      const appUrl = await listen(app);
      for (let i = 0; i < 15; i++) {
        const response = await httPromise(appUrl + '/');
        expect(response.status).toBe(200);
        expect(response.data).toEqual({ success: true });
        expect(response.headers).not.toMatchObject({
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '4',
          'x-ratelimit-reset': /^\d+$/,
        });
      }
    } finally {
      await app.close();
    }
  });
});
