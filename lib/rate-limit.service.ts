import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import { compilePolicy } from './config/policy.compiler.js';
import { RateLimitConfigError } from './rules/rate-limit-config.error.js';
import { RateLimitPolicies } from './config/rate-limit.policies.js';
import type { RateLimitSettings } from './interfaces/rate-limit-settings.interface.js';
import { longestWaitMs } from './interfaces/decision.arithmetic.js';
import type { Decision, MultiDecision } from './interfaces/decision.interface.js';
import type { RateLimitDecoratorOptions, RateLimitPolicyOptions } from './interfaces/rate-limit-options.interface.js';
import type { RateLimitRule } from './interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from './interfaces/store.interface.js';
import type { RateLimitMetrics } from './interfaces/metrics.interface.js';
import type { RejectionAudit } from './observability/rejection.audit.js';
import { DecisionObserver, MEMORY_DURATION_SAMPLE } from './observability/decision.observer.js';
import type { OpenTelemetryParts } from './observability/open-telemetry.loader.js';
import { RATE_LIMIT_AUDIT, RATE_LIMIT_LEASE_STORE, RATE_LIMIT_METRICS, RATE_LIMIT_OPEN_TELEMETRY, RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE } from './interfaces/rate-limit.constants.js';
import { RateLimitExceededException } from './http/rate-limit.exception.js';
import { LocalBlockCache } from './resilience/local-block.cache.js';
import { MemoryStore } from './stores/memory/memory.store.js';
import type { Lease, LeaseResult, LeaseStore, RatedRequest, RequestLeaseDecider } from './interfaces/lease-store.interface.js';
import { leaseDecision, leaseNotAsked, withLeaseDecisions } from './stores/leases/lease.decisions.js';
import { holdLease, releaseAll } from './stores/leases/lease.holder.js';
import { MemoryLeaseStore } from './stores/leases/memory-lease.store.js';
import { asShadow, decideWithShadowRules, hasShadowRules } from './shadow/shadow-mode.decider.js';
import type { RateLimitPolicy } from './interfaces/rate-limit-policy.interface.js';
import { RateLimitWaiter } from './waiting/rate-limit.waiter.js';
import { checkWaitOptions, type RateLimitWaitOptions } from './waiting/wait-options.js';
import { RateLimitOverrides } from './overrides/rate-limit.overrides.js';
import { LocalBudgets, usesLocalBudget } from './budgets/local-budgets.js';
import { ThrottledLog } from './observability/throttled.logger.js';

/**
 * A rule: the name of a configured one (looked up on every call, so config changes apply), a rule from
 * `defineRule`, or rule options (compiled once per object; `name` defaults to `'default'`).
 */
export type RuleRef = string | RateLimitRule | RateLimitDecoratorOptions;

/** One rule for one key, as `consumeAll` and `enforce` take them. */
export interface RuleRefEntry {
  key: string;
  rule: RuleRef;
  /** Units this rule charges, when it differs from the call's cost. */
  cost?: number;
}

/**
 * Rate limiting for business code: the key is whatever you count per (a username, a phone number, an API
 * key), used as given. The guard uses the same service for HTTP requests.
 */
@Injectable()
export class RateLimitService implements RequestLeaseDecider, OnModuleDestroy {
  private readonly compiled = new WeakMap<object, RateLimitPolicy>();
  /** The queues of `waitToConsume`. */
  private readonly waiter = new RateLimitWaiter();
  /**
   * Refusals remembered in-process (guard path); undefined when `blockCache` is off, and for the memory store,
   * which finds a refusal as fast as the cache would and decides it exactly.
   */
  readonly blockCache?: LocalBlockCache;
  private blockCacheVersion: number;
  private readonly observer: DecisionObserver;
  /** Where the leases of concurrency rules are kept. */
  readonly leases: LeaseStore;
  /**
   * The store when it is the MemoryStore class itself, which `decide` calls synchronously. Not a subclass: one may
   * override consume/consumeAll (to count calls, say), and is called as any store.
   */
  private readonly syncStore?: MemoryStore;
  /** Per-tracker overrides of the rules with `overrides: true`: `set`, `remove`, `get`, `list` (see RateLimitOverrides). */
  readonly overrides: RateLimitOverrides;
  /**
   * The units rules with `localBudget` hold in this instance (see LocalBudgets); undefined on a store that takes none
   * ahead (the memory store decides locally anyway).
   */
  readonly budgets?: LocalBudgets;
  /** The rules' version the budgets were taken under: a take never outlives its rule. */
  private budgetsVersion: number;

