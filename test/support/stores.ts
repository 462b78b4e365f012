import { MemoryStore, RedisStore } from '../../lib/index.js';
import type { RateLimitStore } from '../../lib/index.js';
import { ManualClock } from './manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from './redis-server.js';

/** A store under test, driven by a clock the test moves. */
export interface StoreUnderTest {
  store: RateLimitStore;
  clock: ManualClock;
  prefix: string;
}

export type StoreKind = 'memory' | 'redis';
export const STORE_KINDS: StoreKind[] = ['memory', 'redis'];

/**
 * Gives each test a fresh store of the kind asked for, with its own clock and key prefix. The Redis server is
 * started once per test file (and stopped after it).
 */
export function useStores(kind: StoreKind): () => StoreUnderTest {
  let redis: TestRedis | undefined;
  let current: StoreUnderTest | undefined;
  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(() => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const store = kind === 'memory' ? new MemoryStore({ clock: clock.now, keyPrefix: prefix }) : new RedisStore(redisClient(), { clock: clock.now, keyPrefix: prefix });
    current = { store, clock, prefix };
  });
  let client: ReturnType<TestRedis['client']> | undefined;
  function redisClient() {
    client ??= redis!.client();
    return client;
  }
  return () => current!;
}
