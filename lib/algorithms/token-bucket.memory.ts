import { expiryAfter, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/token-bucket.lua: the value is the instant (µs) the bucket is full again. */
export const tokenBucketMemory: MemoryAlgorithm<number> = {
  check(entry, r, now, cost, apply) {
    const interval = Math.floor(r.window / r.param);
    const capacity = r.limit * interval;
    const debt = Math.max(0, (entry.value ?? now) - now);
    const after = debt + cost * interval;
    if (after <= capacity) {
      if (apply) {
        entry.value = now + after;
        entry.expiresAt = expiryAfter(now, after);
      }
      return [true, Math.floor((capacity - after) / interval), after, 0];
    }
    return [false, Math.floor((capacity - debt) / interval), debt, after - capacity];
  },
  refund(entry, r, now, cost) {
    if (entry.value === undefined) return;
    const debt = entry.value - now - cost * Math.floor(r.window / r.param);
    entry.value = debt <= 0 ? undefined : now + debt;
    if (debt > 0) entry.expiresAt = expiryAfter(now, debt);
  },
};
