import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import request from 'supertest';
import { RateLimit, RateLimitConfigWatcher, RateLimitModule, RateLimitPolicies, type RateLimitModuleOptions } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { PLATFORMS, startApp } from './support/http-app.js';
import { CapturingLogger, ENV_LIMIT, ENV_WINDOW, rateLimitConfig, waitFor, withEnv } from './support/rate-limit-config.js';

@Controller('auth')
class LoginController {
  @Get('login')
  @RateLimit('login')
  login() {
    return { ok: true };
  }
}

interface LoginNamespace {
  rules: { login: { limit: string | number; window: string } };
}

describe.each(PLATFORMS)('rules from ConfigService on %s', (platform) => {
  let app: INestApplication | undefined;
  let env: { restore(): void } | undefined;

  async function start(options: Pick<RateLimitModuleOptions, 'refreshIntervalMs' | 'rules'> = {}) {
    const clock = new ManualClock();
    app = await startApp(platform, {
      imports: [
        rateLimitConfig(),
        RateLimitModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({ config, clock: clock.now, keyPrefix: uniquePrefix('cfg'), ...options }),
          globalGuard: true,
        }),
      ],
      controllers: [LoginController],
    });
    return { server: app.getHttpServer(), config: app.get(ConfigService) };
  }

  /** Requests the route until it refuses; returns how many passed (at most `max`). */
  async function admitted(server: unknown, max = 10): Promise<number> {
    for (let i = 0; i < max; i++) {
      const res = await request(server as never).get('/auth/login');
      if (res.status === 429) return i;
      expect(res.status).toBe(200);
    }
    return max;
  }

  afterEach(async () => {
    env?.restore();
    env = undefined;
    await app?.close();
    app = undefined;
  });

  it.each([
    ['2', '1m', '"login";q=2;w=60'],
    ['100', '90s', '"login";q=100;w=90'],
    ['5', '60000ms', '"login";q=5;w=60'],
    ['5', '2 minutes', '"login";q=5;w=120'],
  ])('parses the env var strings limit %j and window %j', async (limit, window, policy) => {
    env = withEnv({ [ENV_LIMIT]: limit, [ENV_WINDOW]: window });
    const { server } = await start();
    const res = await request(server).get('/auth/login').expect(200);
    expect(res.headers['ratelimit-policy']).toBe(policy);
  });

  it('limits a route that refers to a rule defined only in config', async () => {
    const { server } = await start();
    expect(await admitted(server)).toBe(3);
  });

  it('lets config win over code, rule by rule', async () => {
    const { server } = await start({ rules: { login: { limit: 10, window: '1m' }, signup: { limit: 1, window: '1h' } } });
    expect(await admitted(server)).toBe(3);
    expect(app!.get(RateLimitPolicies).get('signup')?.rule.limit).toBe(1);
  });

  it('falls back to the rule in code when config drops it', async () => {
    const { server, config } = await start({ rules: { login: { limit: 4, window: '1m', algorithm: 'sliding-log' } } });
    expect(await admitted(server)).toBe(3);
    config.set('rateLimit.rules', {});
    expect(await admitted(server)).toBe(1);
  });

  it('applies configService.set() to the next request, without a restart', async () => {
    const { server, config } = await start();
    expect(await admitted(server)).toBe(3);
    config.set('rateLimit.rules.login.limit', 5);
    const next = await request(server).get('/auth/login').expect(200);
    expect(next.headers['ratelimit-policy']).toBe('"login";q=5;w=60');
    expect(next.headers['ratelimit']).toBe('"login";r=1;t=60');
    expect(await admitted(server)).toBe(1);
  });

  it('lowers a limit with configService.set() for requests already counted', async () => {
    const { server, config } = await start();
    await request(server).get('/auth/login').expect(200);
    await request(server).get('/auth/login').expect(200);
    config.set('rateLimit.rules.login.limit', '2');
    await request(server).get('/auth/login').expect(429);
  });

  it.each([['abc'], [-5], ['1.5']])('refuses the invalid limit %j, logging the field, and keeps the rule in force', async (value) => {
    const { server, config } = await start();
    const logger = new CapturingLogger();
    app!.useLogger(logger);
    config.set('rateLimit.rules.login.limit', value);
    expect(logger.errors).toHaveLength(1);
    expect(logger.errors[0]).toContain(`"rateLimit.rules.login.limit": ${JSON.stringify(value)}`);
    const res = await request(server).get('/auth/login').expect(200);
    expect(res.headers['ratelimit-policy']).toBe('"login";q=3;w=60');
    expect(await admitted(server)).toBe(2);
  });

  it('refuses an invalid window set at run time, naming the field', async () => {
    const { config } = await start();
    const logger = new CapturingLogger();
    app!.useLogger(logger);
    config.set('rateLimit.rules.login.window', '1 fortnight');
    expect(logger.errors).toEqual([expect.stringContaining('"rateLimit.rules.login.window": "1 fortnight"')]);
    expect(app!.get(RateLimitPolicies).get('login')?.rule.windowMs).toBe(60_000);
  });

  it('applies a valid change made after a refused one', async () => {
    const { server, config } = await start();
    app!.useLogger(new CapturingLogger());
    config.set('rateLimit.rules.login.limit', 'abc');
    config.set('rateLimit.rules.login.limit', 1);
    expect(await admitted(server)).toBe(1);
  });

  it('refuses a change that removes a rule a route refers to', async () => {
    const { server, config } = await start();
    const logger = new CapturingLogger();
    app!.useLogger(logger);
    config.set('rateLimit.rules', {});
    expect(logger.errors).toEqual([expect.stringContaining('login')]);
    expect(await admitted(server)).toBe(3);
  });

  it('does not see a config object changed in place until the watcher refreshes', async () => {
    const { server, config } = await start();
    config.get<LoginNamespace>('rateLimit')!.rules.login.limit = '7';
    const before = await request(server).get('/auth/login').expect(200);
    expect(before.headers['ratelimit-policy']).toBe('"login";q=3;w=60');
    expect(app!.get(RateLimitConfigWatcher).refresh()).toBe(true);
    const after = await request(server).get('/auth/login').expect(200);
    expect(after.headers['ratelimit-policy']).toBe('"login";q=7;w=60');
  });

  it('reports no change when the watcher refreshes an unchanged config', async () => {
    await start();
    expect(app!.get(RateLimitConfigWatcher).refresh()).toBe(false);
  });

  it('re-reads a config object changed in place every refreshIntervalMs', async () => {
    const { server, config } = await start({ refreshIntervalMs: 20 });
    config.get<LoginNamespace>('rateLimit')!.rules.login.limit = 7;
    const policies = app!.get(RateLimitPolicies);
    await waitFor('the login limit to become 7', () => policies.get('login')?.rule.limit === 7);
    const res = await request(server).get('/auth/login').expect(200);
    expect(res.headers['ratelimit-policy']).toBe('"login";q=7;w=60');
  });

  it('logs a config object made invalid in place once, at the next refresh, and keeps the rule', async () => {
    const { config } = await start();
    const logger = new CapturingLogger();
    app!.useLogger(logger);
    config.get<LoginNamespace>('rateLimit')!.rules.login.limit = -5;
    const watcher = app!.get(RateLimitConfigWatcher);
    expect(watcher.refresh()).toBe(false);
    expect(watcher.refresh()).toBe(false);
    expect(logger.errors).toEqual([expect.stringContaining('"rateLimit.rules.login.limit": -5')]);
    expect(app!.get(RateLimitPolicies).get('login')?.rule.limit).toBe(3);
  });
});
