import calculateSlot from 'cluster-key-slot';
import type { LeaseStore } from '../interfaces/lease-store.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';
import { ResilientLeaseStore } from '../resilience/resilient-lease.store.js';
import { ResilientStore } from '../resilience/resilient.store.js';
import { MemoryLeaseStore } from '../stores/leases/memory-lease.store.js';
import { MemoryStore } from '../stores/memory/memory.store.js';
import { recognizeClient } from '../stores/redis/clients/client.recognizer.js';
import { loadScript } from '../stores/redis/lua-script.loader.js';
import type { RedisClientPort } from '../stores/redis/clients/redis-client.port.js';
import { luaScript, type LuaScript } from '../stores/redis/clients/redis-script.call.js';
import { RedisStore } from '../stores/redis/redis.store.js';
import { RateLimitTestingError } from './rate-limit-testing.error.js';

let eraseScript: LuaScript | undefined;

/**
 * Forgets everything a store holds: the memory store's table, or every key under the Redis store's prefix (one
 * SCAN page per script call, never FLUSHALL; on a Cluster, on each primary), and the failure policy's memory store
 * behind it. A store of another
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
  const pattern = `${store.keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}:*`;
  if (port.isCluster) return eraseOnEachPrimary(port, pattern);
  eraseScript ??= luaScript(loadScript('erase-prefix'));
  let cursor = '0';
  do {
    const [next] = await port.runScript<[string | number, number]>(eraseScript, [], [cursor, pattern]);
    cursor = String(next);
  } while (cursor !== '0');
}

/** Keys a SCAN page asks each node for: as in lua/erase-prefix.lua. */
const SCAN_COUNT = '1000';
/** UNLINK commands in flight per node at most: GLIDE refuses requests past 1,000 in flight by default. */
const UNLINKS_IN_FLIGHT = 64;

/**
 * On a Cluster, SCAN sees the keys of the node it runs on: each primary is scanned, and the keys found there are
 * unlinked there, one UNLINK per slot (a command's keys must share one; a script touching several needs Redis 7).
 */
async function eraseOnEachPrimary(port: RedisClientPort, pattern: string): Promise<void> {
  if (!port.primaries) throw new RateLimitTestingError(`RateLimitTesting.reset() cannot reach each node of a Redis Cluster through a ${port.library} client: on a Cluster with this client, give each test a key prefix of its own instead`);
  const primaries = await port.primaries();
  if (primaries.length === 0) throw new RateLimitTestingError(`RateLimitTesting.reset(): the ${port.library} Cluster client knows no primary node yet; connect it before the reset`);
  await Promise.all(
    primaries.map(async (primary) => {
      let cursor = '0';
      do {
        const [next, keys] = (await primary.send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT])) as [unknown, unknown[]];
        const slots = [...bySlot(keys.map(String)).values()];
        for (let i = 0; i < slots.length; i += UNLINKS_IN_FLIGHT) {
          await Promise.all(slots.slice(i, i + UNLINKS_IN_FLIGHT).map((slot) => primary.send(['UNLINK', ...slot])));
        }
        cursor = String(next);
      } while (cursor !== '0');
    }),
  );
}

function bySlot(keys: readonly string[]): Map<number, string[]> {
  const slots = new Map<number, string[]>();
  for (const key of keys) {
    const slot = calculateSlot(key);
    const same = slots.get(slot);
    if (same) same.push(key);
    else slots.set(slot, [key]);
  }
  return slots;
}
