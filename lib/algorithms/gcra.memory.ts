import { answer, type MemoryAlgorithm } from './algorithm.interface.js';
import { ceilDiv, idiv, intervalOf, storeInstant, unitsUntil, type Instant } from './exact-instant.js';

/** Twin of lua/gcra.lua: the value is the theoretical arrival time (see exact-instant.ts). */
export const gcraMemory: MemoryAlgorithm<Instant> = {
  check(entry, r, now, quantity, apply, out) {
    const [t, d] = intervalOf(r, r.limit);
    const tau = t * r.param;
    // TAT - now, in units of 1/d µs; at most tau, so a lowered burst applies at once.
    const tat = unitsUntil(entry, now, d, tau);
    const increment = t * quantity;
    const newTat = tat + increment;
    if (newTat > tau) {
      return answer(out, false, tau > tat ? idiv(tau - tat, t) : 0, ceilDiv(tat, d), increment <= tau ? ceilDiv(newTat - tau, d) : -1);
    }
    if (apply && quantity > 0) storeInstant(entry, now, newTat, d);
    return answer(out, true, tau > newTat ? idiv(tau - newTat, t) : 0, ceilDiv(newTat, d), 0);
  },
  refund(entry, r, now, quantity) {
    const [t, d] = intervalOf(r, r.limit);
    const tat = unitsUntil(entry, now, d, t * r.param) - quantity * t;
    if (tat <= 0) entry.value = undefined;
    else storeInstant(entry, now, tat, d);
  },
};
