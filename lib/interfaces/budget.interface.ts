import type { Decision } from './decision.interface.js';
import type { RateLimitRule } from './rule.interface.js';

/** Units of a rule's budget taken ahead by one app instance, to spend locally (a rule with `localBudget`). */
export interface BudgetGrant {
  /**
   * The store's decision on the units asked, as `consume` of that many would return (a refusal starts no lockout and
   * takes nothing); when the store could not decide, a refusal marked `degraded` with the failure policy.
   */
  decision: Decision;
  /** Units taken: all those asked, or 0 (refused, or decided by the failure policy). */
  units: number;
  /**
   * How long after the take was asked for its units may still be spent, in ms: until the fixed window (or the
   * sliding window's cell) that counted them ends, rounded down. Undefined: no such end (token bucket, GCRA).
   */
  spendWithinMs?: number;
  /** What `giveBack` needs to refuse a late return (opaque: the end above on the store's clock). */
  ticket: number;
}

/** Where local budgets are taken from and given back to: the Redis store (the memory store decides locally anyway). */
export interface BudgetStore {
  /** Takes `units` of the rule's budget for `key`, all or nothing. */
  take(key: string, rule: RateLimitRule, units: number): Promise<BudgetGrant>;
  /** Gives back `units` of a take, unless its units no longer count where they were taken (then nothing). */
  giveBack(key: string, rule: RateLimitRule, units: number, ticket: number): Promise<void>;
}
