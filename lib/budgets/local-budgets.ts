import type { BudgetStore } from '../interfaces/budget.interface.js';
import type { Clock } from '../interfaces/clock.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';
import { monotonic, monotonicAt } from '../stores/monotonic.clock.js';
import { KeyBudget } from './key-budget.js';

/** Trackers this instance keeps a budget (or a rate) for, every rule together; past it the oldest is forgotten. */
export const DEFAULT_BUDGET_KEYS = 10_000;

export interface LocalBudgetsOptions {
  /** The budgets' clock, in ms, when the decisions' clock is injected; else the monotonic one (stores/monotonic.clock.ts). */
  clock?: Clock;
  /** Trackers kept, every rule together. @default 10,000 */
  maxKeys?: number;
  /** Told of a take or give-back that failed (nobody waits for either). */
  onError?: (error: Error, op: string) => void;
}

/**
 * The local budgets of rules with `localBudget` (lib/interfaces/rule.interface.ts): a request whose rule has units
 * taken ahead in this instance is decided here, with no store call; any other goes to the store, exactly. A key this
 * instance asks for often is taken ahead for in the background, before its units run out, so that no request waits
 * for a take (one request, one store call at most, as without the option). Units are taken in the store before they
 * are spent here, so the store never admits more than the limit; what an instance leaves unspent goes back when its
 * take ends, unless its window (or cell) has ended, in which case it had already stopped counting.
 */
export class LocalBudgets {
  private readonly rules = new Map<RateLimitRule, Map<string, KeyBudget>>();
  private keys = 0;
  /** Takes and give-backs not landed yet. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly clock: Clock;
  /** Whether `clock` is the monotonic one, which a caller's performance.now() reading gives at no cost. */
  private readonly onMonotonic: boolean;
  private readonly maxKeys: number;

  constructor(
    private readonly store: RateLimitStore,
    private readonly budgets: BudgetStore,
    private readonly options: LocalBudgetsOptions,
  ) {
    this.clock = options.clock ?? monotonic;
    this.onMonotonic = options.clock === undefined;
    this.maxKeys = options.maxKeys ?? DEFAULT_BUDGET_KEYS;
  }

  /**
   * A request of one rule with `localBudget`, decided from units at hand, with no promise: the hot path. Undefined
   * when the store must decide it: then `decide`. `performanceNow`: performance.now() read by the caller just before,
   * if it has one (a clock read less).
   */
  spendAlone(entry: RuleKey, defaultCost: number, performanceNow?: number): MultiDecision | undefined {
    const now = this.onMonotonic && performanceNow !== undefined ? monotonicAt(performanceNow) : this.clock();
    const local = this.spend(entry.key, entry.rule, entry.cost ?? defaultCost, now);
    return local ? { allowed: true, decisions: [local] } : undefined;
  }

  /**
   * Decides a request some of whose rules have `localBudget`, all-or-nothing, as the store's `consumeAll`. A one-rule
   * request comes here only once `spendAlone` found no units for it: the store decides it.
   */
  decide(entries: readonly RuleKey[], defaultCost: number): Promise<MultiDecision> {
    if (entries.length === 1) {
      const { key, rule, cost = defaultCost } = entries[0];
      return this.store.consume(key, rule, cost).then(alone);
    }
    const now = this.clock();
    // Rules with units at hand are charged here first, and given them back if the others refuse.
    const decisions: (Decision | undefined)[] = new Array(entries.length);
    const spent: [KeyBudget, number][] = [];
    const exact: RuleKey[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const cost = entry.cost ?? defaultCost;
      const local = entry.rule.localBudget ? this.spend(entry.key, entry.rule, cost, now) : undefined;
      if (local) {
        decisions[i] = local;
        spent.push([this.rules.get(entry.rule)!.get(entry.key)!, cost]);
      } else {
        exact.push(entry);
      }
    }
    if (exact.length === 0) return Promise.resolve({ allowed: true, decisions: decisions as Decision[] });
    const decided = exact.length === 1 ? this.store.consume(exact[0].key, exact[0].rule, exact[0].cost ?? defaultCost).then(alone) : this.store.consumeAll(exact, defaultCost);
    return decided.then(
      (result) => {
        if (!result.allowed) for (const [budget, cost] of spent) if (!budget.discarded) budget.units += cost;
        let j = 0;
        for (let i = 0; i < decisions.length; i++) if (decisions[i] === undefined) decisions[i] = result.decisions[j++];
        return { allowed: result.allowed, decisions: decisions as Decision[] };
      },
      (error: unknown) => {
        for (const [budget, cost] of spent) if (!budget.discarded) budget.units += cost;
        throw error;
      },
    );
  }

  /**
   * Spends `cost` units of the tracker's local budget if it has them (the decision), and takes more ahead when the
   * key is hot and they run low; undefined when the store must decide.
   */
  private spend(key: string, rule: RateLimitRule, cost: number, now: number): Decision | undefined {
    const settings = rule.localBudget!;
    const budget = this.budget(key, rule, now);
    budget.meter(cost, now, settings.maxMs);
    if (budget.canSpend(cost, now)) {
      const decision = budget.spend(cost, now);
      if (budget.units < budget.size / 2 && !budget.taking && now >= budget.noTakeUntil) this.take(key, rule, budget, now);
      return decision;
    }
    if (budget.units > 0 && now >= budget.spendUntil) this.expire(key, rule, budget);
    if (!budget.taking && now >= budget.noTakeUntil) this.take(key, rule, budget, now);
    return undefined;
  }

