import type { Decision, MultiDecision } from './decision.interface.js';
import type { RateLimitRule } from './rule.interface.js';
import type { OverrideStore } from './override.interface.js';
import type { BudgetStore } from './budget.interface.js';

/** One rule applied to one tracker (a user id, an IP, a phone number...). */
export interface RuleKey {
  /** The tracker: any string. It is hashed when long or unsafe, so Redis keys stay bounded. */
  key: string;
  rule: RateLimitRule;
  /** Units this rule charges, when it differs from the call's `cost` (stacked rules of one request may differ). */
  cost?: number;
  /**
   * A shadow rule (`mode: 'shadow'`): decided on its own, after the rules in force admit, and its refusal does
   * not refuse (RateLimitService only; stores ignore it).
   */
  shadow?: boolean;
}

/** Where limits are decided: Redis (atomically, in Lua) or the embedded memory store. Both decide alike. */
export interface RateLimitStore {
  /** Admits and records a request of `cost` units if the rule allows it; records nothing otherwise. */
  consume(key: string, rule: RateLimitRule, cost?: number): Promise<Decision>;
  /** Admits only if every rule admits, then records in all of them; if any refuses, records nothing anywhere. `cost` applies to entries that name none. */
  consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision>;
  /** The decision `consume` would return now, without recording anything. */
  peek(key: string, rule: RateLimitRule, cost?: number): Promise<Decision>;
  /** Gives back `cost` units that a `consume` took (never more than were taken). */
  refund(key: string, rule: RateLimitRule, cost?: number): Promise<void>;
  /** Forgets everything the rule holds for this tracker, lockout included. */
  reset(key: string, rule: RateLimitRule): Promise<void>;
  /** Per-tracker overrides of the rules with `overrides: true`, which this store's decisions apply; absent if it has none. */
  readonly overrides?: OverrideStore;
  /** Where rules with `localBudget` take units ahead and give back what they did not spend; absent if the store has none. */
  readonly budgets?: BudgetStore;
  /** Stops the store's own background work when the module closes (never the client it was given); absent if it has none. */
  close?(): void;
}
