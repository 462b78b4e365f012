import type { Cluster } from 'ioredis';
import { MemoryStore, RedisStore } from '../../lib/index.js';
import type { RateLimitStore } from '../../lib/index.js';
import { ManualClock } from './manual.clock.js';
import { CLIENT_LIBRARIES, openClient, openClusterClient, type ClientLibrary, type OpenClient } from './redis-clients.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from './redis-cluster.js';
import { startRedis, uniquePrefix, type TestRedis } from './redis-server.js';

/** A store under test, driven by a clock the test moves. */
export interface StoreUnderTest {
  store: RateLimitStore;
  clock: ManualClock;
  prefix: string;
}

/**
 * 'redis': a RedisStore on an ioredis client of a real redis-server; 'cluster': on an ioredis Cluster client of a
 * real 3-master Redis Cluster (see redis-cluster.ts); 'redis via <library>' and 'cluster via <library>': the same
 * through a client of another library (see redis-clients.ts).
 */
export type StoreKind = 'memory' | 'redis' | 'cluster' | `redis via ${ClientLibrary}` | `cluster via ${ClientLibrary}`;
export const STORE_KINDS: StoreKind[] = ['memory', 'redis', 'cluster', ...CLIENT_LIBRARIES.map((l) => `redis via ${l}` as const), 'cluster via node-redis 6', 'cluster via GLIDE'];

/** The client library of a kind that names one, else undefined (ioredis, or memory). */
function libraryOf(kind: StoreKind): ClientLibrary | undefined {
  const match = / via (.+)$/.exec(kind);
  return match ? (match[1] as ClientLibrary) : undefined;
}

const CLUSTER_START_TIMEOUT_MS = 60_000;

/**
 * The Redis Cluster of this test file: started by the first suite that asks for it, shared by the file's other
 * suites (a cluster takes ~2 s to form), and stopped after the file. Jest evaluates this module once per test
 * file, so the `afterAll` below is registered at the file's top level.
 */
let fileCluster: Promise<{ redis: TestRedisCluster; client: Cluster }> | undefined;
function clusterOfThisFile(): Promise<{ redis: TestRedisCluster; client: Cluster }> {
  fileCluster ??= (async () => {
    const redis = await startRedisCluster({ masters: 3 });
    try {
      const client = redis.cluster();
      await clusterReady(client);
      return { redis, client };
    } catch (error) {
      await redis.stop();
      throw error;
    }
  })();
  return fileCluster;
}
afterAll(async () => {
  const started = fileCluster;
  fileCluster = undefined;
  if (started) await (await started.catch(() => undefined))?.redis.stop();
}, CLUSTER_START_TIMEOUT_MS);

/**
 * Gives each test a fresh store of the kind asked for, with its own clock and key prefix. The Redis server is
 * started once per suite (and stopped after it); the Redis Cluster once per test file.
 */
export function useStores(kind: StoreKind): () => StoreUnderTest {
  let redis: TestRedis | undefined;
  let cluster: Cluster | undefined;
  let other: OpenClient | undefined;
  let current: StoreUnderTest | undefined;
  const library = libraryOf(kind);
  beforeAll(async () => {
    if (kind.startsWith('redis')) redis = await startRedis();
    if (kind === 'cluster') cluster = (await clusterOfThisFile()).client;
    if (library && kind.startsWith('redis')) other = await openClient(library, redis!.port);
    if (library && kind.startsWith('cluster')) other = await openClusterClient(library, (await clusterOfThisFile()).redis.nodes);
  }, CLUSTER_START_TIMEOUT_MS);
  afterAll(async () => {
    await other?.close();
    await redis?.stop();
  });
  beforeEach(() => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const options = { clock: clock.now, keyPrefix: prefix };
    const store = kind === 'memory' ? new MemoryStore(options) : new RedisStore(other?.client ?? (kind === 'cluster' ? cluster! : redisClient()), options);
    current = { store, clock, prefix };
  });
  let client: ReturnType<TestRedis['client']> | undefined;
  function redisClient() {
    client ??= redis!.client();
    return client;
  }
  return () => current!;
}