  constructor(
    @Inject(RATE_LIMIT_STORE) readonly store: RateLimitStore,
    private readonly policies: RateLimitPolicies,
    @Inject(RATE_LIMIT_SETTINGS) private readonly settings: RateLimitSettings,
    @Optional() @Inject(RATE_LIMIT_METRICS) private readonly metrics?: RateLimitMetrics,
    @Optional() @Inject(RATE_LIMIT_AUDIT) audit?: RejectionAudit | null,
    @Optional() @Inject(RATE_LIMIT_LEASE_STORE) leases?: LeaseStore,
    @Optional() @Inject(RATE_LIMIT_OPEN_TELEMETRY) openTelemetry?: OpenTelemetryParts | null,
  ) {
    this.leases = leases ?? new MemoryLeaseStore({ keyPrefix: settings.keyPrefix, clock: settings.clock });
    if (Object.getPrototypeOf(store) === MemoryStore.prototype) this.syncStore = store as MemoryStore;
    if (settings.blockCacheKeys > 0 && !this.syncStore) this.blockCache = new LocalBlockCache(settings.blockCacheKeys, settings.clock, settings.blockCacheBytes);
    this.observer = new DecisionObserver(settings, metrics, audit, openTelemetry?.spans, this.syncStore ? MEMORY_DURATION_SAMPLE : 1);
    this.blockCacheVersion = policies.version;
    this.budgetsVersion = policies.version;
    if (store.budgets && !this.syncStore) {
      const log = new ThrottledLog(SERVICE_LOGGER);
      this.budgets = new LocalBudgets(store, store.budgets, {
        clock: settings.clock,
        onError: (error, op) => log.error(`A local budget's ${op === 'lease' ? 'take' : 'give-back'} failed: ${error.message}`),
      });
    }
    this.overrides = new RateLimitOverrides({ rule: (ref) => this.rule(ref), store: () => store.overrides, audit, forget: (rule, key) => this.blockCache?.forget(rule, key) });
  }

  /**
   * Takes `cost` units for `key` if the rule admits them. A shadow rule's decision (`mode: 'shadow'`) says what
   * it decided, marked `shadow: true`: its `allowed: false` is a refusal that should refuse nothing (`enforce` admits).
   */
  async consume(key: string, rule: RuleRef, cost = 1): Promise<Decision> {
    const entries = [this.ruleKey(key, rule, cost)];
    const started = this.observer.start();
    let decision = entries[0].rule.localBudget && !entries[0].shadow ? (await this.run(entries, cost)).decisions[0] : await this.store.consume(key, entries[0].rule, cost);
    if (entries[0].shadow) decision = asShadow(decision);
    this.observer.observe(entries, { allowed: decision.allowed || decision.shadow === true, decisions: [decision] }, started, false);
    return decision;
  }

  /**
   * All-or-nothing over several rules, in one round trip: either every rule admits and all are charged, or
   * none is. Either one key for all rules, or `{ key, rule, cost? }` entries.
   */
  consumeAll(key: string, rules: readonly RuleRef[], cost?: number): Promise<MultiDecision>;
  consumeAll(entries: readonly RuleRefEntry[], cost?: number): Promise<MultiDecision>;
  async consumeAll(keyOrEntries: string | readonly RuleRefEntry[], rulesOrCost?: readonly RuleRef[] | number, cost?: number): Promise<MultiDecision> {
    const { entries, defaultCost } = this.entries(keyOrEntries, rulesOrCost, cost);
    const started = this.observer.start();
    const result = await this.run(entries, defaultCost);
    this.observer.observe(entries, result, started, false, defaultCost);
    return result;
  }

