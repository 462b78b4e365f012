import { answer, checkResult, expiryAfter, type CheckResult } from '../../algorithms/algorithm.interface.js';
import { throttle, type ThrottleReply } from '../gcra.throttle.js';
import { cappedLockoutLevel, ruleLockoutMs } from '../../algorithms/lockout.escalation.js';
import { RateLimitConfigError } from '../../rules/rate-limit-config.error.js';
import type { Clock } from '../../interfaces/clock.interface.js';
import type { Decision, MultiDecision } from '../../interfaces/decision.interface.js';
import type { RateLimitRule } from '../../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../../interfaces/store.interface.js';
import { memoryTrackerKey } from '../../keys/key.builder.js';
import { checkEntry } from '../call.validator.js';
import { MemoryKeyTable } from './memory-key.table.js';
import { MemoryOverrideTable } from './memory-override.table.js';
import { monotonic, monotonicAt } from '../monotonic.clock.js';
import { MemoryRulePlans, type MemoryRulePlan } from './memory-rule.plan.js';
import { ceilMs, expandDecisions, mergeCall, toDecision, type StoreOp } from '../store.plan.js';

export interface MemoryStoreOptions {
  /** Prefix of every key, as in Redis. @default 'rl' */
  keyPrefix?: string;
  /** Time source in ms since the epoch. @default a monotonic clock (performance.timeOrigin + performance.now()) */
  clock?: Clock;
  /**
   * Most keys kept (rule state and lockouts together). When full, expired keys go first, then keys seen only
   * once, then about the least recently written counts (an approximate order, as Redis's LRU), and lockouts last
   * (see MemoryKeyTable). @default 100000
   */
  maxKeys?: number;
}

/**
 * The embedded store: the same algorithms as the Lua scripts (their twins in `algorithms/*.memory.ts`) and the
 * same driver, so the same sequence of (time, cost) gets the same decisions. Bounded: an entry past its expiry
 * is emptied when met (and a few of the oldest are checked every few writes), and at most `maxKeys` are kept, a
 * flood of distinct trackers displacing only other keys seen once, not counts or lockouts (see MemoryKeyTable).
 * Decisions are synchronous under the hood, so concurrent calls in one process are exact.
 */
export class MemoryStore implements RateLimitStore {
  private readonly entries: MemoryKeyTable;
  private readonly plans: MemoryRulePlans;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly maxKeys: number;
  /** The single-rule calls' check result, filled in place: decisions are synchronous, so one is enough. */
  private readonly scratch = checkResult();
  /** Per-tracker overrides of the rules with `overrides: true`, on this store's clock (see MemoryOverrideTable). */
  readonly overrides = new MemoryOverrideTable(() => this.now());

  constructor(options: MemoryStoreOptions = {}) {
    this.prefix = options.keyPrefix ?? 'rl';
    this.clock = options.clock ?? monotonic;
    this.maxKeys = options.maxKeys ?? 100_000;
    if (!Number.isSafeInteger(this.maxKeys) || this.maxKeys < 1) {
      throw new RateLimitConfigError('maxKeys', options.maxKeys, 'a positive integer: the most keys the memory store keeps');
    }
    this.entries = new MemoryKeyTable(this.maxKeys);
    this.plans = new MemoryRulePlans(this.prefix, this.entries);
  }

  /** Keys held now (rule state and lockouts). */
  get size(): number {
    return this.entries.size;
  }

  async consume(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.consumeOne(this.plan(key, rule, cost, 'consume'), key, cost, this.now());
  }

  async consumeAll(entries: readonly RuleKey[], cost = 1): Promise<MultiDecision> {
    return this.consumeAllNow(entries, cost);
  }

