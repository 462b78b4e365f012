import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import request from 'supertest';
import { RateLimit, RateLimitConfigError, RateLimitModule, RateLimitPolicies, SkipRateLimit } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { startApp } from './support/http-app.js';
import { CapturingLogger } from './support/rate-limit-config.js';

@Controller()
class ItemsController {
  /** Under the default rule only. */
  @Get('items')
  items() {
    return { ok: true };
  }

  /** Under the "search" rule only. */
  @Get('search')
  @SkipRateLimit('default')
  @RateLimit('search')
  search() {
    return { ok: true };
  }
}

// Each part of the namespace goes into force on its own: a refused value in one rule must not hold back the others.
describe('config changes applied part by part, with the real ConfigService', () => {
  let app: INestApplication;
  let config: ConfigService;
  let policies: RateLimitPolicies;
  let logger: CapturingLogger;

  beforeEach(async () => {
    const clock = new ManualClock();
    app = await startApp('express', {
      imports: [
        ConfigModule.forRoot({
          ignoreEnvFile: true,
          load: [registerAs('rateLimit', () => ({ defaultRule: { limit: '100', window: '1m' }, rules: { search: { limit: '100', window: '1m', algorithm: 'sliding-log' } } }))],
        }),
        RateLimitModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (configService: ConfigService) => ({ config: configService, clock: clock.now, keyPrefix: uniquePrefix('part') }),
          globalGuard: true,
        }),
      ],
      controllers: [ItemsController],
    });
    config = app.get(ConfigService);
    policies = app.get(RateLimitPolicies);
    logger = new CapturingLogger();
    app.useLogger(logger);
  });
  afterEach(() => app.close());

  /** Requests `path` until it refuses; how many passed (at most `max`). */
  async function admitted(path: string, max = 10): Promise<number> {
    for (let i = 0; i < max; i++) {
      const res = await request(app.getHttpServer()).get(path);
      if (res.status === 429) return i;
      expect(res.status).toBe(200);
    }
    return max;
  }

  it('applies a valid change to the default rule made after a refused change to another rule, naming only the refused field', async () => {
    config.set('rateLimit.rules.search.limit', 'abc');
    config.set('rateLimit.defaultRule.limit', 2);
    expect(logger.errors).toEqual([expect.stringContaining('"rateLimit.rules.search.limit": "abc"')]);
    expect(policies.get('default')?.rule.limit).toBe(2);
    expect(await admitted('/items')).toBe(2);
    // The refused rule keeps its last valid version.
    expect(policies.get('search')?.rule.limit).toBe(100);
  });

  it('applies a later set that fixes the refused field', async () => {
    config.set('rateLimit.rules.search.limit', 'abc');
    config.set('rateLimit.defaultRule.limit', 2);
    config.set('rateLimit.rules.search.limit', 1);
    expect(policies.get('search')?.rule.limit).toBe(1);
    expect(await admitted('/search')).toBe(1);
    expect(logger.errors).toHaveLength(1);
  });

  it('logs a refused value once, however many other changes follow, and a new bad value again', () => {
    config.set('rateLimit.rules.search.limit', 'abc');
    config.set('rateLimit.defaultRule.limit', 3);
    config.set('rateLimit.defaultRule.window', '2m');
    config.set('rateLimit.rules.search.limit', -1);
    expect(logger.errors).toEqual([
      expect.stringContaining('"rateLimit.rules.search.limit": "abc"'),
      expect.stringContaining('"rateLimit.rules.search.limit": -1'),
    ]);
    expect(policies.get('default')?.rule).toMatchObject({ limit: 3, windowMs: 120_000 });
  });

  it('throws a RateLimitConfigError from setRule on an invalid rule, naming the field, and changes nothing', () => {
    const version = policies.version;
    let error: unknown;
    try {
      policies.setRule('search', { limit: 'abc', window: '1m' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RateLimitConfigError);
    expect(error).toMatchObject({ field: 'rateLimit.rules.search.limit', value: 'abc' });
    expect([policies.version, policies.get('search')?.rule.limit, config.get('rateLimit.rules.search.limit')]).toEqual([version, 100, '100']);
    expect(logger.errors).toEqual([]);
  });

  it('puts a rule given to setRule in force for the next request and writes it to ConfigService', async () => {
    const policy = policies.setRule('search', { limit: 1, window: '1m' });
    expect(policy.rule).toMatchObject({ name: 'search', limit: 1, algorithm: 'sliding-window' });
    expect(config.get('rateLimit.rules.search')).toEqual({ limit: 1, window: '1m' });
    expect(await admitted('/search')).toBe(1);
    expect(logger.errors).toEqual([]);
  });

  it('applies setRule on the default rule while another rule of the config holds a refused value', async () => {
    config.set('rateLimit.rules.search.limit', 'abc');
    policies.setRule('default', { limit: 2, window: '1m' });
    expect(await admitted('/items')).toBe(2);
    expect(config.get('rateLimit.defaultRule')).toEqual({ limit: 2, window: '1m' });
    expect(logger.errors).toHaveLength(1);
  });
});