  /**
   * Waits until every rule admits `cost` units for `key`, then takes them (all-or-nothing, as `consumeAll`): for calls
   * to an API with limits of its own. Calls on the same key and rules queue in arrival order and only the first asks
   * the store, again after exactly the wait its refusal reported. Rejects with `RateLimitWaitTimeoutError` (nothing
   * taken) as soon as a reported wait ends past `maxWaitMs`, and with the signal's reason on abort.
   */
  waitToConsume(key: string, rules: RuleRef | readonly RuleRef[], options?: RateLimitWaitOptions): Promise<MultiDecision> {
    try {
      const refs: readonly RuleRef[] = Array.isArray(rules) ? rules : [rules as RuleRef];
      if (refs.length === 0) throw new RateLimitConfigError('rules', rules, 'at least one rule to wait for');
      const { cost, maxWaitMs, signal } = checkWaitOptions(options);
      // Names are looked up now, so an unknown one rejects at once; each attempt looks them up again, as consumeAll does.
      const signature = JSON.stringify([key, ...refs.map((ref) => this.rule(ref).name)]);
      const decide = () => this.consumeAll(key, refs, cost);
      // An admission whose caller aborted meanwhile: the units it took go back (not those admitted uncounted).
      const giveBack = (result: MultiDecision) =>
        Promise.all(result.decisions.map((d, i) => (d.allowed && d.degraded !== 'open' ? this.refund(key, refs[i], cost) : undefined)));
      return this.waiter.wait(signature, { decide, giveBack }, { cost, maxWaitMs, signal });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Calls waiting in `waitToConsume` now, every key together. */
  get waitingCalls(): number {
    return this.waiter.size;
  }

  /** Calls still waiting in `waitToConsume` reject (an AbortError), so their timers do not hold the process open; units of local budgets go back. */
  async onModuleDestroy(): Promise<void> {
    this.waiter.close(new DOMException('The rate limit module closed while the call waited', 'AbortError'));
    // Units held go back before the module closes its client (each give-back bounded by the store's timeout).
    this.budgets?.clear();
    await this.budgets?.settled();
    this.store.close?.();
  }

  /** What `consume` would decide now, recording nothing (marked `shadow: true` for a shadow rule). */
  peek(key: string, rule: RuleRef, cost = 1): Promise<Decision> {
    const { rule: resolved, shadow } = this.ruleKey(key, rule);
    return this.store.peek(key, resolved, cost).then((decision) => (shadow ? asShadow(decision) : this.observer.peeked(resolved, decision)));
  }

  /** Gives back units a `consume` took (e.g. when the SMS provider failed). */
  async refund(key: string, rule: RuleRef, cost = 1): Promise<void> {
    const resolved = this.rule(rule);
    this.blockCache?.forget(resolved.name, key);
    await this.store.refund(key, resolved, cost);
  }

  /** Forgets the key's state under the rule, lockout included (e.g. after a successful login). */
  async reset(key: string, rule: RuleRef): Promise<void> {
    const resolved = this.rule(rule);
    this.blockCache?.forget(resolved.name, key);
    this.budgets?.forget(resolved, key);
    await this.store.reset(key, resolved);
  }

  /**
   * Consumes and throws `RateLimitExceededException` (429) when refused: one rule or several for one key, or
   * `{ key, rule, cost? }` entries, all-or-nothing.
   */
  enforce(key: string, rules: RuleRef | readonly RuleRef[], cost?: number): Promise<MultiDecision>;
  enforce(entries: readonly RuleRefEntry[], cost?: number): Promise<MultiDecision>;
  async enforce(keyOrEntries: string | readonly RuleRefEntry[], rulesOrCost?: RuleRef | readonly RuleRef[] | number, cost?: number): Promise<MultiDecision> {
    const rules = typeof keyOrEntries === 'string' ? (Array.isArray(rulesOrCost) ? rulesOrCost : [rulesOrCost as RuleRef]) : rulesOrCost;
    const { entries, defaultCost } = this.entries(keyOrEntries, rules as readonly RuleRef[] | number | undefined, cost);
    const started = this.observer.start();
    const result = await this.run(entries, defaultCost);
    this.observer.observe(entries, result, started, false, defaultCost);
    if (!result.allowed) throw new RateLimitExceededException(this.refusalMessage(), longestWaitMs(result.decisions), result.decisions, entries.map((e) => e.rule));
    return result;
  }

  /**
   * Decides resolved entries, as the guard does: one rule alone, several all-or-nothing. A request refused
   * before is refused again from the local block cache until its wait has passed, without a store call.
   * `rulesVersion` is the `RateLimitPolicies.version` the entries' rules were read under (default: now).
   */
  decide(entries: readonly RuleKey[], rulesVersion = this.policies.version): Promise<MultiDecision> {
    const started = this.observer.start();
    try {
      const cache = this.blockCache;
      // The cache's state before the store is asked: a refusal decided while a reset or reload emptied it is not kept.
      const generation = cache ? this.blockCacheGeneration() : 0;
      // The signature is built only when there is a refusal it could find: most requests meet an empty cache.
      const signature = cache && cache.size > 0 ? LocalBlockCache.signature(entries) : undefined;
      const cached = signature === undefined ? undefined : cache!.get(signature);
      if (cached) {
        this.metrics?.blockCacheHit();
        this.observer.observe(entries, cached, started, true);
        return Promise.resolve(cached);
      }
      return this.run(entries, 1, started, (result) => this.decided(entries, result, started, rulesVersion, signature, generation));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The block cache's generation, after emptying it if the rules changed (a refusal under old limits proves nothing). */
  private blockCacheGeneration(): number {
    const cache = this.blockCache!;
    if (this.blockCacheVersion !== this.policies.version) {
      cache.clear();
      this.blockCacheVersion = this.policies.version;
    }
    return cache.generation;
  }

  /** A decision made: remembered if it is a refusal the block cache may repeat, and observed. */
  private decided(entries: readonly RuleKey[], result: MultiDecision, started: number, rulesVersion: number, signature: string | undefined, generation: number): MultiDecision {
    const cache = this.blockCache;
    // A degraded refusal says nothing about the key: it must not outlive the outage. Nor may a refusal decided
    // under rules since replaced, or while a reset, refund or reload emptied the cache: its reply was in flight.
    // Nor a refusal under an overridable rule: an override set on another instance applies on the next decision.
    if (cache && !result.allowed && !result.decisions.some((d) => d.degraded) && !entries.some((e) => e.rule.overrides) && rulesVersion === this.policies.version && generation === cache.generation) {
      cache.set(signature ?? LocalBlockCache.signature(entries), result, longestWaitMs(result.decisions));
    }
    this.observer.observe(entries, result, started, false);
    return result;
  }

  /**
   * Takes a lease of a concurrency rule for `key` (e.g. a user id) if fewer than its `limit` are held. An acquired
   * lease is renewed every `leaseMs / 2` until `release()`, which must be called once the work is done (in a
   * `finally`); `withLease` does that for you. A refusal is returned, not thrown.
   */
  async acquire(key: string, rule: RuleRef): Promise<LeaseResult> {
    const { decision, lease } = await this.takeLease(key, this.rule(rule));
    const { allowed: acquired, limit, remaining, retryAfterMs, degraded } = decision;
    return { acquired, limit, remaining, retryAfterMs, ...(lease ? { lease } : {}), ...(degraded ? { degraded } : {}) };
  }

  /** A lease of a resolved concurrency rule, renewed while held, with its decision in the one `Decision` shape. */
  private async takeLease(key: string, rule: RateLimitRule): Promise<{ decision: Decision; lease?: Lease }> {
    const taken = await this.leases.acquire(key, rule);
    return { decision: leaseDecision(taken), lease: taken.lease ? holdLease(taken.lease, rule.leaseMs!) : undefined };
  }

  /**
   * Runs `fn` holding a lease of a concurrency rule for `key`, and releases it however `fn` ends. Throws
   * `RateLimitExceededException` (429, Retry-After: see `acquire`) when no slot is free, without running `fn`.
   */
  async withLease<T>(key: string, rule: RuleRef, fn: () => T | Promise<T>): Promise<T> {
    const resolved = this.rule(rule);
    const { decision, lease } = await this.takeLease(key, resolved);
    if (!lease) throw new RateLimitExceededException(this.refusalMessage(), decision.retryAfterMs, [decision], [resolved]);
    try {
      return await fn();
    } finally {
      await lease.release();
    }
  }

  /**
   * `decide` for entries some of whose rules are concurrency rules, as the guard calls it: the rate rules decide
   * first; if they admit, a lease is taken for each concurrency rule (`takeLeasesAfter`). The leases of an admitted
   * request are returned for the caller to release when the request ends.
   */
  async decideWithLeases(entries: readonly RuleKey[], rulesVersion = this.policies.version): Promise<MultiDecision & { leases: Lease[] }> {
    const rated = await this.decideRates(entries, rulesVersion);
    if (rated.rates.allowed) return this.takeLeasesAfter(rated);
    return { allowed: false, decisions: withLeaseDecisions(entries, rated.rates.decisions, (entry) => leaseNotAsked(entry.rule)), leases: [] };
  }

  /** The first step of `decideWithLeases`: the rate rules of `entries` decided (and charged), no lease asked yet. */
  async decideRates(entries: readonly RuleKey[], rulesVersion = this.policies.version): Promise<RatedRequest> {
    const rated = entries.filter((entry) => entry.rule.algorithm !== 'concurrency');
    return { entries, rated, rates: rated.length > 0 ? await this.decide(rated, rulesVersion) : NOTHING_RATED };
  }

  /**
   * The second step, for a request whose rate rules admitted: a lease for each concurrency rule. If one is refused,
   * the leases taken are released and the rate rules' units refunded (not those the failure policy admitted
   * uncounted), so a refused request holds and costs nothing. If taking one fails, those taken are released.
   */
  async takeLeasesAfter({ entries, rated, rates }: RatedRequest): Promise<MultiDecision & { leases: Lease[] }> {
    const leased = entries.filter((entry) => entry.rule.algorithm === 'concurrency');
    const started = this.observer.start();
    const settled = await Promise.allSettled(leased.map((entry) => this.takeLease(entry.key, entry.rule)));
    const leases = settled.flatMap((s) => (s.status === 'fulfilled' && s.value.lease ? [s.value.lease] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      releaseAll(leases);
      throw failed.reason;
    }
    const asked = settled.map((s) => (s as PromiseFulfilledResult<{ decision: Decision; lease?: Lease }>).value);
    let l = 0;
    const decisions = withLeaseDecisions(entries, rates.decisions, () => asked[l++].decision);
    // A shadow concurrency rule holds its lease when it gets one, and refuses nothing when it does not.
    const allowed = asked.every((a, i) => a.decision.allowed || leased[i].shadow === true);
    // The leases are decisions of their own (the rate rules were observed in `decide`): counted, hooked, audited.
    this.observer.observe(leased, { allowed, decisions: decisions.filter((_, i) => entries[i].rule.algorithm === 'concurrency') }, started, false);
    if (!allowed) {
      await Promise.all(leases.map((lease) => lease.release()));
      await Promise.all(
        rated.map((e, i) => (rates.decisions[i].degraded === 'open' ? undefined : this.refund(e.key, e.rule, e.cost ?? 1).catch(() => undefined))),
      );
    }
    return { allowed, decisions, leases: allowed ? leases : [] };
  }

  /** The 429's message where no request context is at hand: a function `errorMessage` needs one. */
  private refusalMessage(): string {
    return typeof this.settings.errorMessage === 'string' ? this.settings.errorMessage : 'Too Many Requests';
  }

  /**
   * Every decision's route to the store: the rules in force, then any shadow rule (shadow/shadow-mode.decider.ts); one
   * rule alone by the store's single-rule path, several all-or-nothing. The memory store decides synchronously, with
   * no promise in between, and so do units at hand of a rule with `localBudget` (budgets/); `started`
   * (performance.now() when the decision began, if observed; else 0) is their clock read.
   * `then`, given the decision, is applied in the same promise: every request's path, kept to one promise and turn.
   */
  private run(entries: readonly RuleKey[], defaultCost: number, started?: number): Promise<MultiDecision>;
  private run<T>(entries: readonly RuleKey[], defaultCost: number, started: number | undefined, then: (result: MultiDecision) => T): Promise<T>;
  private run<T>(entries: readonly RuleKey[], defaultCost: number, started?: number, then?: (result: MultiDecision) => T): Promise<T | MultiDecision> {
    try {
      const done: ((result: MultiDecision) => T | MultiDecision) | undefined = then;
      if (hasShadowRules(entries)) {
        const decided = decideWithShadowRules(entries, defaultCost, (inForce) => this.run(inForce, defaultCost), this.store);
        return done ? decided.then(done) : decided;
      }
      if (this.budgets !== undefined && usesLocalBudget(entries)) {
        if (this.budgetsVersion !== this.policies.version) {
          this.budgets.clear();
          this.budgetsVersion = this.policies.version;
        }
        // A one-rule request with units at hand: decided here, with no promise in between (the hot path).
        const local = entries.length === 1 ? this.budgets.spendAlone(entries[0], defaultCost, started || undefined) : undefined;
        if (local) return Promise.resolve(done ? done(local) : local);
        const decided = this.budgets.decide(entries, defaultCost);
        return done ? decided.then(done) : decided;
      }
      if (this.syncStore) {
        const result = this.syncStore.consumeAllNow(entries, defaultCost, this.observer.timed ? started : undefined);
        return Promise.resolve(done ? done(result) : result);
      }
      if (entries.length > 1) {
        const decided = this.store.consumeAll(entries, defaultCost);
        return done ? decided.then(done) : decided;
      }
      return this.store.consume(entries[0].key, entries[0].rule, entries[0].cost ?? defaultCost).then(done ? (decision) => done(alone(decision)) : alone);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Resolves a rule reference; unknown names throw a `RateLimitConfigError` listing the configured ones. */
  rule(ref: RuleRef): RateLimitRule {
    return isRule(ref) ? ref : this.policy(ref).rule;
  }

  /** A rule reference for a key: shadow when its mode (or, for a rule without one, the module's) is `'shadow'`. */
  private ruleKey(key: string, ref: RuleRef, cost?: number): RuleKey {
    const policy = isRule(ref) ? undefined : this.policy(ref);
    const rule = policy ? policy.rule : (ref as RateLimitRule);
    return this.policies.isShadow(policy ?? NO_MODE) ? { key, rule, cost, shadow: true } : { key, rule, cost };
  }

  private policy(ref: string | RateLimitDecoratorOptions): RateLimitPolicy {
    if (typeof ref === 'string') {
      const policy = this.policies.get(ref);
      if (!policy) throw new RateLimitConfigError('rule', ref, `the name of a configured rule (${this.policies.names().join(', ') || 'none are configured'})`);
      return policy;
    }
    let policy = this.compiled.get(ref);
    if (!policy) {
      const { name = 'default', ...options } = ref;
      policy = compilePolicy(options as RateLimitPolicyOptions, name, 'rule');
      this.compiled.set(ref, policy);
    }
    return policy;
  }

  private entries(keyOrEntries: string | readonly RuleRefEntry[], rulesOrCost: readonly RuleRef[] | number | undefined, cost: number | undefined): { entries: RuleKey[]; defaultCost: number } {
    if (typeof keyOrEntries === 'string') {
      return { entries: (rulesOrCost as readonly RuleRef[]).map((rule) => this.ruleKey(keyOrEntries, rule)), defaultCost: cost ?? 1 };
    }
    return {
      entries: keyOrEntries.map((e) => this.ruleKey(e.key, e.rule, e.cost)),
      defaultCost: typeof rulesOrCost === 'number' ? rulesOrCost : 1,
    };
  }
}


const SERVICE_LOGGER = new Logger('RateLimitService');

const NOTHING_RATED: MultiDecision = { allowed: true, decisions: [] };

/** A one-rule request's decision as a request's. */
function alone(decision: Decision): MultiDecision {
  return { allowed: decision.allowed, decisions: [decision] };
}

/** A `defineRule` rule has no mode of its own: the module's applies. */
const NO_MODE: Pick<RateLimitPolicy, 'mode'> = {};

function isRule(value: RuleRef): value is RateLimitRule {
  return typeof (value as RateLimitRule).windowMs === 'number' && typeof (value as RateLimitRule).name === 'string';
}