  /**
   * `consumeAll`, decided synchronously: what RateLimitService.decide calls, with no promise in between.
   * `performanceNow`: what `performance.now()` returned just before, if the caller read it (to time the decision):
   * the instant of the decision when this store runs on the default clock, which then is not read again (a clock
   * read is a sixth of a decision). 0 or undefined: not read (the caller did not time this decision).
   */
  consumeAllNow(entries: readonly RuleKey[], cost = 1, performanceNow?: number): MultiDecision {
    if (entries.length === 1) {
      // One rule alone is what the driver does for one rule; no plan of the call is needed.
      const { key, rule, cost: own = cost } = entries[0];
      const decision = this.consumeOne(this.plan(key, rule, own, 'consume'), key, own, this.now(performanceNow));
      return { allowed: decision.allowed, decisions: [decision] };
    }
    return this.consumeMany(entries, cost);
  }

  async peek(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    let plan = this.plan(key, rule, cost, 'peek');
    const now = this.now();
    if (plan.rule.overrides) {
      const applied = this.overrides.applied(plan, key, now);
      if (typeof applied === 'number') return blockedByOverride(plan, applied);
      plan = applied;
    }
    const id = memoryTrackerKey(key);
    const out = this.scratch;
    const left = plan.blockUs > 0 ? this.lockoutLeft(plan, id, now) : 0;
    if (left > 0) this.blockedCheck(plan, id, cost, now, left, out);
    else this.check(plan, id, now, cost, false, out);
    return decision(plan, out);
  }

  async refund(key: string, rule: RateLimitRule, cost = 1): Promise<void> {
    const plan = this.plan(key, rule, cost, 'refund');
    const now = this.now();
    // Under the limit in force, as the driver refunds: a block's own limit, an override's, or the rule's.
    const applied = plan.rule.overrides ? this.overrides.applied(plan, key, now) : plan;
    this.refundOne(typeof applied === 'number' ? plan : applied, memoryTrackerKey(key), cost, now);
  }

  /** redis-cell's `CL.THROTTLE key max_burst count period [quantity]` (period in seconds), with its five-value reply. */
  throttle(key: string, maxBurst: number, count: number, period: number, quantity = 1): Promise<ThrottleReply> {
    return throttle(this, key, maxBurst, count, period, quantity);
  }

  async reset(key: string, rule: RateLimitRule): Promise<void> {
    const plan = this.plan(key, rule, 0, 'peek');
    const id = memoryTrackerKey(key);
    this.entries.forget(this.plans.state(plan), id);
    this.entries.forget(this.plans.lockout(plan), id);
  }

  /** Drops everything: every key's state, and the overrides. */
  clear(): void {
    this.entries.clear();
    this.overrides.clear();
  }

  /** The rule's plan, the call checked: a cached plan needs only the checks that depend on the call. */
  private plan(key: string, rule: RateLimitRule, cost: number, op: StoreOp): MemoryRulePlan {
    const plan = this.plans.get(rule);
    if (plan === undefined) return this.plans.build(rule, key, cost, op);
    if (typeof key !== 'string' || !Number.isSafeInteger(cost) || cost < (op === 'peek' ? 0 : 1) || (op !== 'refund' && cost > plan.maxCost)) {
      checkEntry(key, rule, cost, op);
    }
    return plan;
  }

  /** Now in µs on this store's clock; `performanceNow` (see consumeAllNow) stands for a read of the default clock. */
  private now(performanceNow?: number): number {
    return Math.floor((performanceNow! > 0 && this.clock === monotonic ? monotonicAt(performanceNow!) : this.clock()) * 1000);
  }

  /** driver.lua for one rule: the lockout, the check that charges, and a lockout started by a refusal. */
  private consumeOne(plan: MemoryRulePlan, key: string, cost: number, now: number): Decision {
    if (plan.rule.overrides) {
      const applied = this.overrides.applied(plan, key, now);
      if (typeof applied === 'number') return blockedByOverride(plan, applied);
      plan = applied;
    }
    const id = memoryTrackerKey(key);
    const out = this.scratch;
    if (plan.blockUs === 0) return decision(plan, this.check(plan, id, now, cost, true, out));
    const left = this.lockoutLeft(plan, id, now);
    if (left > 0) return decision(plan, this.blockedCheck(plan, id, cost, now, left, out));
    this.check(plan, id, now, cost, true, out);
    if (!out.allowed) this.lockOut(plan, id, now, out);
    return decision(plan, out);
  }

