import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import { maxCost } from '../config/define-rule.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import { RateLimitCostError } from './rate-limit-cost.error.js';

/** What a store call does with its cost: `peek` may ask about 0 units, `refund` may give back more than a rule admits at once. */
export type CallOp = 'consume' | 'peek' | 'refund';

/**
 * Throws the caller's error for a call no store could decide: no entries, a tracker that is not a string, a
 * rule that is not one, a cost that is not an integer of 1 or more (0 or more for `peek`), or a cost a rule can
 * never admit. Run before the store and its circuit breaker are involved, so a caller's mistake is never taken
 * for (or hidden behind) a store failure.
 */
export function validateCall(entries: readonly RuleKey[], defaultCost: number, op: CallOp): void {
  if (entries.length === 0) throw new RangeError('At least one { key, rule } is needed');
  const min = op === 'peek' ? 0 : 1;
  for (const { key, rule, cost: own } of entries) {
    const cost = own ?? defaultCost;
    if (!Number.isSafeInteger(cost) || cost < min) {
      throw new RateLimitCostError(`Invalid cost ${String(cost)}: expected an integer of ${min} or more`);
    }
    if (typeof key !== 'string') throw new TypeError(`Invalid tracker key ${String(key)}: expected a string`);
    if (rule === null || typeof rule !== 'object' || !Object.hasOwn(ALGORITHM_DEFINITIONS, rule.algorithm)) {
      throw new TypeError(`Invalid rule ${String((rule as { name?: unknown } | undefined)?.name ?? rule)}: expected a rule from defineRule or the module's rules`);
    }
    if (op !== 'refund' && cost > maxCost(rule)) {
      throw new RateLimitCostError(`Cost ${cost} exceeds what rule "${rule.name}" can ever admit (${maxCost(rule)}): it would be refused forever`);
    }
  }
}
