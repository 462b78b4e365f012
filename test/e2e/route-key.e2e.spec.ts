import { Controller, Get } from '@nestjs/common';
import { RateLimit, routeKey, type RateLimitModuleOptions } from '../../lib/index.js';
import { PLATFORMS } from './support/http-app.js';
import { statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';

/** One overridable rule per route (not `shared`), per client IP, on two routes of a controller with a path. */
@Controller('/v2/items/')
class ItemsV2Controller {
  @Get()
  @RateLimit({ name: 'per-route' })
  list() {
    return { ok: true };
  }

  @Get('count')
  @RateLimit({ name: 'per-route' })
  count() {
    return { ok: true };
  }
}

/** The same class name and handler in another controller path: its own key. */
@Controller('v1/items')
class ItemsV1Controller {
  @Get()
  @RateLimit({ name: 'per-route' })
  list() {
    return { ok: true };
  }
}

const options: RateLimitModuleOptions = { rules: { 'per-route': { limit: 2, window: '1m', overrides: true } } };
const controllers = [ItemsV2Controller, ItemsV1Controller];
const CLIENT = 'ip:127.0.0.1';

const redis = useRedisServer();

describe.each(PLATFORMS)('routeKey on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);

    it('names the key the guard charges on a route, so that an override of it applies there and only there', async () => {
      const { http, service } = await start({ ...options, globalGuard: true }, { controllers });
      expect(routeKey(ItemsV2Controller, 'list', CLIENT)).toBe(`v2/items:ItemsV2Controller.list|${CLIENT}`);
      await service.overrides.set('per-route', routeKey(ItemsV2Controller, 'list', CLIENT), { limit: 4, ttlMs: '1m' });
      await service.overrides.set('per-route', routeKey(ItemsV2Controller, 'count', CLIENT), { block: true, ttlMs: '1m' });
      expect(await statuses(5, () => http().get('/v2/items'))).toEqual([200, 200, 200, 200, 429]);
      expect(await statuses(1, () => http().get('/v2/items/count'))).toEqual([429]);
      expect(await statuses(3, () => http().get('/v1/items'))).toEqual([200, 200, 429]);
    });

    it('names the key reset() forgets for a route', async () => {
      const { http, service } = await start({ ...options, globalGuard: true }, { controllers });
      expect(await statuses(3, () => http().get('/v1/items'))).toEqual([200, 200, 429]);
      await service.reset(routeKey(ItemsV1Controller, 'list', CLIENT), 'per-route');
      expect(await statuses(1, () => http().get('/v1/items'))).toEqual([200]);
    });
  });
});
