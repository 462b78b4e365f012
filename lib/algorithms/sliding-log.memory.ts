import { answer, expiryAfter, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/sliding-log.lua: the sorted set becomes an ascending array of entry times (µs). */
export const slidingLogMemory: MemoryAlgorithm<number[]> = {
  check(entry, r, now, cost, apply, out) {
    const log = entry.value ?? [];
    let expired = 0;
    while (expired < log.length && log[expired] <= now - r.window) expired++;
    if (expired > 0) log.splice(0, expired);
    // Like Redis, which deletes a sorted set once its last member is gone.
    if (log.length === 0) entry.value = undefined;
    const count = log.length;
    const newest = count > 0 ? log[count - 1] : undefined;
    const at = newest === undefined ? now : Math.max(now, newest);
    if (count + cost <= r.limit) {
      if (apply) {
        for (let i = 0; i < cost; i++) log.push(at);
        entry.value = log;
        entry.expiresAt = expiryAfter(now, at + r.window - now);
      }
      if (cost === 0) return answer(out, true, r.limit - count, newest === undefined ? 0 : newest + r.window - now, 0);
      return answer(out, true, r.limit - count - cost, at + r.window - now, 0);
    }
    // More than the limit in force (an override's, cut below the cost): no wait lets it through.
    if (cost > r.limit) return answer(out, false, r.limit - count, newest === undefined ? 0 : newest + r.window - now, -1);
    const freeing = log[count + cost - r.limit - 1];
    return answer(out, false, r.limit - count, (newest as number) + r.window - now, freeing + r.window - now);
  },
  refund(entry, _r, _now, cost) {
    entry.value?.splice(Math.max(0, entry.value.length - cost), cost);
    if (entry.value?.length === 0) entry.value = undefined;
  },
};
