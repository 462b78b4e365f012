import { INTEGER, answer, expiryAfter, floorTo, type IntegerState, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/fixed-window.lua: the same single integer, window end (µs) + count, in the entry's `integer`. */
export const fixedWindowMemory: MemoryAlgorithm<IntegerState> = {
  check(entry, r, now, cost, apply, out) {
    const windowEnd = floorTo(now, r.window) + r.window;
    // A value of another window (or none) counts nothing: the window starts afresh. The count is below the window
    // (limit < window µs), so a value of this window lies in [windowEnd, windowEnd + window).
    const held = entry.value === undefined ? -1 : entry.integer - windowEnd;
    const fresh = held < 0 || held >= r.window;
    const count = fresh ? 0 : held;
    if (count + cost <= r.limit) {
      if (apply) {
        if (fresh) entry.expiresAt = expiryAfter(now, windowEnd - now);
        entry.integer = windowEnd + count + cost;
        entry.value = INTEGER;
      }
      if (cost === 0 && count === 0) return answer(out, true, r.limit, 0, 0);
      return answer(out, true, r.limit - count - cost, windowEnd - now, 0);
    }
    return answer(out, false, r.limit - count, windowEnd - now, windowEnd - now);
  },
  refund(entry, r, now, cost) {
    const windowEnd = floorTo(now, r.window) + r.window;
    const count = entry.value === undefined ? -1 : entry.integer - windowEnd;
    if (count < 0 || count >= r.window) return;
    if (count > 0) entry.integer = windowEnd + count - Math.min(cost, count);
  },
};
