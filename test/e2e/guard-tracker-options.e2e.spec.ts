import type { ExecutionContext } from '@nestjs/common';
import { PLATFORMS } from './support/http-app.js';
import { statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import { TrackerController } from './fixtures/tracker/tracker.controller.js';

const redis = useRedisServer();
const clientId = (request: { headers?: Record<string, string | string[] | undefined> }) => String(request.headers?.['x-client-id'] ?? 'anonymous');

describe.each(PLATFORMS)('getTracker and generateKey options on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const controllers = [TrackerController];

    it('counts per the tracker the getTracker option returns', async () => {
      const { http, service } = await start({ globalGuard: true, getTracker: clientId }, { controllers });
      expect(await statuses(2, () => http().get('/tracker/a').set('x-client-id', 'c1'))).toEqual([200, 429]);
      await http().get('/tracker/a').set('x-client-id', 'c2').expect(200);
      expect((await service.peek('tracker:TrackerController.a|ip:c1', { limit: 1, window: '1m' })).allowed).toBe(false);
    });

    it('awaits a getTracker option that returns a promise', async () => {
      const { http } = await start({ globalGuard: true, getTracker: async (request) => clientId(request) }, { controllers });
      expect(await statuses(2, () => http().get('/tracker/a').set('x-client-id', 'c1'))).toEqual([200, 429]);
      await http().get('/tracker/a').set('x-client-id', 'c2').expect(200);
    });

    it('stores under the key the generateKey option returns: one budget for both routes', async () => {
      const generateKey = (_context: ExecutionContext, tracker: string, rule: string) => `all-routes|${rule}|${tracker}`;
      const { http, service } = await start({ globalGuard: true, generateKey }, { controllers });
      await http().get('/tracker/a').expect(200);
      await http().get('/tracker/b').expect(429);
      expect((await service.peek('all-routes|default|ip:127.0.0.1', { limit: 1, window: '1m' })).allowed).toBe(false);
    });

    it('refuses at start-up a getTracker or generateKey that is not a function, naming it', async () => {
      await expect(start({ getTracker: 'x-client-id' as never }, { controllers })).rejects.toThrow(/"getTracker": "x-client-id"/);
      await expect(start({ generateKey: 42 as never }, { controllers })).rejects.toThrow(/"generateKey": 42/);
    });
  });
});
