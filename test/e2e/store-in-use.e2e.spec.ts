import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { RateLimit, RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { PLATFORMS } from './support/http-app.js';
import { CapturingLogger } from './support/rate-limit-config.js';

@Controller()
class PingController {
  @Get('ping')
  @RateLimit('1m', 2, 'sliding-log')
  ping() {
    return { ok: true };
  }
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

describe.each(PLATFORMS)('the store in use, on %s', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Serves the module over real HTTP with a logger that keeps what start-up logs. */
  async function start(store: RateLimitModuleOptions['store']) {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ store, keyPrefix: uniquePrefix('inuse'), globalGuard: true, timeoutMs: PATIENT_TIMEOUT_MS })],
      controllers: [PingController],
    }).compile();
    app = moduleRef.createNestApplication(platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(), { logger });
    await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer();
    await request(server).get('/ping').expect(200);
    await request(server).get('/ping').expect(200);
    await request(server).get('/ping').expect(429);
    return logger.logs.filter((line) => line.startsWith('Rate limits are kept in'));
  }

  it('takes an empty store (an unset REDIS_URL=) as the memory store, and says so once at start-up', async () => {
    expect(await start('')).toEqual(['Rate limits are kept in memory (this process only)']);
  });

  it('says which Redis it uses, without a password', async () => {
    expect(await start(redis.url)).toEqual([`Rate limits are kept in Redis at ${redis.url} (ioredis)`]);
  });
});
