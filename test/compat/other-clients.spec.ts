import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { settle, tsc, valueOf, type Outcome } from './consumer-tools.js';
import { prepareSandbox, runFixture } from './sandbox.js';

/**
 * node-redis (^5 || ^6), iovalkey and Valkey GLIDE are optional peer dependencies: the package describes the
 * clients it takes by their members, so a user's client of each library, typed by that library, is a `store`
 * with no cast. Each node-redis major is installed as `redis` in its own sandbox (5 from the `redis5` alias, 6 is
 * the repository's), where a user's ES module and CommonJS module (fixtures/other-clients) are type-checked with
 * `strict` and `skipLibCheck: false`, then run against a real Redis.
 */

interface Decisions {
  store: boolean[];
  service: boolean[];
}
interface ClientsReport {
  nodeRedisVersion: string;
  typedOnly: number;
  nodeRedis: Decisions;
  iovalkey: Decisions;
  glide: Decisions;
  refused: string;
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

describe.each<{ major: number; packages: Record<string, string> }>([
  { major: 5, packages: { redis: 'redis5' } },
  { major: 6, packages: {} },
])('a user\'s own node-redis $major, iovalkey and GLIDE clients', ({ major, packages }) => {
  let dir: string;
  let build: Outcome<unknown>;

  // skipLibCheck is off, so the package's declarations are checked too: the slowest step here.
  beforeAll(async () => {
    dir = prepareSandbox(`other-clients-${major}`, { fixture: 'other-clients', packages });
    build = await settle(tsc(dir, 'typescript', 'tsconfig.json'));
  }, 120_000);

  it('type-check as RedisStore\'s client and as the module\'s store (clients, clusters, sentinel) under tsc --strict, with no cast (ESM and CommonJS)', () => {
    expect(valueOf(build)).toBeDefined();
  });

  // The module waits up to 10 s for a decision there: a loaded machine's first calls (EVAL of each script, the
  // clock measurement) must not fall to the failure policy, which would admit the 3rd.
  it.each(['dist/client.mjs', 'dist/client.cjs'])('decide through each from %s, and an object of another class is refused', async (entry) => {
    valueOf(build);
    const env = { REDIS_URL: redis.url, RATE_LIMIT_PREFIX: uniquePrefix(`clients${major}`) };
    const { report } = await runFixture<ClientsReport>(dir, entry, 30_000, env);
    expect(report.nodeRedisVersion.split('.')[0]).toBe(String(major));
    expect(report.typedOnly).toBe(4);
    const limited = { store: [true, true, false], service: [true, true, false] };
    expect({ nodeRedis: report.nodeRedis, iovalkey: report.iovalkey, glide: report.glide }).toEqual({ nodeRedis: limited, iovalkey: limited, glide: limited });
    expect(report.refused).toContain('Invalid rate limit option "store": "an object of class Date"');
  });
});
