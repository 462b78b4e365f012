import { expiryAfter, type MemoryAlgorithm } from './algorithm.interface.js';
import { ceilDiv, idiv, instantAfter, reducedInterval, unitsUntil, type Instant } from './exact-instant.js';

/** Twin of lua/gcra.lua: the value is the theoretical arrival time (see exact-instant.ts). */
export const gcraMemory: MemoryAlgorithm<Instant> = {
  check(entry, r, now, quantity, apply) {
    const [t, d] = reducedInterval(r.window, r.limit);
    const tau = t * r.param;
    // TAT - now, in units of 1/d µs; at most tau, so a lowered burst applies at once.
    const tat = unitsUntil(entry, now, d, tau);
    const increment = t * quantity;
    const newTat = tat + increment;
    let allowed = true;
    let ttl = newTat;
    let retry = 0;
    if (newTat > tau) {
      allowed = false;
      ttl = tat;
      retry = increment <= tau ? ceilDiv(newTat - tau, d) : -1;
    } else if (apply && quantity > 0) {
      const next = instantAfter(now, newTat, d);
      entry.value = next.value;
      entry.expiresAt = expiryAfter(now, next.us);
    }
    return [allowed, tau > ttl ? idiv(tau - ttl, t) : 0, ceilDiv(ttl, d), retry];
  },
  refund(entry, r, now, quantity) {
    const [t, d] = reducedInterval(r.window, r.limit);
    const tat = unitsUntil(entry, now, d, t * r.param) - quantity * t;
    if (tat <= 0) {
      entry.value = undefined;
      return;
    }
    const next = instantAfter(now, tat, d);
    entry.value = next.value;
    entry.expiresAt = expiryAfter(now, next.us);
  },
};