  private budget(key: string, rule: RateLimitRule, now: number): KeyBudget {
    let table = this.rules.get(rule);
    if (!table) this.rules.set(rule, (table = new Map()));
    let budget = table.get(key);
    if (!budget) {
      if (this.keys >= this.maxKeys) this.evictOne();
      table.set(key, (budget = new KeyBudget(now)));
      this.keys++;
    }
    return budget;
  }

  /** Takes units ahead for a hot key, in the background; nobody waits for it. */
  private take(key: string, rule: RateLimitRule, budget: KeyBudget, now: number): void {
    const { maxUnits, maxMs } = rule.localBudget!;
    // Never more than the limit in force, once a take has said what it is (an override may have cut it).
    const units = budget.limit > 0 ? Math.min(budget.want(maxUnits), budget.limit) : budget.want(maxUnits);
    if (units < 2) return;
    budget.taking = true;
    let taken;
    try {
      taken = this.budgets.take(key, rule, units);
    } catch (error) {
      taken = Promise.reject(error);
    }
    this.track(taken).then(
      (grant) => {
        budget.taking = false;
        if (budget.discarded) {
          if (grant.units > 0) this.giveBack(key, rule, grant.units, grant.ticket);
          return;
        }
        if (grant.units === 0) {
          if (!grant.decision.degraded) budget.limit = grant.decision.limit;
          // Refused (the budget is nearly spent: exact decisions from here, which a window's end or a wait frees) or
          // decided by the failure policy (the store is down).
          const wait = grant.decision.retryAfterMs > 0 ? grant.decision.retryAfterMs : maxMs;
          budget.noTakeUntil = now + Math.min(wait, maxMs);
          return;
        }
        const leftover = budget.granted(grant, now, maxMs);
        if (leftover) this.giveBack(key, rule, leftover.units, leftover.ticket);
        this.scheduleReturn(key, rule, budget);
      },
      (error: unknown) => {
        budget.taking = false;
        budget.noTakeUntil = now + maxMs;
        this.report(error, 'lease');
      },
    );
  }

  /** At the take's end, what is left of it goes back (if nobody took the key's budget away meanwhile). */
  private scheduleReturn(key: string, rule: RateLimitRule, budget: KeyBudget): void {
    if (budget.timer) clearTimeout(budget.timer);
    const timer = setTimeout(
      () => {
        budget.timer = undefined;
        if (!budget.discarded && budget.units > 0) this.expire(key, rule, budget);
      },
      Math.max(0, budget.spendUntil - this.clock()),
    );
    timer.unref?.();
    budget.timer = timer;
  }

  /** The take has ended: its leftover goes back. */
  private expire(key: string, rule: RateLimitRule, budget: KeyBudget): void {
    const { units, ticket } = budget;
    budget.units = 0;
    if (units > 0) this.giveBack(key, rule, units, ticket);
  }

  private giveBack(key: string, rule: RateLimitRule, units: number, ticket: number): void {
    try {
      this.track(this.budgets.giveBack(key, rule, units, ticket)).catch((error: unknown) => this.report(error, 'return'));
    } catch (error) {
      this.report(error, 'return');
    }
  }

  /** Forgets the tracker's budget under the rule (a reset): its units are not given back, the reset erased what they counted in. */
  forget(rule: RateLimitRule, key: string): void {
    for (const [known, table] of this.rules) {
      if (known.name !== rule.name) continue;
      const budget = table.get(key);
      if (!budget) continue;
      this.discard(budget);
      table.delete(key);
      this.keys--;
    }
  }

  /**
   * Forgets every budget, giving back the units held unless `giveBack` is false (their keys are being erased): the
   * rules changed (a take never outlives its rule), or the module closes.
   */
  clear(giveBack = true): void {
    for (const [rule, table] of this.rules) {
      for (const [key, budget] of table) {
        if (giveBack && budget.units > 0) this.expire(key, rule, budget);
        this.discard(budget);
      }
    }
    this.rules.clear();
    this.keys = 0;
  }

  /** Resolves once every take and give-back made so far has landed (and those they started): for tests and shutdown. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track<T>(call: Promise<T>): Promise<T> {
    this.inFlight.add(call);
    const done = () => this.inFlight.delete(call);
    call.then(done, done);
    return call;
  }

  /** Trackers with a budget or a rate kept. */
  get size(): number {
    return this.keys;
  }

  private discard(budget: KeyBudget): void {
    budget.discarded = true;
    budget.units = 0;
    if (budget.timer) clearTimeout(budget.timer);
    budget.timer = undefined;
  }

  /** Forgets the oldest tracker (of the rule seen first), giving its leftover back. */
  private evictOne(): void {
    for (const [rule, table] of this.rules) {
      const oldest = table.keys().next();
      if (oldest.done) {
        this.rules.delete(rule);
        continue;
      }
      const budget = table.get(oldest.value)!;
      if (budget.units > 0) this.expire(oldest.value, rule, budget);
      this.discard(budget);
      table.delete(oldest.value);
      this.keys--;
      return;
    }
  }

  private report(error: unknown, op: string): void {
    try {
      this.options.onError?.(error instanceof Error ? error : new Error(String(error)), op);
    } catch {
      // A throwing hook has no caller to tell here.
    }
  }
}

/** Whether any rule of the request has a local budget. */
export function usesLocalBudget(entries: readonly RuleKey[]): boolean {
  for (let i = 0; i < entries.length; i++) if (entries[i].rule.localBudget) return true;
  return false;
}

function alone(decision: Decision): MultiDecision {
  return { allowed: decision.allowed, decisions: [decision] };
}
