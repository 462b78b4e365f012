/** The algorithms that decide per request over a window: each has a Lua script and a memory twin (algorithms/). */
export type WindowAlgorithm = 'sliding-log' | 'sliding-window' | 'fixed-window' | 'token-bucket' | 'gcra';

/** Every algorithm a rule may name: a window algorithm, or `'concurrency'` (a cap on requests in flight, held as leases). */
export type RateLimitAlgorithm = WindowAlgorithm | 'concurrency';

/** What decides while the store is unavailable: admit, refuse, or the embedded memory store. */
export type FailurePolicy = 'open' | 'closed' | 'memory';

/** What a lockout's end leaves of the count: the count the window had (`'resume'`), or a full budget (`'restart'`). */
export type AfterLockout = 'resume' | 'restart';

/** A duration: milliseconds as a number, or a string with a unit in any form the `ms` package reads (`'500ms'`, `'10s'`, `'1min'`, `'2 hours'`, `'1d'`, `'1w'`); a string without a unit is refused. */
export type Duration = number | string;

/** A rule as users write it (in code, in config or from env vars, where numbers arrive as strings). */
export interface RateLimitRuleOptions {
  /** Requests admitted per `window` (token bucket: capacity; GCRA: count per period). Positive integer. */
  limit: number | string;
  /** Length of the window (token bucket: the time `refill` tokens take to come back; GCRA: the period). Required by every algorithm but `'concurrency'`, which has none. */
  window?: Duration;
  /** @default 'sliding-window' */
  algorithm?: RateLimitAlgorithm;
  /** Sliding window only: cells the window is split into, 2..1000, and they must divide the window's ms. @default 10 */
  segments?: number | string;
  /** Once this rule refuses a tracker (on `consume`), refuse it for this long (ms or a duration string): a lockout. 0 = off. Use `lockout` for one that grows. @default 0 */
  blockMs?: Duration;
  /**
   * The lockout after a refusal (on `consume`): a duration (a fixed lockout, as `blockMs`, which it replaces), or
   * one that escalates with repeated abuse (see `EscalatingLockoutOptions`). Not with `blockMs`. @default none
   */
  lockout?: Duration | EscalatingLockoutOptions;
  /**
   * What a lockout's end (`blockMs` or `lockout`) leaves of the window's count. `'resume'`: the count it had, so a
   * window still full refuses on, and the wait reported is the longer of the lockout and the window's own.
   * `'restart'`: a full budget, as `@nestjs/throttler`'s `blockDuration` does (its count restarts once the block
   * has passed), and the wait reported is the lockout's. Only with a lockout. @default 'resume'
   */
  afterLockout?: AfterLockout;
  /** Token bucket only: tokens that come back per `window`. @default limit */
  refill?: number | string;
  /** GCRA only: requests admitted at once, redis-cell's `max_burst + 1`. @default limit */
  burst?: number | string;
  /** What decides for this rule while Redis is unavailable. @default the module's `failurePolicy` */
  failurePolicy?: FailurePolicy;
  /**
   * Concurrency only: how long a lease lasts if nobody releases it (ms or a duration string), so that a crashed
   * process cannot hold its slots forever. A lease still held is renewed every `leaseMs / 2`. @default '2m'
   */
  leaseMs?: Duration;
  /**
   * Whether operators may override this rule per tracker at run time (`RateLimitService.overrides`): raise or cut its
   * limit, or block a tracker, until an expiry. Each decision of such a rule reads its override too (on Redis, one
   * more key in the same script); other rules pay nothing. Not for the gcra and concurrency algorithms. @default false
   */
  overrides?: boolean | 'true' | 'false';
  /**
   * Hot keys: lets each app instance take units of this rule's budget ahead, from Redis, and spend them locally, with no
   * round trip per request. Units are taken before they are spent, so the limit is never exceeded; the price is that
   * units one instance holds are refused to the others meanwhile (at most `maxUnits` per instance and key). A key is
   * taken ahead for only once this instance sees it at a rate worth it: cold keys are decided exactly, as without
   * the option. For sliding-window, fixed-window, token-bucket and gcra rules without a lockout; the memory store
   * decides locally anyway and ignores it. `true` takes the defaults. @default false
   */
  localBudget?: boolean | 'true' | 'false' | LocalBudgetOptions;
}

