import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { PLATFORMS } from './support/http-app.js';
import { statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import { TieredController } from './fixtures/resolvable/tiered.controller.js';

const redis = useRedisServer();
const spyOnErrors = () => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

describe.each(PLATFORMS)('limits that depend on the request on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startTiered = () => start({ globalGuard: true }, { controllers: [TieredController] });
    let errors: ReturnType<typeof spyOnErrors>;
    beforeEach(() => {
      errors = spyOnErrors();
    });
    afterEach(() => errors.mockRestore());

    it('admits 2 requests a minute for an API key of the free plan', async () => {
      const { http } = await startTiered();
      expect(await statuses(3, () => http().get('/tiered').set('x-api-key', 'key-free'))).toEqual([200, 200, 429]);
    });

    it('admits 5 requests a minute for an API key of the pro plan, resolved by an async function', async () => {
      const { http } = await startTiered();
      expect(await statuses(6, () => http().get('/tiered').set('x-api-key', 'key-pro'))).toEqual([200, 200, 200, 200, 200, 429]);
    });

    it('reports the limit resolved for the request in the headers', async () => {
      const { http } = await startTiered();
      expect((await http().get('/tiered').set('x-api-key', 'key-pro')).headers['ratelimit-policy']).toBe('"plan";q=5;w=60');
      expect((await http().get('/tiered').set('x-api-key', 'key-free')).headers['ratelimit-policy']).toBe('"plan";q=2;w=60');
    });

    it('refuses with a generic 500 and logs the rule, the field and the value when the limit resolves to an invalid value', async () => {
      const { http } = await startTiered();
      const res = await http().get('/tiered').set('x-api-key', 'key-broken').expect(500);
      expect(res.body).toEqual({ statusCode: 500, message: 'Internal Server Error' });
      const logged = errors.mock.calls.map((call) => String(call[0])).join('\n');
      expect(logged).toMatch(/"@RateLimit on TieredController\.get\.limit": "lots"/);
    });

    it('refuses with a 500 and logs the field when the limit\'s function throws, never admitting', async () => {
      const { http } = await startTiered();
      expect(await statuses(3, () => http().get('/tiered/down').set('x-api-key', 'key-free'))).toEqual([500, 500, 500]);
      expect(errors.mock.calls.map((call) => String(call[0])).join('\n')).toMatch(/"@RateLimit on TieredController\.down\.limit": its function threw Error: plan service unavailable/);
    });
  });
});
