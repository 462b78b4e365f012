import type { BudgetStore } from '../interfaces/budget.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { LeaseDecision, LeaseHandle, LeaseStore } from '../interfaces/lease-store.interface.js';
import type { OverrideStore } from '../interfaces/override.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';
import type { TestingSwitch } from './testing.switch.js';

/** What a rule answers while limits are off: admitted, its whole budget left, nothing recorded. */
function untouched(rule: RateLimitRule): Decision {
  return { allowed: true, limit: rule.limit, remaining: rule.limit, resetAfterMs: 0, retryAfterMs: 0 };
}

/** The app's store, passed through while limits are on; while they are off, every rule admits and nothing is recorded. */
export class SwitchableStore implements RateLimitStore {
  /** The app's store's local-budget takes; while limits are off, a take takes nothing. */
  readonly budgets?: BudgetStore;

  constructor(
    readonly inner: RateLimitStore,
    private readonly limits: TestingSwitch,
  ) {
    const budgets = inner.budgets;
    if (budgets) {
      this.budgets = {
        take: (key, rule, units) =>
          this.limits.enabled ? budgets.take(key, rule, units) : Promise.resolve({ decision: { ...untouched(rule), allowed: false }, units: 0, ticket: 0 }),
        giveBack: (key, rule, units, ticket) => budgets.giveBack(key, rule, units, ticket),
      };
    }
  }

  consume(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    return this.limits.enabled ? this.inner.consume(key, rule, cost) : Promise.resolve(untouched(rule));
  }

  consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> {
    if (this.limits.enabled) return this.inner.consumeAll(entries, cost);
    return Promise.resolve({ allowed: true, decisions: entries.map((entry) => untouched(entry.rule)) });
  }

  peek(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    return this.limits.enabled ? this.inner.peek(key, rule, cost) : Promise.resolve(untouched(rule));
  }

  refund(key: string, rule: RateLimitRule, cost?: number): Promise<void> {
    // A refund of a consume made while limits were off gives back what was never taken.
    return this.limits.enabled ? this.inner.refund(key, rule, cost) : Promise.resolve();
  }

  reset(key: string, rule: RateLimitRule): Promise<void> {
    return this.inner.reset(key, rule);
  }

  /** The app's store's per-key overrides, kept while limits are off (an operator's setting, not a decision). */
  get overrides(): OverrideStore | undefined {
    return this.inner.overrides;
  }

  close(): void {
    this.inner.close?.();
  }
}

const NO_LEASE: LeaseHandle = { id: 'rate-limits-off', renew: () => Promise.resolve(true), release: () => Promise.resolve() };

/** The app's lease store, passed through while limits are on; while they are off, every concurrency rule grants a lease that holds nothing. */
export class SwitchableLeaseStore implements LeaseStore {
  constructor(
    readonly inner: LeaseStore,
    private readonly limits: TestingSwitch,
  ) {}

  acquire(key: string, rule: RateLimitRule): Promise<LeaseDecision> {
    if (this.limits.enabled) return this.inner.acquire(key, rule);
    return Promise.resolve({ acquired: true, limit: rule.limit, inFlight: 0, retryAfterMs: 0, lease: NO_LEASE });
  }
}
