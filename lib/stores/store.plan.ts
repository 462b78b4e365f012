import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import type { AlgorithmDefinition } from '../algorithms/algorithm.interface.js';
import { maxCost } from '../rules/define-rule.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule, WindowAlgorithm } from '../interfaces/rule.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import { ruleKeys, trackerSegment, type RuleKeys } from '../keys/key.builder.js';
import { checkEntry, type CallOp } from './call.validator.js';
import { RateLimitCostError } from './rate-limit-cost.error.js';

/** What a store call does (see CallOp). */
export type StoreOp = CallOp;

/** One rule of a request, resolved into what both stores' drivers work with. */
export interface PlannedRule {
  rule: RateLimitRule;
  /** The call's tracker, as given. */
  tracker: string;
  definition: AlgorithmDefinition;
  keys: RuleKeys;
  /** Units this rule charges in this call. */
  cost: number;
}

/**
 * The rules of one call, each rule name and tracker once (so each state and lockout key once), and where each of
 * the call's entries went. Entries that name the same tracker under the same rule are merged into one rule charging
 * the sum of their costs, so that they are decided together (all-or-nothing) and no call reports more admitted than
 * it charged.
 */
export interface RulePlan {
  rules: PlannedRule[];
  /** Per entry of the call, the index of its rule in `rules`; absent when no entry repeats another (one rule per entry). */
  entryRule?: number[];
}

/** Checks the cost against every rule (before any store is touched), resolves keys and parameters, and merges repeats. */
export function planRules(prefix: string, entries: readonly RuleKey[], defaultCost: number, op: StoreOp): RulePlan {
  if (entries.length === 0) throw new RangeError('At least one { key, rule } is needed');
  const rules = entries.map((entry) => planEntry(prefix, entry, defaultCost, op));
  return rules.length === 1 ? { rules } : mergeRepeats(entries, rules, op);
}

/** One rule of a call with its tracker and what it charges, repeats merged: what a store needs besides its keys. */
export type CallRule = Pick<PlannedRule, 'rule' | 'tracker' | 'cost'>;

/**
 * The call checked and its repeats merged, as `planRules` does, without building keys: for the memory store, whose
 * keys are its own, and for ResilientStore, which must refuse a caller's mistake before the store and its breaker
 * are involved.
 */
export function mergeCall(entries: readonly RuleKey[], defaultCost: number, op: StoreOp): { rules: CallRule[]; entryRule?: number[] } {
  if (entries.length === 0) throw new RangeError('At least one { key, rule } is needed');
  const rules = entries.map(({ key, rule, cost = defaultCost }): CallRule => {
    checkEntry(key, rule, cost, op);
    return { rule, tracker: key, cost };
  });
  return rules.length === 1 ? { rules } : mergeRepeats(entries, rules, op);
}

function planEntry(prefix: string, { key, rule, cost }: RuleKey, defaultCost: number, op: StoreOp): PlannedRule {
  return planRule(prefix, key, rule, cost ?? defaultCost, op);
}

/** One `{ key, rule, cost }` checked and resolved: `planRules` of one entry, without the arrays around it. */
export function planRule(prefix: string, key: string, rule: RateLimitRule, cost: number, op: StoreOp): PlannedRule {
  checkEntry(key, rule, cost, op);
  // checkEntry refused a rule without a definition (a concurrency rule: leases are not decisions).
  const definition = ALGORITHM_DEFINITIONS[rule.algorithm as WindowAlgorithm];
  return {
    rule,
    tracker: key,
    definition,
    keys: ruleKeys(prefix, rule, key),
    cost,
  };
}

/**
 * One rule per rule name and tracker, charging the sum of the costs of the entries that repeat it. Without this,
 * the driver checked each repeat against the same unchanged state: 100 entries under a limit of 5 all passed the
 * check, and only the charges that still fitted were written.
 */
