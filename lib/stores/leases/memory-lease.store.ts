import type { Clock } from '../../interfaces/clock.interface.js';
import type { LeaseDecision, LeaseHandle, LeaseStore } from '../../interfaces/lease-store.interface.js';
import type { RateLimitRule } from '../../interfaces/rule.interface.js';
import { leaseKey } from '../../keys/key.builder.js';
import { checkLeaseCall, newLeaseId } from './lease.check.js';
import { monotonic } from '../monotonic.clock.js';

export interface MemoryLeaseStoreOptions {
  /** Prefix of every key, as in the Redis store (keys are only map keys here). @default 'rl' */
  keyPrefix?: string;
  /** Time source in ms since the epoch. @default a monotonic clock (performance.timeOrigin + performance.now()) */
  clock?: Clock;
}

/**
 * The leases of concurrency rules in this process: the in-memory twin of lua/concurrency.lua, step by step
 * (expired leases dropped first, then the count against the limit). A tracker's entry goes with its last lease.
 */
export class MemoryLeaseStore implements LeaseStore {
  private readonly prefix: string;
  private readonly clock: Clock;
  /** Lease ids and their expiry (ms since the epoch), per tracker key. */
  private readonly sets = new Map<string, Map<string, number>>();

  constructor(options: MemoryLeaseStoreOptions = {}) {
    this.prefix = options.keyPrefix ?? 'rl';
    this.clock = options.clock ?? monotonic;
  }

  async acquire(key: string, rule: RateLimitRule): Promise<LeaseDecision> {
    checkLeaseCall(key, rule);
    const setKey = leaseKey(this.prefix, rule, key);
    const now = this.clock();
    const leases = this.live(setKey, now);
    if (leases.size >= rule.limit) {
      let oldest = Infinity;
      for (const expiry of leases.values()) oldest = Math.min(oldest, expiry);
      return { acquired: false, limit: rule.limit, inFlight: leases.size, retryAfterMs: Math.max(1, Math.ceil(oldest - now)) };
    }
    const id = newLeaseId();
    leases.set(id, now + rule.leaseMs!);
    this.sets.set(setKey, leases);
    return { acquired: true, limit: rule.limit, inFlight: leases.size, retryAfterMs: 0, lease: this.handle(setKey, id, rule.leaseMs!) };
  }

  /** Drops every lease (the testing kit's reset between tests). */
  clear(): void {
    this.sets.clear();
  }

  /** Leases held now under `rule` for `key` (for tests and diagnostics). */
  inFlight(key: string, rule: RateLimitRule): number {
    return this.live(leaseKey(this.prefix, rule, key), this.clock()).size;
  }

  private handle(setKey: string, id: string, leaseMs: number): LeaseHandle {
    return {
      id,
      renew: async () => {
        const now = this.clock();
        const leases = this.live(setKey, now);
        if (!leases.has(id)) return false;
        leases.set(id, now + leaseMs);
        return true;
      },
      release: async () => {
        const leases = this.live(setKey, this.clock());
        leases.delete(id);
        if (leases.size === 0) this.sets.delete(setKey);
      },
    };
  }

  /** The tracker's leases without those expired at `now` (an expiry of now or earlier is over, as in the script). */
  private live(setKey: string, now: number): Map<string, number> {
    const leases = this.sets.get(setKey);
    if (!leases) return new Map();
    for (const [id, expiry] of leases) if (expiry <= now) leases.delete(id);
    if (leases.size === 0) this.sets.delete(setKey);
    return leases;
  }
}
