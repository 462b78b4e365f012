import { expiryAfter, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/gcra.lua: the value is the theoretical arrival time (µs). */
export const gcraMemory: MemoryAlgorithm<number> = {
  check(entry, r, now, quantity, apply) {
    const t = Math.floor(r.window / r.limit);
    const tau = t * r.param;
    const tat = Math.max(entry.value ?? now, now);
    const increment = t * quantity;
    const newTat = tat + increment;
    const allowAt = newTat - tau;
    let allowed = true;
    let ttl = newTat - now;
    let retry = 0;
    if (now < allowAt) {
      allowed = false;
      ttl = tat - now;
      retry = increment <= tau ? allowAt - now : -1;
    } else if (apply && quantity > 0) {
      entry.value = newTat;
      entry.expiresAt = expiryAfter(now, ttl);
    }
    const nextFree = tau - ttl;
    return [allowed, nextFree > 0 ? Math.floor(nextFree / t) : 0, ttl, retry];
  },
  refund(entry, r, now, quantity) {
    if (entry.value === undefined) return;
    const tat = entry.value - quantity * Math.floor(r.window / r.limit);
    entry.value = tat <= now ? undefined : tat;
    if (tat > now) entry.expiresAt = expiryAfter(now, tat - now);
  },
};
