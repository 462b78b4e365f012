import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import type { AlgorithmDefinition, AlgorithmRule } from '../algorithms/algorithm.interface.js';
import { maxCost } from '../config/define-rule.js';
import type { Decision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import { ruleKeys, type RuleKeys } from '../keys/key.builder.js';
import { RateLimitCostError } from './rate-limit-cost.error.js';

export type StoreOp = 'consume' | 'peek' | 'refund';

/** One rule of a request, resolved into what both stores' drivers work with. */
export interface PlannedRule {
  rule: RateLimitRule;
  definition: AlgorithmDefinition;
  keys: RuleKeys;
  /** The rule in the algorithms' units (µs), as the Lua driver builds it from ARGV. */
  params: AlgorithmRule;
  blockUs: number;
  /** Units this rule charges in this call. */
  cost: number;
}

/** Checks the cost against every rule (before any store is touched) and resolves keys and parameters. */
export function planRules(prefix: string, entries: readonly RuleKey[], defaultCost: number, op: StoreOp): PlannedRule[] {
  if (entries.length === 0) throw new RangeError('At least one { key, rule } is needed');
  const min = op === 'peek' ? 0 : 1;
  return entries.map(({ key, rule, cost: own }) => {
    const cost = own ?? defaultCost;
    if (!Number.isSafeInteger(cost) || cost < min) {
      throw new RateLimitCostError(`Invalid cost ${String(cost)}: expected an integer of ${min} or more`);
    }
    if (typeof key !== 'string') throw new TypeError(`Invalid tracker key ${String(key)}: expected a string`);
    if (op !== 'refund' && cost > maxCost(rule)) {
      throw new RateLimitCostError(`Cost ${cost} exceeds what rule "${rule.name}" can ever admit (${maxCost(rule)}): it would be refused forever`);
    }
    const definition = ALGORITHM_DEFINITIONS[rule.algorithm];
    return {
      rule,
      definition,
      keys: ruleKeys(prefix, rule, key),
      params: { limit: rule.limit, window: rule.windowMs * 1000, param: definition.param(rule) },
      blockUs: rule.blockMs * 1000,
      cost,
    };
  });
}

/** The Decision for one rule, from the four numbers both drivers produce (times already in ms). */
export function toDecision(planned: PlannedRule, allowed: boolean, remaining: number, resetAfterMs: number, retryAfterMs: number): Decision {
  return {
    allowed,
    limit: planned.definition.capacity(planned.rule),
    remaining: Math.max(0, remaining),
    resetAfterMs: Math.max(0, resetAfterMs),
    retryAfterMs: allowed ? 0 : retryAfterMs,
  };
}

/** µs → ms, rounded up (the Lua `ceil_ms`), so that waiting the reported time is always enough. */
export function ceilMs(us: number): number {
  return us <= 0 ? 0 : Math.ceil(us / 1000);
}
