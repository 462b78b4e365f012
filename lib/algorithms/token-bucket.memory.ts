import { answer, type MemoryAlgorithm } from './algorithm.interface.js';
import { ceilDiv, idiv, intervalOf, storeInstant, unitsUntil, type Instant } from './exact-instant.js';

/** Twin of lua/token-bucket.lua: the value is the instant the bucket is full again (see exact-instant.ts). */
export const tokenBucketMemory: MemoryAlgorithm<Instant> = {
  check(entry, r, now, cost, apply, out) {
    const [interval, d] = intervalOf(r, r.param);
    const capacity = r.limit * interval;
    const debt = unitsUntil(entry, now, d, capacity);
    const after = debt + cost * interval;
    if (after <= capacity) {
      if (apply) storeInstant(entry, now, after, d);
      return answer(out, true, idiv(capacity - after, interval), ceilDiv(after, d), 0);
    }
    return answer(out, false, idiv(capacity - debt, interval), ceilDiv(debt, d), ceilDiv(after - capacity, d));
  },
  refund(entry, r, now, cost) {
    const [interval, d] = intervalOf(r, r.param);
    const debt = unitsUntil(entry, now, d, r.limit * interval) - cost * interval;
    if (debt <= 0) entry.value = undefined;
    else storeInstant(entry, now, debt, d);
  },
};
