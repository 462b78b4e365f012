import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Registry } from 'prom-client';
import request from 'supertest';
import { RateLimit, RateLimitModule, RateLimitService, type RateLimitModuleOptions } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { startApp } from './support/http-app.js';
import { rateLimitConfig } from './support/rate-limit-config.js';

const UTILIZATION = 'rate_limit_window_utilization';

@Controller()
class ReportsController {
  @Get('reports')
  @RateLimit({ name: 'reports', limit: 4, window: '1m', algorithm: 'sliding-log' })
  list() {
    return { ok: true };
  }
}

/** A route whose rule comes from ConfigService (`rateLimit.rules.login`, 3 a minute). */
@Controller()
class LoginController {
  @Get('login')
  @RateLimit('login')
  login() {
    return { ok: true };
  }
}

/** One rule's utilisation histogram, as a scrape would show it: cumulative buckets by `le`, sum and count. */
async function utilization(registry: Registry, rule: string): Promise<{ count: number; sum: number; le: Record<string, number> }> {
  const metric = registry.getSingleMetric(UTILIZATION);
  if (!metric) throw new Error(`No metric ${UTILIZATION}`);
  const out = { count: 0, sum: 0, le: {} as Record<string, number> };
  for (const v of (await metric.get()).values as { labels: Record<string, string | number>; value: number; metricName?: string }[]) {
    if (v.labels.rule !== rule) continue;
    if (v.metricName === `${UTILIZATION}_count`) out.count = v.value;
    else if (v.metricName === `${UTILIZATION}_sum`) out.sum = v.value;
    else out.le[String(v.labels.le)] = v.value;
  }
  return out;
}

describe.each(STORE_KINDS)('window utilisation metric on the %s store', (kind) => {
  const storeOptions = useStoreOptions();
  let app: INestApplication | undefined;
  let registry: Registry;

  async function start(options: Partial<RateLimitModuleOptions> = {}, config = false) {
    registry = new Registry();
    const clock = new ManualClock();
    const moduleOptions = { ...storeOptions(kind), clock: clock.now, keyPrefix: uniquePrefix('util'), metrics: { registry }, ...options };
    app = await startApp('express', {
      imports: config
        ? [rateLimitConfig(), RateLimitModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (c: ConfigService) => ({ ...moduleOptions, config: c }), globalGuard: true })]
        : [RateLimitModule.forRoot({ ...moduleOptions, globalGuard: true })],
      controllers: config ? [LoginController] : [ReportsController],
    });
    return { server: app.getHttpServer(), service: app.get(RateLimitService) };
  }

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('samples each admitted request of a decorated route at the share of its limit used after it', async () => {
    const { server } = await start();
    for (let i = 0; i < 3; i++) await request(server).get('/reports').expect(200);
    const h = await utilization(registry, 'reports');
    expect(h.count).toBe(3);
    expect(h.sum).toBeCloseTo(0.25 + 0.5 + 0.75);
    expect(h.le['0.5']).toBe(2);
  });

  it('samples a refused request above 1: what is used now plus the cost it asked for', async () => {
    const { server } = await start({ blockCache: false });
    for (let i = 0; i < 4; i++) await request(server).get('/reports').expect(200);
    await request(server).get('/reports').expect(429);
    const h = await utilization(registry, 'reports');
    expect(h.count).toBe(5);
    expect(h.le['1']).toBe(4);
    expect(h.le['1.25']).toBe(5);
    expect(h.sum).toBeCloseTo(0.25 + 0.5 + 0.75 + 1 + 1.25);
  });

  if (kind === 'memory') {
    it('samples every refusal: the memory store decides each itself, with no block cache in front of it', async () => {
      const { server } = await start();
      for (let i = 0; i < 4; i++) await request(server).get('/reports').expect(200);
      for (let i = 0; i < 3; i++) await request(server).get('/reports').expect(429);
      expect((await utilization(registry, 'reports')).count).toBe(7);
    });
  } else {
    it('does not sample the repeats the local block cache answers without the store', async () => {
      const { server } = await start();
      for (let i = 0; i < 4; i++) await request(server).get('/reports').expect(200);
      for (let i = 0; i < 3; i++) await request(server).get('/reports').expect(429);
      expect((await utilization(registry, 'reports')).count).toBe(5);
    });
  }

  it("counts a service call's cost, given once for all its rules, in a refused request's sample", async () => {
    const { service } = await start({ rules: { sms: { limit: 4, window: '1m', algorithm: 'sliding-log' } } });
    await service.consumeAll('phone', ['sms'], 3);
    await service.consumeAll('phone', ['sms'], 3);
    const h = await utilization(registry, 'sms');
    expect(h.count).toBe(2);
    expect(h.sum).toBeCloseTo(0.75 + 1.5);
  });

  it('does not sample a rule that would have admitted a request another rule refused', async () => {
    const { service } = await start({ rules: { tight: { limit: 1, window: '1m', algorithm: 'sliding-log' }, loose: { limit: 10, window: '1m', algorithm: 'sliding-log' } } });
    await service.consumeAll('phone', ['tight', 'loose']);
    await service.consumeAll('phone', ['tight', 'loose']);
    expect((await utilization(registry, 'tight')).count).toBe(2);
    expect((await utilization(registry, 'loose')).count).toBe(1);
  });

  it('measures against the limit ConfigService sets at run time', async () => {
    const { server } = await start({}, true);
    await request(server).get('/login').expect(200);
    app!.get(ConfigService).set('rateLimit.rules.login.limit', 2);
    await request(server).get('/login').expect(200);
    const h = await utilization(registry, 'login');
    expect(h.count).toBe(2);
    expect(h.sum).toBeCloseTo(1 / 3 + 1);
  });
});