  /** Mirrors lua/includes/driver.lua step by step, for a consume of several entries. */
  private consumeMany(entries: readonly RuleKey[], cost: number): MultiDecision {
    const plan = mergeCall(entries, cost, 'consume');
    const now = this.now();
    const rules = plan.rules.map((r) => {
      const own = this.plans.get(r.rule) ?? this.plans.build(r.rule, r.tracker, 0, 'peek');
      // An overridable rule under the limit in force; blocked, under its own (as the driver reports it), with the
      // block's time left (µs). A lone rule is left to consumeOne, which applies its override.
      const applied = own.rule.overrides && plan.rules.length > 1 ? this.overrides.applied(own, r.tracker, now) : own;
      const blockedFor = typeof applied === 'number' ? applied : 0;
      return { plan: typeof applied === 'number' ? own : applied, id: memoryTrackerKey(r.tracker), cost: r.cost, overrideLeft: blockedFor };
    });
    if (rules.length === 1) {
      // Entries that all repeat one tracker under one rule, merged: the driver's one-rule path.
      const decision = this.consumeOne(rules[0].plan, plan.rules[0].tracker, rules[0].cost, now);
      return expandDecisions(plan, { allowed: decision.allowed, decisions: [decision] });
    }
    let all = true;
    const blocked: boolean[] = [];
    const results = rules.map((r, i): CheckResult => {
      if (r.overrideLeft > 0) {
        // A block by an override: refused, touching nothing, no lockout started.
        blocked[i] = true;
        all = false;
        return answer(checkResult(), false, 0, r.overrideLeft, r.overrideLeft);
      }
      const left = r.plan.blockUs > 0 ? this.lockoutLeft(r.plan, r.id, now) : 0;
      blocked[i] = left > 0;
      const result = blocked[i] ? this.blockedCheck(r.plan, r.id, r.cost, now, left, checkResult()) : this.check(r.plan, r.id, now, r.cost, false, checkResult());
      all &&= result.allowed;
      return result;
    });
    if (all) {
      rules.forEach((r, i) => this.check(r.plan, r.id, now, r.cost, true, results[i]));
    } else {
      rules.forEach((r, i) => {
        const d = results[i];
        // Nothing was charged: report this rule's state as it is, not as it would have been after the charge.
        if (d.allowed) this.check(r.plan, r.id, now, 0, false, d);
        else if (r.plan.blockUs > 0 && !blocked[i]) this.lockOut(r.plan, r.id, now, d);
      });
    }
    return expandDecisions(plan, { allowed: all, decisions: results.map((result, i) => decision(rules[i].plan, result)) });
  }

  /** The lockout time left (µs): the entry holds when it started and its level, so the current rule's length applies, at most that from now. */
  private lockoutLeft(plan: MemoryRulePlan, id: string, now: number): number {
    const held = this.entries.valueOf(this.plans.lockout(plan), id, now) as LockoutValue | undefined;
    if (held === undefined) return 0;
    const length = lockoutUs(plan, levelOf(held));
    return Math.min(startOf(held) + length - now, length);
  }

  /**
   * A refusal by a lockout. The algorithm is asked too, writing nothing: the wait reported must also be enough to
   * pass it then. If it would pass, its state is reported as it is, not as it would be after a charge not made.
   */
  private blockedCheck(plan: MemoryRulePlan, id: string, cost: number, now: number, left: number, out: CheckResult): CheckResult {
    this.check(plan, id, now, cost, false, out);
    if (out.allowed) this.check(plan, id, now, 0, false, out);
    out.allowed = false;
    out.remaining = 0;
    out.resetAfterUs = Math.max(out.resetAfterUs, left);
    if (out.retryAfterUs >= 0) out.retryAfterUs = Math.max(out.retryAfterUs, left);
    return out;
  }

