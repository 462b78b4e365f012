import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import request from 'supertest';
import { RateLimit, RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

@Controller('shadow')
class ShadowController {
  /** Tried out in shadow, in place: 1 per minute. */
  @Get('inline')
  @RateLimit({ name: 'trial', limit: 1, window: '1m', mode: 'shadow' })
  inline() {
    return { ok: true };
  }

  /** A rule in force (2 per minute) stacked with a shadow one (1 per minute). */
  @Get('stacked')
  @RateLimit({ name: 'inforce', limit: 2, window: '1m' })
  @RateLimit({ name: 'trial', limit: 1, window: '1m', mode: 'shadow' })
  stacked() {
    return { ok: true };
  }

  /** The named rule `search` of config, with the mode config gives it. */
  @Get('search')
  @RateLimit('search')
  search() {
    return { ok: true };
  }

  /** The same named rule, enforced on this route whatever config's mode for it. */
  @Get('search-enforced')
  @RateLimit({ name: 'search', mode: 'enforce' })
  searchEnforced() {
    return { ok: true };
  }
}

const storeOptions = useStoreOptions();

describe.each(PLATFORMS)('shadow mode over HTTP on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    async function start(options: Partial<RateLimitModuleOptions> = {}, namespace: Record<string, unknown> = { rules: { search: { limit: 1, window: '1m', mode: 'shadow' } } }) {
      const clock = new ManualClock();
      app = await startApp(platform, {
        imports: [
          ConfigModule.forRoot({ ignoreEnvFile: true, load: [registerAs('rateLimit', () => structuredClone(namespace))] }),
          RateLimitModule.forRootAsync({
            imports: [ConfigModule],
            inject: [ConfigService],
            useFactory: (config: ConfigService) => ({ config, clock: clock.now, keyPrefix: uniquePrefix('sh'), ...storeOptions(kind), ...options }),
            globalGuard: true,
          }),
        ],
        controllers: [ShadowController],
      });
      return { server: app.getHttpServer(), config: app.get(ConfigService) };
    }

    async function statuses(server: unknown, path: string, count: number): Promise<number[]> {
      const seen: number[] = [];
      for (let i = 0; i < count; i++) seen.push((await request(server as never).get(path)).status);
      return seen;
    }

    it('admits every request a shadow rule of @RateLimit refuses', async () => {
      const { server } = await start();
      expect(await statuses(server, '/shadow/inline', 3)).toEqual([200, 200, 200]);
    });

    it('leaves shadow rules out of the headers by default', async () => {
      const { server } = await start();
      const res = await request(server).get('/shadow/stacked').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"inforce";q=2;w=60');
      const alone = await request(server).get('/shadow/inline').expect(200);
      expect(alone.headers['ratelimit-policy']).toBeUndefined();
    });

    it('reports shadow rules in the headers with shadowHeaders: true', async () => {
      const { server } = await start({ shadowHeaders: true });
      await request(server).get('/shadow/inline').expect(200);
      const res = await request(server).get('/shadow/inline').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"trial";q=1;w=60');
      expect(res.headers['ratelimit']).toMatch(/^"trial";r=0;t=\d+$/);
      expect(res.headers['retry-after']).toBeUndefined();
    });

    it('refuses by the rule in force of a stacked route, whatever its shadow rule says', async () => {
      const { server } = await start();
      expect(await statuses(server, '/shadow/stacked', 3)).toEqual([200, 200, 429]);
    });

    it('enforces a configured shadow rule where @RateLimit({ name, mode: "enforce" }) refers to it', async () => {
      const { server } = await start();
      expect(await statuses(server, '/shadow/search-enforced', 2)).toEqual([200, 429]);
    });

    it('puts every rule without a mode in shadow with the module option mode: "shadow"', async () => {
      const { server } = await start({ mode: 'shadow' }, { rules: { search: { limit: 1, window: '1m' } } });
      expect(await statuses(server, '/shadow/search', 3)).toEqual([200, 200, 200]);
    });

    it('enforces a shadow rule from the next request on once configService.set() switches it to enforce', async () => {
      const { server, config } = await start();
      expect(await statuses(server, '/shadow/search', 2)).toEqual([200, 200]);
      config.set('rateLimit.rules.search.mode', 'enforce');
      // Counted while in shadow: the switch keeps the counts, so the budget is already spent.
      expect(await statuses(server, '/shadow/search', 1)).toEqual([429]);
    });

    it('switches the module-wide mode live through configService.set("rateLimit.mode")', async () => {
      const { server, config } = await start({}, { mode: 'shadow', rules: { search: { limit: 1, window: '1m' } } });
      expect(await statuses(server, '/shadow/search', 2)).toEqual([200, 200]);
      config.set('rateLimit.mode', 'enforce');
      expect(await statuses(server, '/shadow/search', 1)).toEqual([429]);
    });
  });
});
