import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import request from 'supertest';
import { RateLimit, RateLimitModule, RateLimitService } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { useRedisServer } from './fixtures/guard-app.js';
import { PLATFORMS, startApp } from './support/http-app.js';

@Controller('reports')
class ReportsController {
  @Get()
  @RateLimit('reports')
  run() {
    return { ok: true };
  }
}

/** The tracker the guard uses for user u1 under the shared rule (`<key label>:<value>`). */
const U1 = 'header:x-user:u1';
const redis = useRedisServer();

describe.each(PLATFORMS)('a concurrency rule from ConfigService on %s', (platform) => {
  describe.each(['memory', 'redis'] as const)('with the %s store', (store) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    async function start() {
      const clock = new ManualClock();
      app = await startApp(platform, {
        imports: [
          ConfigModule.forRoot({
            ignoreEnvFile: true,
            load: [registerAs('rateLimit', () => ({ rules: { reports: { algorithm: 'concurrency', limit: '1', leaseMs: '1m', key: 'header:x-user', shared: true } } }))],
          }),
          RateLimitModule.forRootAsync({
            imports: [ConfigModule],
            inject: [ConfigService],
            // This is about config, not deadlines: at the 50 ms default, a loaded parallel run once had Redis answer
            // the first lease late, and the failure policy, not Redis, hold it (the guard's call then found none).
            useFactory: (config: ConfigService) => ({ config, clock: clock.now, keyPrefix: uniquePrefix('cc'), store: store === 'memory' ? 'memory' : redis(), timeoutMs: 2_000 }),
            globalGuard: true,
          }),
        ],
        controllers: [ReportsController],
      });
      return { server: app.getHttpServer(), config: app.get(ConfigService), service: app.get(RateLimitService) };
    }

    it('refuses a request while the one slot is held, and admits it once config raises the limit, without a restart', async () => {
      const { server, config, service } = await start();
      const held = await service.acquire(U1, 'reports');
      expect(held).toMatchObject({ acquired: true });
      expect(held.degraded).toBeUndefined();
      await request(server).get('/reports').set('x-user', 'u1').expect(429);
      config.set('rateLimit.rules.reports.limit', 2);
      await request(server).get('/reports').set('x-user', 'u1').expect(200);
      await held.lease!.release();
    });

    it('applies a lowered limit to the leases already held', async () => {
      const { server, config, service } = await start();
      config.set('rateLimit.rules.reports.limit', 2);
      const held = await service.acquire(U1, 'reports');
      await request(server).get('/reports').set('x-user', 'u1').expect(200);
      config.set('rateLimit.rules.reports.limit', 1);
      expect((await service.acquire(U1, 'reports')).acquired).toBe(false);
      await held.lease!.release();
    });
  });
});
