import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { AppModule } from '../../../../sample-app/src/app.module.js';
import { ManualClock } from '../../../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../../../support/redis-server.js';
import { startApp } from '../../support/http-app.js';
import { PATIENT_TIMEOUT_MS } from '../../../support/store-timeout.js';

export type SampleStore = 'memory' | 'redis';
export const SAMPLE_STORES: SampleStore[] = ['memory', 'redis'];
export const ADMIN_TOKEN = 'test-admin-token';

export interface Sample {
  app: INestApplication;
  server: Server;
  clock: ManualClock;
  /** The prefix of every rate-limit key this app writes. */
  keyPrefix: string;
}

/**
 * Registers, for the enclosing describe block, the Redis server its apps use (none for the memory store), and
 * returns a function that starts the sample app on that store over real HTTP (Express), with a ManualClock,
 * its own key prefix, and only the variables given: never the shell's or sample-app/.env.
 */
export function sampleAppsOn(store: SampleStore): { start(env?: Record<string, string>): Promise<Sample>; redis(): TestRedis } {
  let redis: TestRedis | undefined;
  const apps: INestApplication[] = [];
  beforeAll(async () => {
    if (store === 'redis') redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return {
    async start(env = {}) {
      const clock = new ManualClock();
      const keyPrefix = uniquePrefix('sample');
      // A patient timeout: on a loaded machine a round trip past the default 50 ms would hand decisions to the failure policy.
      const redisVars = store === 'redis' ? { REDIS_URL: redis!.url, RATE_LIMIT_TIMEOUT_MS: String(PATIENT_TIMEOUT_MS) } : {};
      const vars = { RATE_LIMIT_KEY_PREFIX: keyPrefix, ADMIN_TOKEN, ...redisVars, ...env };
      const app = await startApp('express', { imports: [AppModule.register({ env: vars, clock: clock.now })] });
      apps.push(app);
      return { app, server: app.getHttpServer() as Server, clock, keyPrefix };
    },
    redis() {
      if (!redis) throw new Error('this describe block runs on the memory store');
      return redis;
    },
  };
}
