import type { RateLimitRule } from '../../interfaces/rule.interface.js';

/** A caller's mistake, thrown before any store is involved: a tracker that is not a string, a rule that is not a concurrency rule. */
export function checkLeaseCall(key: unknown, rule: RateLimitRule): void {
  if (typeof key !== 'string') throw new TypeError(`Invalid tracker key ${String(key)}: expected a string`);
  if (rule === null || typeof rule !== 'object' || rule.algorithm !== 'concurrency' || !Number.isSafeInteger(rule.leaseMs)) {
    throw new TypeError(`Invalid rule ${String((rule as { name?: unknown } | null)?.name ?? rule)}: leases are taken under a rule of algorithm 'concurrency' (from defineRule or the module's rules)`);
  }
}

/** A lease id: random, so that two processes never take the same one. */
export function newLeaseId(): string {
  return globalThis.crypto.randomUUID();
}
