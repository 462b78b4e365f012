import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimit, RateLimitModule, SkipRateLimit } from '../../lib/index.js';
import { PLATFORMS, startApp } from './support/http-app.js';

@Controller()
class ItemsController {
  @Get('items')
  list() {
    return { ok: true };
  }

  @Get('strict')
  @RateLimit('1m', 1)
  strict() {
    return { ok: true };
  }

  @Get('health')
  @SkipRateLimit()
  health() {
    return { ok: true };
  }
}

describe.each(PLATFORMS)('smoke on %s', (platform) => {
  let app: INestApplication;
  beforeAll(async () => {
    app = await startApp(platform, {
      imports: [RateLimitModule.forRoot({ defaultRule: { limit: 2, window: '1m' }, globalGuard: true })],
      controllers: [ItemsController],
    });
  });
  afterAll(() => app.close());

  it('limits by the default rule', async () => {
    const server = app.getHttpServer();
    const a = await request(server).get('/items');
    expect(a.status).toBe(200);
    expect(a.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
    await request(server).get('/items').expect(200);
    const c = await request(server).get('/items');
    expect(c.status).toBe(429);
    expect(c.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: expect.any(Number) });
    expect(c.headers['retry-after']).toBeDefined();
    await request(server).get('/strict').expect(200);
    await request(server).get('/strict').expect(429);
    for (let i = 0; i < 5; i++) await request(server).get('/health').expect(200);
  });
});