function mergeRepeats<P extends CallRule>(entries: readonly RuleKey[], planned: P[], op: StoreOp): { rules: P[]; entryRule?: number[] } {
  const indexOf = new Map<string, number>();
  const firstEntry: number[] = [];
  const rules: P[] = [];
  const entryRule = planned.map((p, i) => {
    // Repeats are found by rule name and tracker (what the lockout key names), not by the state key, which may
    // also name the algorithm or its parameters: one name under two definitions for one tracker is refused.
    const id = `${p.rule.name}\u0000${p.tracker}`;
    const j = indexOf.get(id);
    if (j === undefined) {
      indexOf.set(id, rules.length);
      firstEntry.push(i);
      return rules.push(p) - 1;
    }
    const merged = rules[j];
    if (!sameDefinition(merged.rule, p.rule)) {
      throw new RangeError(
        `Entries ${firstEntry[j]} and ${i} name rule "${p.rule.name}" for tracker "${trackerSegment(entries[i].key)}" with ` +
          `different definitions (${describeRule(merged.rule)}; ${describeRule(p.rule)}): one tracker under one rule name has one definition`,
      );
    }
    merged.cost += p.cost;
    return j;
  });
  if (rules.length === planned.length) return { rules };
  // Checked on the whole sum, so that the message says what the call adds up to.
  rules.forEach((r, j) => {
    if (op !== 'refund' && r.cost > maxCost(r.rule)) {
      throw new RateLimitCostError(
        `Entries repeat tracker "${trackerSegment(entries[firstEntry[j]].key)}" under rule "${r.rule.name}" and add up to ` +
          `${r.cost} units, more than it can ever admit (${maxCost(r.rule)}): the call would be refused forever`,
      );
    }
  });
  return { rules, entryRule };
}

/** Everything that changes how a rule decides (the name is the same). */
function sameDefinition(a: RateLimitRule, b: RateLimitRule): boolean {
  return a === b || (a.algorithm === b.algorithm && a.limit === b.limit && a.windowMs === b.windowMs && a.segments === b.segments && a.blockMs === b.blockMs && a.refill === b.refill && a.burst === b.burst && a.lockoutFactor === b.lockoutFactor && a.lockoutMaxMs === b.lockoutMaxMs && a.lockoutForgetMs === b.lockoutForgetMs && a.lockoutRestartsCount === b.lockoutRestartsCount && a.overrides === b.overrides);
}

function describeRule({ algorithm, limit, windowMs, segments, blockMs, refill, burst, lockoutFactor, lockoutMaxMs, lockoutForgetMs, lockoutRestartsCount }: RateLimitRule): string {
  const escalation = lockoutFactor === undefined ? '' : ` (× ${lockoutFactor} up to ${lockoutMaxMs} ms, forgotten after ${lockoutForgetMs} ms)`;
  return `${algorithm}, limit ${limit}, window ${windowMs} ms, segments ${segments}, blockMs ${blockMs}${escalation}${lockoutRestartsCount ? ', afterLockout restart' : ''}, refill ${refill}, burst ${burst}`;
}

/** One decision per entry of the call: each repeat gets its own copy of its merged rule's decision. */
export function expandDecisions(plan: { entryRule?: number[] }, result: MultiDecision): MultiDecision {
  const { entryRule } = plan;
  if (!entryRule) return result;
  return { allowed: result.allowed, decisions: entryRule.map((j) => ({ ...result.decisions[j] })) };
}

/** The Decision for one rule, from what both drivers produce (times already in ms); `limit` is the rule's capacity. */
export function toDecision(limit: number, allowed: boolean, remaining: number, resetAfterMs: number, retryAfterMs: number): Decision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, remaining),
    resetAfterMs: Math.max(0, resetAfterMs),
    retryAfterMs: allowed ? 0 : retryAfterMs,
  };
}

/** µs → ms, rounded up, so that waiting the reported time is always enough: the waits of both stores' decisions. */
export function ceilMs(us: number): number {
  return us <= 0 ? 0 : Math.ceil(us / 1000);
}
