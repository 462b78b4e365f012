import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { settle, tsc, valueOf, type Outcome } from './consumer-tools.js';
import { HANG_GUARD_MS, prepareSandbox, runFixture } from './sandbox.js';

/**
 * Every client library is an optional peer (ioredis ^5 || ^6, node-redis ^5 || ^6, iovalkey, Valkey GLIDE): the
 * package describes the clients it takes by their members, so a user's client of each library, typed by that
 * library, is a `store` with no cast. One sandbox per Nest major holds a user's code (fixtures/user-clients) as an
 * ES module and as a CommonJS module, type-checked together with `strict` and `skipLibCheck: false`, then run
 * against a real Redis:
 * - Nest 11 with ioredis 5 and node-redis 5 (copies of the `nest11-*`, `ioredis5` and `redis5` aliases), whose
 *   CommonJS module is the Nest 11 CommonJS app;
 * - Nest 12 with ioredis 6 and node-redis 6 (the repository's), whose ES module is the Nest 12 ESM app.
 * The other format runs in each too (Nest 11 imported from an ES module, Nest 12 required from CommonJS), so each
 * client major decides from both formats.
 */

interface Decisions {
  store: boolean[];
  service: boolean[];
}
interface ClientsReport {
  versions: { nest: string; ioredis: string; redis: string };
  typedOnly: number;
  ioredisClusterStore: boolean;
  decisions: { ioredis: Decisions; nodeRedis: Decisions; iovalkey: Decisions; glide: Decisions };
  refused: string;
}

const ENTRIES = ['dist/client.cjs', 'dist/client.mjs'];

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

describe.each<{ nest: number; clients: number; packages: Record<string, string> }>([
  { nest: 11, clients: 5, packages: { '@nestjs/common': 'nest11-common', '@nestjs/core': 'nest11-core', ioredis: 'ioredis5', redis: 'redis5' } },
  { nest: 12, clients: 6, packages: {} },
])('a user\'s own clients on Nest $nest: ioredis $clients, node-redis $clients, iovalkey and GLIDE', ({ nest, clients, packages }) => {
  let build: Outcome<unknown>;
  const runs = new Map<string, Outcome<ClientsReport>>();

  // skipLibCheck is off, so the package's declarations are checked too: the slowest step here.
  beforeAll(async () => {
    const dir = prepareSandbox(`user-clients-nest${nest}`, { fixture: 'user-clients', twins: ['client.ts'], packages });
    build = await settle(tsc(dir, 'typescript', 'tsconfig.json'));
    if (!build.ok) return;
    for (const entry of ENTRIES) {
      const env = { REDIS_URL: redis.url, RATE_LIMIT_PREFIX: uniquePrefix(`clients-nest${nest}`) };
      runs.set(entry, await settle(runFixture<ClientsReport>(dir, entry, HANG_GUARD_MS, env).then((run) => run.report)));
    }
  }, 3 * HANG_GUARD_MS);

  const report = (entry: string): ClientsReport => {
    valueOf(build);
    return valueOf(runs.get(entry)!);
  };

  it('type-check as RedisStore\'s client and as the module\'s store (clients, clusters, sentinel) under tsc --strict, with no cast (ESM and CommonJS)', () => {
    expect(valueOf(build)).toBeDefined();
  });

  it.each(ENTRIES)('run %s on the sandbox\'s Nest and client majors', (entry) => {
    const { versions } = report(entry);
    expect([versions.nest, versions.ioredis, versions.redis].map((version) => Number(version.split('.')[0]))).toEqual([nest, clients, clients]);
  });

  it.each(ENTRIES)('decide through each from %s: RedisStore and RateLimitService refuse the 3rd of 2', (entry) => {
    const { decisions, typedOnly, ioredisClusterStore } = report(entry);
    const limited = { store: [true, true, false], service: [true, true, false] };
    expect(decisions).toEqual({ ioredis: limited, nodeRedis: limited, iovalkey: limited, glide: limited });
    expect(typedOnly).toBe(5);
    expect(ioredisClusterStore).toBe(true);
  });

  it.each(ENTRIES)('get an object of another class refused as store from %s, by a message naming the option and the value', (entry) => {
    expect(report(entry).refused).toContain('Invalid rate limit option "store": "an object of class Date"');
  });
});
