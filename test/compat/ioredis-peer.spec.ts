import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { settle, tsc, valueOf, type Outcome } from './consumer-tools.js';
import { prepareSandbox, runFixture } from './sandbox.js';

/**
 * ioredis is a peer dependency (^5 || ^6): the package's types and code use the app's own ioredis, so a user's
 * client of either major is the very Redis / Cluster type the package takes. Each major is installed as `ioredis`
 * in its own sandbox (5 from the `ioredis5` alias, 6 is the repository's), where a user's ES module and CommonJS
 * module (fixtures/ioredis-client) are type-checked with `strict` and `skipLibCheck: false`, then run against a
 * real Redis.
 */

interface ClientReport {
  ioredisVersion: string;
  clusterAccepted: boolean;
  /** `allowed` of 3 RedisStore.consume calls on the user's client, limit 2. */
  storeDecisions: boolean[];
  /** `allowed` of 3 RateLimitService.consume calls, module given the user's client, limit 2. */
  serviceDecisions: boolean[];
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

describe.each<{ major: number; packages: Record<string, string> }>([
  { major: 5, packages: { ioredis: 'ioredis5' } },
  { major: 6, packages: {} },
])('a user\'s own ioredis $major client', ({ major, packages }) => {
  let dir: string;
  let build: Outcome<unknown>;

  // skipLibCheck is off, so the package's declarations are checked too: the slowest step here.
  beforeAll(async () => {
    dir = prepareSandbox(`ioredis-${major}`, { fixture: 'ioredis-client', packages });
    build = await settle(tsc(dir, 'typescript', 'tsconfig.json'));
  }, 120_000);

  const run = async (entry: string) => {
    valueOf(build);
    const env = { REDIS_URL: redis.url, RATE_LIMIT_PREFIX: uniquePrefix(`ioredis${major}`) };
    return (await runFixture<ClientReport>(dir, entry, 30_000, env)).report;
  };

  it('type-checks as RedisStore\'s client and as the module\'s store, Redis and Cluster, under tsc --strict (ESM and CommonJS)', async () => {
    expect(valueOf(build)).toBeDefined();
  });

  it.each(['dist/client.mjs', 'dist/client.cjs'])('decides on it from %s: the store and the module refuse the 3rd of 2', async (entry) => {
    const report = await run(entry);
    expect(report.ioredisVersion.split('.')[0]).toBe(String(major));
    expect(report.clusterAccepted).toBe(true);
    expect(report.storeDecisions).toEqual([true, true, false]);
    expect(report.serviceDecisions).toEqual([true, true, false]);
  });
});
