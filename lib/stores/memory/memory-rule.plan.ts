import { ALGORITHM_DEFINITIONS } from '../../algorithms/algorithm.registry.js';
import type { AlgorithmRule, MemoryAlgorithm } from '../../algorithms/algorithm.interface.js';
import { maxCost } from '../../rules/define-rule.js';
import type { RateLimitRule, WindowAlgorithm } from '../../interfaces/rule.interface.js';
import { checkEntry, type CallOp } from '../call.validator.js';
import type { KeySpace, MemoryKeyTable } from './memory-key.table.js';

/** One rule as the memory store decides it: everything that does not change from one call to the next. */
export interface MemoryRulePlan {
  readonly rule: RateLimitRule;
  readonly algorithm: MemoryAlgorithm<unknown>;
  /** The rule in the algorithms' units (µs), as the Lua driver builds it from ARGV. */
  readonly params: AlgorithmRule;
  /** The lockout's length in µs; 0 = none. */
  readonly blockUs: number;
  /** What `Decision.limit` reports. */
  readonly capacity: number;
  /** The most units one call may ask for. */
  readonly maxCost: number;
  /** The rule's state keys, `<prefix>:<rule>:<tag>:` as in Redis, by tracker. */
  state: KeySpace;
  /** The rule's lockouts, `<prefix>:<rule>:…:block` as in Redis (whatever the algorithm), by tracker. */
  lockout: KeySpace;
}

/**
 * The memory store's plans, one per rule object (rules from `defineRule` and the module are frozen, so a plan never
 * goes stale; a rule object that is not frozen gets a fresh plan on every call).
 */
export class MemoryRulePlans {
  private readonly plans = new WeakMap<RateLimitRule, MemoryRulePlan>();
  /** The plan last found, checked before the WeakMap: most calls name the rule of the call before. */
  private last: MemoryRulePlan | undefined;

  constructor(
    private readonly prefix: string,
    private readonly table: MemoryKeyTable,
  ) {}

  /** The plan of a rule already seen, or undefined (also for anything that is not a rule). */
  get(rule: RateLimitRule): MemoryRulePlan | undefined {
    if (this.last?.rule === rule) return this.last;
    const plan = this.plans.get(rule);
    if (plan !== undefined) this.last = plan;
    return plan;
  }

  /** Builds (and keeps) a rule's plan; the call is checked first, so a bad one gets `checkEntry`'s error. */
  build(rule: RateLimitRule, key: unknown, cost: number, op: CallOp): MemoryRulePlan {
    checkEntry(key, rule, cost, op);
    // checkEntry refused a rule without a definition (a concurrency rule: leases are not decisions).
    const definition = ALGORITHM_DEFINITIONS[rule.algorithm as WindowAlgorithm];
    const head = `${this.prefix}:${rule.name}:`;
    const plan: MemoryRulePlan = {
      rule,
      algorithm: definition.memory,
      params: { limit: rule.limit, window: rule.windowMs * 1000, param: definition.param(rule) },
      blockUs: rule.blockMs * 1000,
      capacity: definition.capacity(rule),
      maxCost: maxCost(rule),
      state: this.table.space(`${head}${definition.stateTag(rule)}:`),
      lockout: this.table.space(`${head}{*}:block`),
    };
    if (Object.isFrozen(rule)) this.plans.set(rule, plan);
    return plan;
  }

  /** The plan's state space, asked for again if the table has forgotten it (it was empty). */
  state(plan: MemoryRulePlan): KeySpace {
    return plan.state.attached ? plan.state : (plan.state = this.table.space(plan.state.name));
  }

  lockout(plan: MemoryRulePlan): KeySpace {
    return plan.lockout.attached ? plan.lockout : (plan.lockout = this.table.space(plan.lockout.name));
  }
}
