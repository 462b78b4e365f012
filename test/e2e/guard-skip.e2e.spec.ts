import type { ExecutionContext } from '@nestjs/common';
import { PLATFORMS } from './support/http-app.js';
import { policyNames, statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import { SkipClassController, SkipClassDefaultController, SkipHandlerController } from './fixtures/skip/skip.controllers.js';

const redis = useRedisServer();
const controllers = [SkipHandlerController, SkipClassController, SkipClassDefaultController];
const isInternal = (context: ExecutionContext) => context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-internal'] === 'yes';

describe.each(PLATFORMS)('skipping rate limits on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const options = { globalGuard: true, defaultRule: { limit: 1, window: '1m' } };

    describe('@SkipRateLimit on a handler', () => {
      it('exempts a handler marked @SkipRateLimit() from every rule', async () => {
        const { http } = await start(options, { controllers });
        expect(await statuses(5, () => http().get('/skip-handler/all'))).toEqual([200, 200, 200, 200, 200]);
        const res = await http().get('/skip-handler/all');
        expect(res.headers['ratelimit-policy']).toBeUndefined();
      });

      it('still limits the other handlers of the same controller', async () => {
        const { http } = await start(options, { controllers });
        await statuses(3, () => http().get('/skip-handler/all'));
        expect(await statuses(2, () => http().get('/skip-handler/limited'))).toEqual([200, 429]);
      });

      it('drops only the module default with @SkipRateLimit("default"), keeping the handler\'s own named rule', async () => {
        const { http } = await start(options, { controllers });
        const first = await http().get('/skip-handler/default-only').expect(200);
        expect(policyNames(first)).toEqual(['own']);
        expect(await statuses(2, () => http().get('/skip-handler/default-only'))).toEqual([200, 429]);
      });

      it('keeps the handler\'s own unnamed rule under @SkipRateLimit("default") on the same handler', async () => {
        const { http } = await start(options, { controllers });
        const first = await http().get('/skip-handler/own-default').expect(200);
        expect(first.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
        expect(await statuses(2, () => http().get('/skip-handler/own-default'))).toEqual([200, 429]);
      });
    });

    describe('@SkipRateLimit on a class', () => {
      it('exempts the handlers that declare no rules of their own, class rules included', async () => {
        const { http } = await start(options, { controllers });
        expect(await statuses(5, () => http().get('/skip-class/plain'))).toEqual([200, 200, 200, 200, 200]);
      });

      it('keeps a named rule the handler itself declares', async () => {
        const { http } = await start(options, { controllers });
        const first = await http().get('/skip-class/own').expect(200);
        expect(policyNames(first)).toEqual(['own']);
        expect(await statuses(2, () => http().get('/skip-class/own'))).toEqual([200, 429]);
      });

      it('keeps an unnamed rule the handler itself declares', async () => {
        const { http } = await start(options, { controllers });
        const first = await http().get('/skip-class/own-default').expect(200);
        expect(first.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
        expect(await statuses(3, () => http().get('/skip-class/own-default'))).toEqual([200, 200, 429]);
      });

      it('keeps the class\'s other rules when it skips only the module default', async () => {
        const { http } = await start(options, { controllers });
        const first = await http().get('/skip-class-default/plain').expect(200);
        expect(policyNames(first)).toEqual(['cls']);
        expect(await statuses(2, () => http().get('/skip-class-default/plain'))).toEqual([200, 429]);
      });
    });

    describe('the skip option', () => {
      it('does not limit requests for which skip(context) returns true', async () => {
        const { http } = await start({ ...options, skip: isInternal }, { controllers });
        const internal = () => http().get('/skip-handler/limited').set('x-internal', 'yes');
        expect(await statuses(4, internal)).toEqual([200, 200, 200, 200]);
        expect((await internal()).headers['ratelimit']).toBeUndefined();
      });

      it('limits the requests for which skip(context) returns false', async () => {
        const { http } = await start({ ...options, skip: isInternal }, { controllers });
        expect(await statuses(2, () => http().get('/skip-handler/limited').set('x-internal', 'no'))).toEqual([200, 429]);
      });

      it('awaits a skip option that returns a promise', async () => {
        const { http } = await start({ ...options, skip: async (context: ExecutionContext) => isInternal(context) }, { controllers });
        expect(await statuses(3, () => http().get('/skip-handler/limited').set('x-internal', 'yes'))).toEqual([200, 200, 200]);
        await http().get('/skip-handler/limited').expect(200);
        await http().get('/skip-handler/limited').expect(429);
      });
    });
  });
});
