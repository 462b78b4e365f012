import { expiryAfter, type AlgorithmRule, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/fixed-window.lua: the same single integer, window end (µs) + count. */
function read(value: number | undefined, r: AlgorithmRule, now: number): { windowEnd: number; count: number; fresh: boolean } {
  const windowEnd = now - (now % r.window) + r.window;
  if (value !== undefined && value - (value % r.window) === windowEnd) return { windowEnd, count: value % r.window, fresh: false };
  return { windowEnd, count: 0, fresh: true };
}

export const fixedWindowMemory: MemoryAlgorithm<number> = {
  check(entry, r, now, cost, apply) {
    const { windowEnd, count, fresh } = read(entry.value, r, now);
    if (count + cost <= r.limit) {
      if (apply) {
        if (fresh) entry.expiresAt = expiryAfter(now, windowEnd - now);
        entry.value = windowEnd + count + cost;
      }
      if (cost === 0 && count === 0) return [true, r.limit, 0, 0];
      return [true, r.limit - count - cost, windowEnd - now, 0];
    }
    return [false, r.limit - count, windowEnd - now, windowEnd - now];
  },
  refund(entry, r, now, cost) {
    const { count } = read(entry.value, r, now);
    if (count > 0) entry.value = (entry.value as number) - Math.min(cost, count);
  },
};
