import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimitModule, RateLimitService } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PLATFORMS, startApp, type Platform } from './support/http-app.js';

@Controller()
class HotController {
  @Get('hot')
  hot() {
    return { ok: true };
  }
}

const LIMIT = 300;

/**
 * A default rule with a local budget, through the global guard over real HTTP: two app instances on one Redis share
 * one budget for one client IP. Together they never admit more than the limit in the window; the units one holds
 * when the traffic stops go back, so Redis then counts exactly what was admitted; refusals carry the usual 429.
 */
describe.each<Platform>(PLATFORMS)('a default rule with localBudget, on %s', (platform) => {
  let redis: TestRedis;
  let apps: INestApplication[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()));
    apps = [];
  });

  async function instance(keyPrefix: string): Promise<INestApplication> {
    const app = await startApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          store: `redis://127.0.0.1:${redis.port}`,
          keyPrefix,
          globalGuard: true,
          timeoutMs: 5_000,
          defaultRule: { limit: LIMIT, window: '1h', algorithm: 'fixed-window', localBudget: { maxUnits: 20, maxMs: '1m' } },
        }),
      ],
      controllers: [HotController],
    });
    apps.push(app);
    return app;
  }

  it('never admits more than the limit across instances, and Redis counts what was admitted once units go back', async () => {
    const keyPrefix = uniquePrefix('lb');
    const [a, b] = [await instance(keyPrefix), await instance(keyPrefix)];
    const statuses: number[] = [];
    const refusals: request.Response[] = [];
    // Both instances at once, 8 requests in flight each, until both have refused.
    await Promise.all(
      [a, b].flatMap((app) =>
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 60; i++) {
            const res = await request(app.getHttpServer()).get('/hot');
            statuses.push(res.status);
            if (res.status === 429) refusals.push(res);
          }
        }),
      ),
    );
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted).toBeLessThanOrEqual(LIMIT);
    // What one instance held when the other was refused, at most 20 units each.
    expect(admitted).toBeGreaterThanOrEqual(LIMIT - 2 * 20);
    expect(refusals[0].headers['retry-after']).toMatch(/^\d+$/);
    expect(refusals[0].body).toMatchObject({ statusCode: 429 });

    const services = [a, b].map((app) => app.get(RateLimitService));
    for (const service of services) service.budgets!.clear();
    for (const service of services) await service.budgets!.settled();
    // The one state key of the rule for this client: a fixed window's end (µs) + its count.
    const client = redis.client();
    try {
      const keys = await client.keys(`${keyPrefix}:*`);
      expect(keys).toHaveLength(1);
      expect(Number(await client.get(keys[0])) % 3_600_000_000).toBe(admitted);
    } finally {
      client.disconnect();
    }
  });
});
