import { expiryAfter, type MemoryAlgorithm } from './algorithm.interface.js';
import { ceilDiv, idiv, instantAfter, reducedInterval, unitsUntil, type Instant } from './exact-instant.js';

/** Twin of lua/token-bucket.lua: the value is the instant the bucket is full again (see exact-instant.ts). */
export const tokenBucketMemory: MemoryAlgorithm<Instant> = {
  check(entry, r, now, cost, apply) {
    const [interval, d] = reducedInterval(r.window, r.param);
    const capacity = r.limit * interval;
    const debt = unitsUntil(entry, now, d, capacity);
    const after = debt + cost * interval;
    if (after <= capacity) {
      if (apply) {
        const full = instantAfter(now, after, d);
        entry.value = full.value;
        entry.expiresAt = expiryAfter(now, full.us);
      }
      return [true, idiv(capacity - after, interval), ceilDiv(after, d), 0];
    }
    return [false, idiv(capacity - debt, interval), ceilDiv(debt, d), ceilDiv(after - capacity, d)];
  },
  refund(entry, r, now, cost) {
    const [interval, d] = reducedInterval(r.window, r.param);
    const debt = unitsUntil(entry, now, d, r.limit * interval) - cost * interval;
    if (debt <= 0) {
      entry.value = undefined;
      return;
    }
    const full = instantAfter(now, debt, d);
    entry.value = full.value;
    entry.expiresAt = expiryAfter(now, full.us);
  },
};
