import { maxCost } from '../rules/define-rule.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { FailurePolicy, RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';
import type { OverrideSnapshot, OverrideStore, RateLimitOverride, StoredOverride } from '../interfaces/override.interface.js';
import type { BudgetGrant, BudgetStore } from '../interfaces/budget.interface.js';
import { checkEntry } from '../stores/call.validator.js';
import type { MemoryStore } from '../stores/memory/memory.store.js';
import { mergeCall } from '../stores/store.plan.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { CircuitBreakerOptions, CircuitState } from '../interfaces/circuit-breaker.interface.js';
import { DeadlineQueue } from './deadline.queue.js';

export interface ResilientStoreOptions {
  /** Longest wait for the primary store, in ms. @default 50 */
  timeoutMs?: number;
  /** What decides when the primary cannot, unless a rule says otherwise. @default 'memory' */
  failurePolicy?: FailurePolicy;
  circuitBreaker?: CircuitBreakerOptions;
  /** Told of each failure of the primary (logging, metrics). */
  onError?: (error: Error, op: string) => void;
  /** Told of each decision the failure policy made. */
  onDegraded?: (policy: FailurePolicy) => void;
  onCircuitChange?: (state: CircuitState) => void;
  /**
   * How often the memory fallback's copy of the primary's overrides is refreshed, in ms, once a rule with
   * `overrides: true` has been decided: while the primary answers, its overrides are listed and copied, so that the
   * fallback applies them (raised limits, blocks) when it decides. @default 10000
   */
  overridesSyncMs?: number;
}

/** The default of `overridesSyncMs`. */
export const OVERRIDES_SYNC_MS = 10_000;

export { RateLimitTimeoutError } from './rate-limit-timeout.error.js';

/**
 * How long, in ms, a late admission's refund is tried again while it keeps missing its deadline (see `giveBack`). A
 * refund of a heavy sliding-log call waits behind the heavy batches in flight, and on a loaded machine missed 20
 * deadlines in a row; a count of tries is a bound in time only on a quiet one.
 */
const GIVE_BACK_WITHIN_MS = 60_000;

// The strictest policy of the rules of one request decides for all of them.
const STRICTNESS: Record<FailurePolicy, number> = { open: 0, memory: 1, closed: 2 };

/**
 * Puts a bound on every decision: the primary store (Redis) answers within `timeoutMs` or the failure policy
 * decides, and after repeated failures a circuit breaker stops calling it for a growing interval. The
 * memory fallback runs the same algorithms with the same rules, so `'memory'` keeps limiting per process. A consume
 * the primary admitted after the failure policy decided it is refunded on the primary: it counts only what it
 * answered.
 */
export class ResilientStore implements RateLimitStore {
  readonly breaker: CircuitBreaker;
  private readonly deadlines: DeadlineQueue;
  private readonly policy: FailurePolicy;
  /** Answers the primary has given (values, in time or not): a call late while this moved was late on a store that is up. */
  private answers = 0;
  /** A late answer with nothing to give back (see `answeredLate`). */
  private readonly late = (): void => this.answeredLate();

  /**
   * The primary's overrides, written and read there without the breaker or the deadline (an operator's call, not a
   * decision). What is set or removed through it is also set or removed in the memory fallback's copy, which is
   * otherwise refreshed every `overridesSyncMs` (see `watchOverrides`).
   */
  readonly overrides?: OverrideStore;
  /** The refresh of the fallback's copy of the overrides, once started. */
  private overridesTimer?: ReturnType<typeof setInterval>;
  private overridesListing?: Promise<void>;
  /** What the last refresh copied, so that the next one reads again only the overrides that changed. */
  private overridesCopied?: OverrideSnapshot;
  /** Overrides set or removed through `overrides`: a list that was under way meanwhile may not hold the change. */
  private overridesWritten = 0;
  private closed = false;

  /**
   * The primary's local-budget takes and give-backs, under the same timeout and breaker as a decision. A take the
   * primary cannot answer takes nothing (no request waits for it: the requests go on to the failure policy).
   */
  readonly budgets?: BudgetStore;

  constructor(
    readonly primary: RateLimitStore,
    readonly fallback: MemoryStore,
    private readonly options: ResilientStoreOptions = {},
  ) {
    this.deadlines = new DeadlineQueue(options.timeoutMs ?? 50);
    this.policy = options.failurePolicy ?? 'memory';
    this.breaker = new CircuitBreaker(options.circuitBreaker, undefined, options.onCircuitChange);
    const overrides = primary.overrides;
    if (overrides) this.overrides = mirrored(overrides, fallback.overrides, () => this.overridesWritten++);
    const budgets = primary.budgets;
    if (budgets) {
      this.budgets = {
        take: (key, rule, units) => this.takeBudget(budgets, key, rule, units),
        giveBack: (key, rule, units, ticket) => this.giveBudgetBack(budgets, key, rule, units, ticket),
      };
    }
  }

