import { answer, expiryAfter, floorTo, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/fixed-window.lua: the same single integer, window end (µs) + count. */
export const fixedWindowMemory: MemoryAlgorithm<number> = {
  check(entry, r, now, cost, apply, out) {
    const windowEnd = floorTo(now, r.window) + r.window;
    const value = entry.value;
    // A value of another window (or none) counts nothing: the window starts afresh. The count is below the window
    // (limit < window µs), so a value of this window lies in [windowEnd, windowEnd + window).
    const held = value === undefined ? -1 : value - windowEnd;
    const fresh = held < 0 || held >= r.window;
    const count = fresh ? 0 : held;
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
    const windowEnd = floorTo(now, r.window) + r.window;
    const value = entry.value;
    const count = value === undefined ? -1 : value - windowEnd;
    if (count < 0 || count >= r.window) return;
    if (count > 0) entry.value = windowEnd + count - Math.min(cost, count);
  },
};