/** How much of a rule's budget one instance may take ahead (see `RateLimitRuleOptions.localBudget`). Numbers may arrive as strings. */
export interface LocalBudgetOptions {
  /** The most units one instance takes ahead at once for one key, 2 to the limit (GCRA: the burst). @default 1% of the limit (refused if that is under 2) */
  maxUnits?: number | string;
  /**
   * The longest an instance keeps units taken ahead before it gives back those it did not spend, in ms or a duration
   * string, up to 1 minute. A fixed window's units also end with their window, a sliding window's with their cell.
   * @default 100 ms (the window, if shorter)
   */
  maxMs?: Duration;
}

/**
 * A lockout that grows with repeated abuse (OWASP's guidance for login throttling): a refusal that starts a lockout
 * less than `forgetAfter` after the previous lockout ended lasts `factor` times as long as that one did, up to `max`;
 * a quiet `forgetAfter` brings it back to `base`. `reset()` forgets the level too (e.g. after a successful login).
 * Numbers may arrive as strings (config, env vars).
 */
export interface EscalatingLockoutOptions {
  /** The first lockout (ms or a duration string), greater than 0, at most 366 days. */
  base: Duration;
  /** How much longer each escalation lasts than the one before: 1 (a fixed lockout) or more. @default 2 */
  factor?: number | string;
  /**
   * The longest lockout (ms or a duration string), from `base` to 366 days; reached within 100 escalations.
   * @default base × factor^10, at most 366 days
   */
  max?: Duration;
  /** How long after a lockout ends the next one still escalates (ms or a duration string), up to 366 days. @default max */
  forgetAfter?: Duration;
}

/** A rule after validation: every field present, every duration in milliseconds. Build one with `defineRule`. */
export interface RateLimitRule {
  /** The rule's name; part of every key it writes. */
  readonly name: string;
  readonly algorithm: RateLimitAlgorithm;
  readonly limit: number;
  readonly windowMs: number;
  /** Sliding window cells (1 for the other algorithms). */
  readonly segments: number;
  /** Lockout after a refusal, in milliseconds; 0 = none. The first (base) lockout when it escalates. */
  readonly blockMs: number;
  /** Escalating lockouts only: each lockout started within `lockoutForgetMs` of the previous one's end lasts this many times longer (> 1). Absent = a fixed lockout. */
  readonly lockoutFactor?: number;
  /** Escalating lockouts only: the longest lockout, in ms (> `blockMs`). */
  readonly lockoutMaxMs?: number;
  /** Escalating lockouts only: how long after a lockout ends the next one still escalates, in ms. */
  readonly lockoutForgetMs?: number;
  /** `afterLockout: 'restart'`: a refusal that starts a lockout also clears the count, so the lockout's end restarts it. Absent = `'resume'`. */
  readonly lockoutRestartsCount?: true;
  /** Token bucket: tokens per window. GCRA and the others: equal to `limit`. */
  readonly refill: number;
  /** Token bucket: capacity (= limit). GCRA: `max_burst + 1`. Others: equal to `limit`. */
  readonly burst: number;
  /** Overrides the module's failure policy for this rule. */
  readonly failurePolicy?: FailurePolicy;
  /** Concurrency: how long an unreleased lease lasts, in ms (`windowMs` equals it). Absent on the other algorithms. */
  readonly leaseMs?: number;
  /** Present (true) when the rule can be overridden per tracker at run time (see `RateLimitRuleOptions.overrides`). */
  readonly overrides?: true;
  /** Present when instances may take units ahead (see `RateLimitRuleOptions.localBudget`): the largest take, and the longest one is kept (ms). */
  readonly localBudget?: { readonly maxUnits: number; readonly maxMs: number };
}
