import type { Redis } from 'ioredis';
import type { RateLimitModuleOptions } from '../../../lib/index.js';
import { startRedis, type TestRedis } from '../../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../../support/store-timeout.js';

export type StoreKind = 'memory' | 'redis';
export const STORE_KINDS: StoreKind[] = ['memory', 'redis'];

/**
 * One redis-server for the whole test file (started before its tests, stopped after them) and the module options
 * for either kind of store: `store: 'memory'`, or an ioredis client on that server that the tests keep open, with a
 * `timeoutMs` a loaded machine keeps to (PATIENT_TIMEOUT_MS). Spread them into the module's options.
 */
export function useStoreOptions(): (kind: StoreKind) => Pick<RateLimitModuleOptions, 'store' | 'timeoutMs'> {
  let redis: TestRedis | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return (kind) => (kind === 'memory' ? { store: 'memory' } : { store: client!, timeoutMs: PATIENT_TIMEOUT_MS });
}
