import type { LeaseStore } from '../interfaces/lease-store.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';
import { ResilientLeaseStore } from '../resilience/resilient-lease.store.js';
import { ResilientStore } from '../resilience/resilient.store.js';
import { MemoryLeaseStore } from '../stores/leases/memory-lease.store.js';
import { MemoryStore } from '../stores/memory/memory.store.js';
import { recognizeClient } from '../stores/redis/clients/client.recognizer.js';
import { loadScript } from '../stores/redis/lua-script.loader.js';
import { luaScript, type LuaScript } from '../stores/redis/clients/redis-script.call.js';
import { RedisStore } from '../stores/redis/redis.store.js';
import { RateLimitTestingError } from './rate-limit-testing.error.js';

let eraseScript: LuaScript | undefined;

/**
 * Forgets everything a store holds: the memory store's table, or every key under the Redis store's prefix (one
 * SCAN page per script call, never FLUSHALL), and the failure policy's memory store behind it. A store of another
 * kind is cleared by its own `clear()`, if it has one.
 */
export async function eraseStore(store: RateLimitStore): Promise<void> {
  if (store instanceof ResilientStore) {
    store.fallback.clear();
    return eraseStore(store.primary);
  }
  if (store instanceof MemoryStore) return store.clear();
  if (store instanceof RedisStore) return eraseRedisPrefix(store);
  const own = (store as { clear?: () => unknown }).clear;
  if (typeof own === 'function') {
    await own.call(store);
    return;
  }
  throw new RateLimitTestingError(
    `RateLimitTesting.reset() cannot erase a ${store.constructor?.name ?? 'custom'} store: it knows the memory and Redis stores, and stores with a clear() method. Give the store a clear(), or a key prefix of its own per test.`,
  );
}

/** Forgets the leases held in this process; those in Redis go with the store's keys (the same prefix). */
export function eraseLeases(leases: LeaseStore): void {
  if (leases instanceof ResilientLeaseStore) return eraseLeases(leases.fallback);
  if (leases instanceof MemoryLeaseStore) leases.clear();
}

async function eraseRedisPrefix(store: RedisStore): Promise<void> {
  const port = recognizeClient(store.client);
  if (!port) throw new RateLimitTestingError('RateLimitTesting.reset(): the Redis store\'s client is of no supported library');
  if (port.isCluster) {
    throw new RateLimitTestingError(
      'RateLimitTesting.reset() erases keys with SCAN, which sees one node of a Redis Cluster: on a Cluster, give each test a key prefix of its own instead',
    );
  }
  eraseScript ??= luaScript(loadScript('erase-prefix'));
  const pattern = `${store.keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}:*`;
  let cursor = '0';
  do {
    const [next] = await port.runScript<[string | number, number]>(eraseScript, [], [cursor, pattern]);
    cursor = String(next);
  } while (cursor !== '0');
}
