import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import { RateLimitTesting, type RateLimitTestClock } from 'nestjs-redis-rate-limit/testing';
import { AppModule } from '../../../../sample-app/src/app.module.js';
import { startRedis, uniquePrefix, type TestRedis } from '../../../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../../../support/store-timeout.js';

export type SampleStore = 'memory' | 'redis';
export const SAMPLE_STORES: SampleStore[] = ['memory', 'redis'];
export const ADMIN_TOKEN = 'test-admin-token';

export interface Sample {
  app: INestApplication;
  server: Server;
  /** The app's rate limiting, under the test's control (the README's "Testing your app"). */
  limits: RateLimitTesting;
  /** The clock the app's limits follow: `limits.clock`. */
  clock: RateLimitTestClock;
  /** The prefix of every rate-limit key this app writes. */
  keyPrefix: string;
}

/**
 * Registers, for the enclosing describe block, the Redis server its apps use (none for the memory store), and
 * returns functions that start the sample app on that store over real HTTP (Express), compiled with the testing
 * kit (a test clock, keys reset between tests), its own key prefix, and only the variables given: never the
 * shell's or sample-app/.env. `start` gives a test its own app, closed after it; `shared` gives the block's tests one
 * app, started before them, closed after them, and reset (`limits.reset()`) before each.
 */
export function sampleAppsOn(store: SampleStore): { start(env?: Record<string, string>): Promise<Sample>; shared(env?: Record<string, string>): () => Sample; redis(): TestRedis } {
  let redis: TestRedis | undefined;
  const apps: INestApplication[] = [];
  const sharedApps: INestApplication[] = [];
  beforeAll(async () => {
    if (store === 'redis') redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await Promise.all(sharedApps.splice(0).map((app) => app.close()));
    await redis?.stop();
  });
  async function start(env: Record<string, string> = {}): Promise<Sample> {
    const keyPrefix = uniquePrefix('sample');
    // A patient timeout: on a loaded machine a round trip past the default 50 ms would hand decisions to the failure policy.
    const redisVars = store === 'redis' ? { REDIS_URL: redis!.url, RATE_LIMIT_TIMEOUT_MS: String(PATIENT_TIMEOUT_MS) } : {};
    const vars = { RATE_LIMIT_KEY_PREFIX: keyPrefix, ADMIN_TOKEN, ...redisVars, ...env };
    const moduleRef = await RateLimitTesting.install(Test.createTestingModule({ imports: [AppModule.register({ env: vars })] })).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    await app.init();
    await app.listen(0, '127.0.0.1');
    const limits = RateLimitTesting.from(app);
    return { app, server: app.getHttpServer() as Server, limits, clock: limits.clock, keyPrefix };
  }
  return {
    async start(env) {
      const sample = await start(env);
      apps.push(sample.app);
      return sample;
    },
    shared(env) {
      let sample: Sample | undefined;
      beforeAll(async () => {
        sample = await start(env);
        sharedApps.push(sample.app);
      });
      beforeEach(async () => {
        await sample!.limits.reset();
      });
      return () => sample!;
    },
    redis() {
      if (!redis) throw new Error('this describe block runs on the memory store');
      return redis;
    },
  };
}
