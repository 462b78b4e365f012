import type { Redis } from 'ioredis';
import type { RateLimitModuleOptions } from '../../../lib/index.js';
import { startRedis, type TestRedis } from '../../support/redis-server.js';

export type StoreKind = 'memory' | 'redis';
export const STORE_KINDS: StoreKind[] = ['memory', 'redis'];

/**
 * One redis-server for the whole test file (started before its tests, stopped after them) and the `store`
 * module option for either kind: `'memory'`, or an ioredis client on that server that the tests keep open.
 */
export function useStoreOptions(): (kind: StoreKind) => RateLimitModuleOptions['store'] {
  let redis: TestRedis | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return (kind) => (kind === 'memory' ? 'memory' : client!);
}