  /**
   * Starts the lockout of a refused rule, as driver.lua's lock_out: one level up when the previous one ended less than
   * forgetAfter ago (the entry lives that long after its end), else level 0. The wait is the longer of it and the
   * algorithm's own (the lockout alone could be refused again), or the lockout's when its end restarts the count.
   */
  private lockOut(plan: MemoryRulePlan, id: string, now: number, out: CheckResult): void {
    const node = this.entries.lookup(this.plans.lockout(plan), id, now);
    const { rule } = plan;
    let level = 0;
    let forgetUs = 0;
    if (rule.lockoutFactor !== undefined) {
      forgetUs = rule.lockoutForgetMs! * 1000;
      const held = node.value as LockoutValue | undefined;
      if (held !== undefined && now < startOf(held) + lockoutUs(plan, levelOf(held)) + forgetUs) {
        level = cappedLockoutLevel(rule.blockMs, rule.lockoutFactor, rule.lockoutMaxMs!, levelOf(held) + 1);
      }
    }
    const length = lockoutUs(plan, level);
    node.value = level > 0 ? [now, level] : now;
    node.expiresAt = expiryAfter(now, length + forgetUs);
    this.entries.commit(node, now, 'lockout');
    if (rule.lockoutRestartsCount) {
      // afterLockout 'restart': nothing is charged while locked out, so the lockout's end finds a full budget.
      this.entries.forget(this.plans.state(plan), id);
      out.resetAfterUs = length;
      if (out.retryAfterUs >= 0) out.retryAfterUs = length;
      return;
    }
    out.resetAfterUs = Math.max(out.resetAfterUs, length);
    if (out.retryAfterUs >= 0) out.retryAfterUs = Math.max(out.retryAfterUs, length);
  }

  private check(plan: MemoryRulePlan, id: string, now: number, cost: number, apply: boolean, out: CheckResult): CheckResult {
    const node = this.entries.lookup(this.plans.state(plan), id, now);
    plan.algorithm.check(node, plan.params, now, cost, apply, out);
    this.entries.commit(node, now);
    return out;
  }

  private refundOne(plan: MemoryRulePlan, id: string, cost: number, now: number): void {
    const node = this.entries.lookup(this.plans.state(plan), id, now);
    plan.algorithm.refund(node, plan.params, now, cost);
    this.entries.commit(node, now);
  }
}

/** A lockout entry: when it started (µs), as a number at level 0 (Redis: 'start'), else with its level (Redis: 'start:level'). */
type LockoutValue = number | readonly [started: number, level: number];
const startOf = (held: LockoutValue): number => (typeof held === 'number' ? held : held[0]);
const levelOf = (held: LockoutValue): number => (typeof held === 'number' ? 0 : held[1]);
/** The rule's lockout length at `level` in µs, under the rule as it is now. */
const lockoutUs = (plan: MemoryRulePlan, level: number): number => (plan.rule.lockoutFactor === undefined ? plan.blockUs : ruleLockoutMs(plan.rule, level) * 1000);

/** A refusal by an override's block: `leftUs` as the wait, reported under the rule's own limit, as the driver does. */
function blockedByOverride(plan: MemoryRulePlan, leftUs: number): Decision {
  return toDecision(plan.capacity, false, 0, ceilMs(leftUs), ceilMs(leftUs));
}

/** The Decision for one rule from its check result (µs rounded up to ms, as RedisStore rounds the scripts' µs). */
function decision(plan: MemoryRulePlan, out: CheckResult): Decision {
  return toDecision(plan.capacity, out.allowed, out.remaining, ceilMs(out.resetAfterUs), out.retryAfterUs < 0 ? -1 : ceilMs(out.retryAfterUs));
}
