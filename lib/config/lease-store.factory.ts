import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { LeaseStore } from '../interfaces/lease-store.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';
import { ResilientLeaseStore } from '../resilience/resilient-lease.store.js';
import { ResilientStore } from '../resilience/resilient.store.js';
import { MemoryLeaseStore } from '../stores/leases/memory-lease.store.js';
import { RedisLeaseStore } from '../stores/leases/redis-lease.store.js';
import type { StoreHandle } from './store.factory.js';

/**
 * Where the module keeps the leases of concurrency rules: beside the decisions, on the same Redis client behind
 * the same failure policy, timeout and circuit; in this process when the store is memory or a custom store
 * (a `RateLimitStore` has no leases).
 */
export function createLeaseStore(handle: StoreHandle, settings: RateLimitSettings, store: RateLimitStore, onError: (error: Error, op: string) => void): LeaseStore {
  const memory = new MemoryLeaseStore({ keyPrefix: settings.keyPrefix, clock: settings.clock });
  if (!handle.client) return memory;
  return new ResilientLeaseStore(new RedisLeaseStore(handle.client, { keyPrefix: settings.keyPrefix, clock: settings.clock }), memory, {
    timeoutMs: settings.timeoutMs,
    failurePolicy: settings.failurePolicy,
    breaker: store instanceof ResilientStore ? store.breaker : undefined,
    onError,
  });
}
