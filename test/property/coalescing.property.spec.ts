import fc from 'fast-check';
import type { Cluster, Redis } from 'ioredis';
import { defineRule, RedisStore, type RateLimitRule } from '../../lib/index.js';
import type { RedisClientLike } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { CLIENT_LIBRARIES, openClient, openClusterClient, type ClientLibrary, type OpenClient } from '../support/redis-clients.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// Rules of every algorithm, two with a lockout: a batch mixes algorithms, lockout keys and keys without one.
const RULES: RateLimitRule[] = [
  defineRule({ algorithm: 'fixed-window', limit: 3, window: 2000, blockMs: 3000 }, 'fw'),
  defineRule({ algorithm: 'sliding-log', limit: 3, window: 2000 }, 'sl'),
  defineRule({ algorithm: 'sliding-window', limit: 4, window: 2000, segments: 4 }, 'sw'),
  defineRule({ algorithm: 'token-bucket', limit: 3, window: 2000, refill: 2 }, 'tb'),
  defineRule({ algorithm: 'gcra', limit: 3, window: 2000, burst: 2, blockMs: 1000 }, 'gcra'),
];
// Few trackers, so that the calls of a turn share keys; on a Cluster they spread over the masters.
const TRACKERS = ['a', 'b', 'c', 'd', 'e', 'f'];

const entry = fc.record({ key: fc.constantFrom(...TRACKERS), rule: fc.constantFrom(...RULES) });
const call = fc.oneof(
  fc.record({ kind: fc.constant('consume' as const), entry, cost: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('peek' as const), entry, cost: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('refund' as const), entry, cost: fc.integer({ min: 1, max: 2 }) }),
  // Same tracker, so that on a Cluster the entries share a slot (keys of several slots are decided one by one).
  fc.record({ kind: fc.constant('consumeAll' as const), key: fc.constantFrom(...TRACKERS), rules: fc.uniqueArray(fc.constantFrom(...RULES), { minLength: 1, maxLength: 3 }) }),
);
type Call = typeof call extends fc.Arbitrary<infer T> ? T : never;
// A turn: the calls made together (one batch when coalesced), then the time to the next turn.
const turns = fc.array(fc.record({ calls: fc.array(call, { minLength: 1, maxLength: 12 }), gap: fc.integer({ min: 0, max: 1500 }) }), { minLength: 1, maxLength: 8 });

function make(store: RedisStore, c: Call): Promise<unknown> {
  if (c.kind === 'consume') return store.consume(c.entry.key, c.entry.rule, c.cost);
  if (c.kind === 'peek') return store.peek(c.entry.key, c.entry.rule, c.cost);
  if (c.kind === 'refund') return store.refund(c.entry.key, c.entry.rule, c.cost);
  return store.consumeAll(c.rules.map((rule) => ({ key: c.key, rule })));
}

/** The coalesced store gets each turn's calls at once; the other, one by one in the same order. */
async function agree(client: Redis | Cluster | RedisClientLike, history: { calls: Call[]; gap: number }[]): Promise<void> {
  const clock = new ManualClock(1_700_000_000_123);
  const coalesced = new RedisStore(client, { clock: clock.now, keyPrefix: uniquePrefix() });
  const oneByOne = new RedisStore(client, { clock: clock.now, keyPrefix: uniquePrefix(), coalesce: false });
  for (const { calls, gap } of history) {
    const together = await Promise.all(calls.map((c) => make(coalesced, c)));
    const alone: unknown[] = [];
    for (const c of calls) alone.push(await make(oneByOne, c));
    expect(together).toEqual(alone);
    clock.advance(gap);
  }
}

describe('a coalescing RedisStore on one redis-server', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it('decides the calls of a turn exactly as the same calls sent one by one, in that order', async () => {
    const client = redis.client();
    await fc.assert(
      fc.asyncProperty(turns, (history) => agree(client, history)),
      { numRuns: 60 },
    );
  });
});

describe('a coalescing RedisStore on a 3-master Redis Cluster', () => {
  let cluster: TestRedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    client = cluster.cluster();
    await clusterReady(client);
  }, 60_000);
  afterAll(() => cluster?.stop(), 60_000);

  it('decides the calls of a turn exactly as the same calls sent one by one, in that order', async () => {
    await fc.assert(
      fc.asyncProperty(turns, (history) => agree(client, history)),
      { numRuns: 40 },
    );
  });
});

// The same property through each other client library: coalescing lives above the client port.
describe.each<ClientLibrary>(CLIENT_LIBRARIES)('a coalescing RedisStore on one redis-server, through a %s client', (library) => {
  let redis: TestRedis;
  let opened: OpenClient;
  beforeAll(async () => {
    redis = await startRedis();
    opened = await openClient(library, redis.port);
  });
  afterAll(async () => {
    await opened?.close();
    await redis?.stop();
  });

  it('decides the calls of a turn exactly as the same calls sent one by one, in that order', async () => {
    await fc.assert(
      fc.asyncProperty(turns, (history) => agree(opened.client, history)),
      { numRuns: 20 },
    );
  });
});

describe.each<ClientLibrary>(['node-redis 6', 'GLIDE'])('a coalescing RedisStore on a 3-master Redis Cluster, through a %s cluster client', (library) => {
  let cluster: TestRedisCluster;
  let opened: OpenClient;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    await clusterReady(cluster.cluster());
    opened = await openClusterClient(library, cluster.nodes);
  }, 60_000);
  afterAll(async () => {
    await opened?.close();
    await cluster?.stop();
  }, 60_000);

  it('decides the calls of a turn exactly as the same calls sent one by one, in that order', async () => {
    await fc.assert(
      fc.asyncProperty(turns, (history) => agree(opened.client, history)),
      { numRuns: 15 },
    );
  });
});
