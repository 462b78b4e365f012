import { answer, expiryAfter, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/fixed-window.lua: the same single integer, window end (µs) + count. */
export const fixedWindowMemory: MemoryAlgorithm<number> = {
  check(entry, r, now, cost, apply, out) {
    const windowEnd = now - (now % r.window) + r.window;
    const value = entry.value;
    // A value of another window (or none) counts nothing: the window starts afresh.
    const fresh = value === undefined || value - (value % r.window) !== windowEnd;
    const count = fresh ? 0 : value % r.window;
    if (count + cost <= r.limit) {
      if (apply) {
        if (fresh) entry.expiresAt = expiryAfter(now, windowEnd - now);
        entry.value = windowEnd + count + cost;
      }
      if (cost === 0 && count === 0) return answer(out, true, r.limit, 0, 0);
      return answer(out, true, r.limit - count - cost, windowEnd - now, 0);
    }
    return answer(out, false, r.limit - count, windowEnd - now, windowEnd - now);
  },
  refund(entry, r, now, cost) {
    const windowEnd = now - (now % r.window) + r.window;
    const value = entry.value;
    if (value === undefined || value - (value % r.window) !== windowEnd) return;
    const count = value % r.window;
    if (count > 0) entry.value = value - Math.min(cost, count);
  },
};
