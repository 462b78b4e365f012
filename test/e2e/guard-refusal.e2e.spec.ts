import type { ExecutionContext } from '@nestjs/common';
import type { Decision } from '../../lib/index.js';
import { PLATFORMS } from './support/http-app.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { RefusalController } from './fixtures/refusal/refusal.controller.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('refused requests on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startRefusal = (options: { errorMessage?: string | ((context: ExecutionContext, decision: Decision) => string) } = {}) =>
      start({ globalGuard: true, ...options }, { controllers: [RefusalController] });
    /** One admitted request, then the clock moves `elapsedMs`, then a refused one. */
    async function refusedAfter(app: GuardApp, elapsedMs = 0, path = '/refusal/limited') {
      await app.http().get(path).expect(200);
      app.clock.advance(elapsedMs);
      return app.http().get(path).expect(429);
    }

    it('answers 429 with statusCode, message and retryAfter in seconds', async () => {
      const res = await refusedAfter(await startRefusal());
      expect(res.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 60 });
    });

    it('rounds retryAfter up to the next whole second', async () => {
      const res = await refusedAfter(await startRefusal(), 58_500);
      expect(res.body.retryAfter).toBe(2);
    });

    it('never rounds a wait of less than a second down to zero', async () => {
      const res = await refusedAfter(await startRefusal(), 59_999);
      expect(res.body.retryAfter).toBe(1);
    });

    it('sends a Retry-After header with the same number of seconds', async () => {
      const res = await refusedAfter(await startRefusal(), 58_500);
      expect(res.headers['retry-after']).toBe('2');
    });

    it('admits the same request once retryAfter has passed', async () => {
      const app = await startRefusal();
      const res = await refusedAfter(app, 30_000);
      app.clock.advance(res.body.retryAfter * 1000);
      await app.http().get('/refusal/limited').expect(200);
    });

    it('uses the errorMessage string as the message', async () => {
      const res = await refusedAfter(await startRefusal({ errorMessage: 'Slow down' }));
      expect(res.body).toEqual({ statusCode: 429, message: 'Slow down', retryAfter: 60 });
    });

    it('builds the message with the errorMessage function from the context and the decision', async () => {
      const errorMessage = (context: ExecutionContext, decision: Decision) =>
        `${context.getClass().name}.${context.getHandler().name}: wait ${Math.ceil(decision.retryAfterMs / 1000)} s`;
      const res = await refusedAfter(await startRefusal({ errorMessage }), 15_000);
      expect(res.body).toEqual({ statusCode: 429, message: 'RefusalController.limited: wait 45 s', retryAfter: 45 });
    });

    it('gives the errorMessage function the decision of the rule that refused', async () => {
      const res = await refusedAfter(await startRefusal({ errorMessage: (_context, decision) => `limit ${decision.limit}` }), 0, '/refusal/stacked');
      expect(res.body).toEqual({ statusCode: 429, message: 'limit 1', retryAfter: 10 });
    });
  });
});
