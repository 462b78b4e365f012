import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit, type RateLimitModuleExtras, type RateLimitModuleOptions } from '../../lib/index.js';
import { PLATFORMS } from './support/http-app.js';
import { policyNames, statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';

const isInternal = (context: ExecutionContext) => context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-internal'] === 'yes';

@Controller('overrides')
class OverridesController {
  /** The module's default rule, as configured. */
  @Get('module')
  module() {
    return { ok: true };
  }

  /** The default rule with its own limit and window, by name. */
  @Get('named')
  @RateLimit({ name: 'default', limit: 3, window: '1m' })
  named() {
    return { ok: true };
  }

  /** The same, unnamed (an unnamed rule is `'default'`), as throttler's `@Throttle({ default: { limit, ttl } })`. */
  @Get('unnamed')
  @RateLimit({ limit: 3, window: '1m' })
  unnamed() {
    return { ok: true };
  }

  /** An override that sets its own exemption: it replaces the module rule's. */
  @Get('own-skip')
  @RateLimit({ name: 'default', limit: 3, window: '1m', skipIf: () => false, ignoreUserAgents: [] })
  ownSkip() {
    return { ok: true };
  }

  /** The named rule `search` of the module, 1 a minute here. */
  @Get('search')
  @RateLimit({ name: 'search', limit: 1, window: '1m' })
  search() {
    return { ok: true };
  }
}

/** The default rule overridden for every handler of a class. */
@Controller('class-override')
@RateLimit({ name: 'default', limit: 3, window: '1m' })
class ClassOverrideController {
  @Get()
  get() {
    return { ok: true };
  }
}

const monitor = 'Uptime-Monitor/2.0';
const exempt = { skipIf: isInternal, ignoreUserAgents: [/uptime-monitor/i] };
const options: RateLimitModuleOptions & RateLimitModuleExtras = {
  globalGuard: true,
  headers: 'draft',
  defaultRule: { limit: 10, window: '1m', ...exempt },
  rules: { search: { limit: 5, window: '1m', skipIf: isInternal } },
};
const controllers = [OverridesController, ClassOverrideController];

const redis = useRedisServer();

describe.each(PLATFORMS)('a route overriding a module rule on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);

    describe.each(['/overrides/named', '/overrides/unnamed', '/class-override'])('%s', (path) => {
      it('applies the override\'s limit', async () => {
        const { http } = await start(options, { controllers });
        expect(await statuses(4, () => http().get(path))).toEqual([200, 200, 200, 429]);
      });

      it('keeps the module rule\'s skipIf: a request it skips is neither charged nor reported', async () => {
        const { http } = await start(options, { controllers });
        const internal = () => http().get(path).set('x-internal', 'yes');
        expect(await statuses(5, internal)).toEqual([200, 200, 200, 200, 200]);
        expect(policyNames(await internal())).toEqual([]);
        expect(await statuses(4, () => http().get(path))).toEqual([200, 200, 200, 429]);
      });

      it('keeps the module rule\'s ignoreUserAgents: a matching User-Agent is neither charged nor reported', async () => {
        const { http } = await start(options, { controllers });
        const bot = () => http().get(path).set('user-agent', monitor);
        expect(await statuses(5, bot)).toEqual([200, 200, 200, 200, 200]);
        expect((await bot()).headers['ratelimit-policy']).toBeUndefined();
        expect(await statuses(4, () => http().get(path).set('user-agent', 'curl/8.0'))).toEqual([200, 200, 200, 429]);
      });
    });

    it('lets an override replace the module rule\'s exemptions with its own', async () => {
      const { http } = await start(options, { controllers });
      expect(await statuses(4, () => http().get('/overrides/own-skip').set('x-internal', 'yes').set('user-agent', monitor))).toEqual([200, 200, 200, 429]);
    });

    it('keeps the skipIf of a named module rule that a route overrides', async () => {
      const { http } = await start(options, { controllers });
      expect(await statuses(3, () => http().get('/overrides/search').set('x-internal', 'yes'))).toEqual([200, 200, 200]);
      expect(await statuses(2, () => http().get('/overrides/search'))).toEqual([200, 429]);
    });

    it('keeps the module rule\'s key: the override counts per API key where the module rule does', async () => {
      const { http } = await start({ globalGuard: true, defaultRule: { limit: 10, window: '1m', key: 'header:x-api-key' } }, { controllers });
      const as = (apiKey: string) => () => http().get('/overrides/named').set('x-api-key', apiKey);
      expect(await statuses(4, as('a'))).toEqual([200, 200, 200, 429]);
      expect(await statuses(4, as('b'))).toEqual([200, 200, 200, 429]);
    });

    it('keeps the module rule\'s mode: an override of a shadow rule stays in shadow', async () => {
      const { http } = await start({ globalGuard: true, defaultRule: { limit: 10, window: '1m', mode: 'shadow' } }, { controllers });
      expect(await statuses(4, () => http().get('/overrides/named'))).toEqual([200, 200, 200, 200]);
    });

    it('leaves the module\'s own route on the module rule', async () => {
      const { http } = await start(options, { controllers });
      expect(await statuses(3, () => http().get('/overrides/module').set('x-internal', 'yes'))).toEqual([200, 200, 200]);
      expect((await http().get('/overrides/module')).headers['ratelimit-policy']).toBe('"default";q=10;w=60');
    });
  });
});
