import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import { maxCost } from '../rules/define-rule.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { RateLimitCostError } from './rate-limit-cost.error.js';

/**
 * What a store call does with its cost: `peek` may ask about 0 units, `refund` may give back more than a rule admits
 * at once. `lease` takes units ahead for a local budget (as a consume whose refusal starts no lockout), `return` gives
 * units of such a take back (as a refund, only while they still count where they were taken).
 */
export type CallOp = 'consume' | 'peek' | 'refund' | 'lease' | 'return';

/**
 * Throws the caller's error for one `{ key, rule, cost }` no store could decide: a cost that is not an integer of
 * 1 or more (0 or more for `peek`), a tracker that is not a string, a rule that is not one, or a cost the rule can
 * never admit. `planRules` and `mergeCall` run it for every entry; `ResilientStore` runs it before the store and its circuit
 * breaker are involved, so that a caller's mistake is never taken for a store failure, nor left hanging a probe.
 */
export function checkEntry(key: unknown, rule: RateLimitRule, cost: number, op: CallOp): void {
  const min = op === 'peek' ? 0 : 1;
  if (!Number.isSafeInteger(cost) || cost < min) {
    throw new RateLimitCostError(`Invalid cost ${String(cost)}: expected an integer of ${min} or more`);
  }
  if (typeof key !== 'string') throw new TypeError(`Invalid tracker key ${String(key)}: expected a string`);
  if (rule === null || typeof rule !== 'object' || !Object.hasOwn(ALGORITHM_DEFINITIONS, rule.algorithm)) {
    throw new TypeError(`Invalid rule ${String((rule as { name?: unknown } | null)?.name ?? rule)}: expected a rule from defineRule or the module's rules`);
  }
  if (op !== 'refund' && op !== 'return' && cost > maxCost(rule)) {
    throw new RateLimitCostError(`Cost ${cost} exceeds what rule "${rule.name}" can ever admit (${maxCost(rule)}): it would be refused forever`);
  }
}
