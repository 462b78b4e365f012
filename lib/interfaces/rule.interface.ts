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
}