  private takeBudget(budgets: BudgetStore, key: string, rule: RateLimitRule, units: number): Promise<BudgetGrant> {
    try {
      checkEntry(key, rule, units, 'lease');
      return this.guarded(
        'lease',
        () => budgets.take(key, rule, units),
        (): BudgetGrant => ({ decision: substitute('closed', rule, units, this.breaker.retryInMs), units: 0, ticket: 0 }),
        rule,
        (grant) => {
          this.answeredLate();
          // Nobody spends a take the failure policy answered for: its units go back while they still count.
          if (grant.units > 0) this.giveBack(() => budgets.giveBack(key, rule, grant.units, grant.ticket));
        },
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async giveBudgetBack(budgets: BudgetStore, key: string, rule: RateLimitRule, units: number, ticket: number): Promise<void> {
    checkEntry(key, rule, units, 'return');
    // Units the store does not take back (it is down) stay counted there until their window passes: nothing to decide.
    return this.guarded('return', () => budgets.giveBack(key, rule, units, ticket), () => undefined, rule);
  }

  // consume, consumeAll and peek are every decision's path: promise chains, not async functions (see `guarded`),
  // which turn what they throw (a caller's mistake, a throwing hook) into a rejection all the same.
  consume(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.decideOne('consume', key, rule, cost);
  }

  consumeAll(entries: readonly RuleKey[], cost = 1): Promise<MultiDecision> {
    try {
      if (this.overridesTimer === undefined) for (let i = 0; i < entries.length; i++) if (entries[i].rule.overrides) this.watchOverrides();
      // Every entry, and what only a whole call shows (repeats adding up past a limit, one name with two definitions).
      if (entries.length === 1) checkEntry(entries[0].key, entries[0].rule, entries[0].cost ?? cost, 'consume');
      else mergeCall(entries, cost, 'consume');
      return this.guarded(
        'consumeAll',
        () => this.primary.consumeAll(entries, cost),
        async (policy) => {
          if (policy === 'memory') return this.fallback.consumeAll(entries, cost);
          const decisions = entries.map((e) => substitute(policy, e.rule, e.cost ?? cost, this.breaker.retryInMs));
          return { allowed: policy === 'open', decisions };
        },
        entries.map((e) => e.rule),
        (result) => {
          this.answeredLate();
          if (result.allowed) this.giveBack(() => Promise.all(entries.map((e) => this.primary.refund(e.key, e.rule, e.cost ?? cost))));
        },
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  peek(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.decideOne('peek', key, rule, cost);
  }

  async refund(key: string, rule: RateLimitRule, cost = 1): Promise<void> {
    checkEntry(key, rule, cost, 'refund');
    return this.guarded(
      'refund',
      () => this.primary.refund(key, rule, cost),
      (policy) => (policy === 'memory' ? this.fallback.refund(key, rule, cost) : Promise.resolve()),
      rule,
    );
  }

  async reset(key: string, rule: RateLimitRule): Promise<void> {
    checkEntry(key, rule, 0, 'peek');
    // What the fallback counted while Redis was away must not outlive a reset either.
    await this.fallback.reset(key, rule);
    await this.guarded('reset', () => this.primary.reset(key, rule), async () => undefined, rule);
  }

  /** One rule's consume or peek: checked, then the primary's answer, or the failure policy's. */
  private decideOne(op: 'consume' | 'peek', key: string, rule: RateLimitRule, cost: number): Promise<Decision> {
    try {
      if (rule.overrides && this.overridesTimer === undefined) this.watchOverrides();
      checkEntry(key, rule, cost, op);
      return this.guarded(
        op,
        () => this.primary[op](key, rule, cost),
        (policy) => (policy === 'memory' ? this.fallback[op](key, rule, cost) : substitute(policy, rule, cost, this.breaker.retryInMs)),
        rule,
        op === 'consume'
          ? (decision) => {
              this.answeredLate();
              if (decision.allowed) this.giveBack(() => this.primary.refund(key, rule, cost));
            }
          : this.late,
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Calls are checked before they get here (`checkEntry`, `mergeCall`), so what the primary throws is its failure, decided
   * by the failure policy; every call let through ends in the breaker's success, failure or release.
   *
   * Not async, as this runs for every decision: a promise chain costs less than an async function. So it may throw
   * where an async function would have rejected (a caller's error thrown at once by a custom store, a throwing
   * `onCircuitChange` or `onError`); its callers turn that into their rejection. `rules`: the call's rule, or its
   * rules (no array is made for the one rule of most calls). `late`: told of the primary's answer when it comes after
   * the failure policy decided the call (the timeout).
   */
  private guarded<T>(
    op: string,
    call: () => Promise<T>,
    degrade: (policy: FailurePolicy) => T | Promise<T>,
    rules: RateLimitRule | readonly RateLimitRule[],
    late: (result: T) => void = this.late,
  ): Promise<T> {
    if (!this.breaker.tryAcquire()) return this.degraded(op, rules, degrade);
    let answer: Promise<T>;
    try {
      answer = call();
    } catch (error) {
      return this.failed(error, op, rules, degrade);
    }
    const answered = this.answers;
    return this.deadlines.race(
      answer,
      (result) => {
        this.answers++;
        // What onCircuitChange throws here is a failure, as when this was one try block around the call and the breaker.
        this.breaker.success();
        return result;
      },
      (error) => this.failed(error, op, rules, degrade, answered),
      late,
    );
  }

  /**
   * The primary failed or was late: the failure policy decides, unless the error is the caller's. `answered`: the
   * primary's answers when the call was made.
   */
  private failed<T>(error: unknown, op: string, rules: RateLimitRule | readonly RateLimitRule[], degrade: (policy: FailurePolicy) => T | Promise<T>, answered?: number): Promise<T> {
    if (isCallerError(error)) {
      this.breaker.release();
      throw error;
    }
    // Redis answered in time but its clock had stepped past our estimate: it is up, so this opens nothing.
    if (isPromptDeadlineRefusal(error)) this.breaker.success();
    // Late, while the primary answered calls: it is up and busy (a queue of heavy calls), not down. The failure policy
    // takes this call, without opening the circuit for every other. A stalled or unreachable primary answers nothing.
    else if (answered !== undefined && answered !== this.answers && isLate(error)) this.breaker.release();
    else this.breaker.failure();
    this.options.onError?.(error instanceof Error ? error : new Error(String(error)), op);
    return this.degraded(op, rules, degrade);
  }

  /** The primary answered a call whose caller the failure policy already decided: it is up. */
  private answeredLate(): void {
    this.answers++;
    this.breaker.success();
  }

  /**
   * Gives back what the primary counted for a consume whose caller the failure policy decided (a reply that came
   * after the timeout: Redis ran the call just before its deadline, or the reply was held up on its way back), so
   * that the primary counts only the requests it answered. Nobody waits for it. A refund that missed its own deadline
   * (queued behind heavy calls) wrote nothing, and is tried again, for up to `GIVE_BACK_WITHIN_MS`; any other failure
   * is only reported. It cannot spin: a refund misses its deadline only once the primary answered (late) or a batch
   * ahead of it landed.
   */
  private giveBack(refund: () => Promise<unknown>, until = performance.now() + GIVE_BACK_WITHIN_MS): void {
    const failed = (error: unknown) => {
      if ((error as Error | undefined)?.name === 'RateLimitDeadlineError' && performance.now() < until) {
        this.giveBack(refund, until);
        return;
      }
      try {
        this.options.onError?.(error instanceof Error ? error : new Error(String(error)), 'refund');
      } catch {
        // A throwing hook has no caller to tell here.
      }
    };
    try {
      refund().catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /**
   * Starts keeping the memory fallback's copy of the primary's overrides: at once, then every `overridesSyncMs`, the
   * primary's are listed and copied while its circuit is closed (a list that fails changes nothing: the fallback
   * keeps what it had, each override still ending when it would have). Started by the first decision of a rule with
   * `overrides: true`, so that a store whose rules take none never lists.
   */
  private watchOverrides(): void {
    if (this.overrides === undefined || this.overridesTimer !== undefined || this.closed) return;
    const every = this.options.overridesSyncMs ?? OVERRIDES_SYNC_MS;
    this.overridesTimer = setInterval(() => void this.syncOverrides(), every);
    this.overridesTimer.unref?.();
    void this.syncOverrides();
  }

  /**
   * Copies the primary's overrides into the fallback (see `watchOverrides`); resolves once done or given up. While a
   * copy is under way, that one.
   */
  syncOverrides(): Promise<void> {
    const primary = this.primary.overrides;
    if (!primary || this.breaker.state !== 'closed') return Promise.resolve();
    return (this.overridesListing ??= this.copyOverrides(primary).finally(() => (this.overridesListing = undefined)));
  }

  private async copyOverrides(primary: OverrideStore): Promise<void> {
    const written = this.overridesWritten;
    try {
      const snapshot = primary.snapshot ? await primary.snapshot(this.overridesCopied) : undefined;
      const listed = snapshot ? [...snapshot.overrides.values()] : await primary.list();
      // Written meanwhile: the copy has the change already, the list maybe not; the next refresh has both.
      if (written !== this.overridesWritten) return;
      this.fallback.overrides.replace(listed);
      this.overridesCopied = snapshot;
    } catch (error) {
      try {
        this.options.onError?.(error instanceof Error ? error : new Error(String(error)), 'overrides');
      } catch {
        // A throwing hook has no caller to tell here.
      }
    }
  }

  /** Stops refreshing the fallback's copy of the overrides. */
  close(): void {
    this.closed = true;
    clearInterval(this.overridesTimer);
  }

  /** Decides by the strictest failure policy among the request's rules (worked out only when it is needed). */
  private async degraded<T>(op: string, rules: RateLimitRule | readonly RateLimitRule[], degrade: (policy: FailurePolicy) => T | Promise<T>): Promise<T> {
    let policy: FailurePolicy = 'open';
    for (const rule of Array.isArray(rules) ? (rules as readonly RateLimitRule[]) : [rules as RateLimitRule]) {
      const own = rule.failurePolicy ?? this.policy;
      if (STRICTNESS[own] > STRICTNESS[policy]) policy = own;
    }
    // A take of a local budget is no request's decision: nobody was decided for by the failure policy.
    if (op !== 'lease') this.options.onDegraded?.(policy);
    return mark(await degrade(policy), policy);
  }
}

/**
 * The primary's overrides, each one set or removed through them also set or removed in the fallback's copy (so that
 * the fallback applies at once what this instance set), after the primary took it.
 */
function mirrored(primary: OverrideStore, copy: OverrideStore, written: () => void): OverrideStore {
  return {
    set: async (rule: string, key: string, override: StoredOverride): Promise<RateLimitOverride> => {
      const set = await primary.set(rule, key, override);
      written();
      await copy.set(rule, key, override);
      return set;
    },
    get: (rule, key) => primary.get(rule, key),
    remove: async (rule, key) => {
      const removed = await primary.remove(rule, key);
      written();
      await copy.remove(rule, key);
      return removed;
    },
    list: (rule) => primary.list(rule),
  };
}

/** A decision the store did not make: `'open'` admits without counting, `'closed'` refuses until the circuit may close. */
function substitute(policy: 'open' | 'closed', rule: RateLimitRule, cost: number, retryInMs: number): Decision {
  const limit = maxCost(rule);
  if (policy === 'open') return { allowed: true, limit, remaining: Math.max(0, limit - cost), resetAfterMs: 0, retryAfterMs: 0, degraded: 'open' };
  const wait = Math.max(1_000, Math.ceil(retryInMs));
  return { allowed: false, limit, remaining: 0, resetAfterMs: wait, retryAfterMs: wait, degraded: 'closed' };
}

function mark<T>(result: T, policy: FailurePolicy): T {
  const r = result as unknown as Partial<Decision & MultiDecision> | undefined;
  if (r && typeof r === 'object') {
    if (Array.isArray(r.decisions)) for (const d of r.decisions) d.degraded = policy;
    else if (typeof r.allowed === 'boolean') (r as Decision).degraded = policy;
  }
  return result;
}

/**
 * Errors of our own making (a bad cost, an unknown rule) are the caller's, not the store's: they propagate. The
 * calls are checked before the store is called; a store may still find one of its own (a custom store).
 */
function isCallerError(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'RateLimitCostError' || name === 'RateLimitConfigError';
}

/** The store did not answer within the timeout, or ran the call after its deadline (RedisStore): late, not failing. */
function isLate(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'RateLimitTimeoutError' || name === 'RateLimitDeadlineError';
}

/** A `RateLimitDeadlineError` whose round trip was within the timeout (see RedisStore): the store is healthy. */
function isPromptDeadlineRefusal(error: unknown): boolean {
  return (error as Error | undefined)?.name === 'RateLimitDeadlineError' && (error as { promptReply?: boolean }).promptReply === true;
}
