import { parseDuration, parseInteger } from './duration.parser.js';
import { boundedDuration, compileLockout } from './lockout.option.js';
import { compileLocalBudget } from './local-budget.option.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';
import { MAX_EXACT_UNITS, reducedInterval } from '../algorithms/exact-instant.js';
import type { FailurePolicy, RateLimitAlgorithm, RateLimitRule, RateLimitRuleOptions } from '../interfaces/rule.interface.js';

export const ALGORITHMS: readonly RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra', 'concurrency'];
export const DEFAULT_ALGORITHM: RateLimitAlgorithm = 'sliding-window';
export const DEFAULT_SEGMENTS = 10;
const MAX_SEGMENTS = 1000;
const KNOWN_FIELDS = new Set(['limit', 'window', 'algorithm', 'segments', 'blockMs', 'lockout', 'afterLockout', 'refill', 'burst', 'failurePolicy', 'leaseMs', 'overrides', 'localBudget']);
export const FAILURE_POLICIES: readonly FailurePolicy[] = ['open', 'closed', 'memory'];

/** A failure policy as written in a rule or the module's options, the error naming `field`. */
export function checkFailurePolicy(value: unknown, field: string): FailurePolicy {
  if (!FAILURE_POLICIES.includes(value as FailurePolicy)) throw new RateLimitConfigError(field, value, `one of ${FAILURE_POLICIES.join(', ')}`);
  return value as FailurePolicy;
}
const ONLY_FOR: Record<string, RateLimitAlgorithm> = { segments: 'sliding-window', refill: 'token-bucket', burst: 'gcra', leaseMs: 'concurrency' };
/** A lease nobody releases lasts this long: longer than any request an app lets run, short enough to recover slots a crash left. */
export const DEFAULT_LEASE_MS = 120_000;
/** Shortest `leaseMs`: renewal runs every half lease, and a renewal must reach Redis before the lease runs out. */
export const MIN_LEASE_MS = 1_000;
/** What a rule name may be: it is part of every Redis key and metric label of the rule. */
export const RULE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Longest `window` and lockout (`blockMs`, and an escalating lockout's `max` and `forgetAfter`) of any rule, in ms: 366 days (a year, leap or not; `'1y'` passes). The scripts
 * compute instants in µs as doubles, exact below 2^53 (about 9.0e15): now (about 1.8e15 µs) plus a window and a
 * lockout of at most 3.2e13 µs each stays near 1.9e15, far below it. Past 2^53, additions round and the stores
 * disagree (a fixed window of '200000d' admitted 7 of 50 under a limit of 5 in Redis).
 */
export const MAX_WINDOW_MS = 366 * 86_400_000;
/**
 * Largest `limit` of a sliding-log rule. The log keeps one sorted-set entry per admitted unit, and one decision
 * may expire a full window of entries and add up to `limit` new ones: measured on Redis 7, about 1.2 ms at 1,000
 * (14 ms at 10,000, 150 ms at 100,000, during which Redis serves no one). Larger limits belong to sliding-window.
 */
export const MAX_SLIDING_LOG_LIMIT = 1000;

/**
 * Validates a rule once, where it is defined, and returns it with every duration in milliseconds.
 * Strings from env vars (`"100"`, `"1m"`) are parsed; anything else invalid throws a `RateLimitConfigError`
 * naming the field (prefixed with `path`, e.g. `rules.login`) and the value.
 */
export function defineRule(options: RateLimitRuleOptions, name = 'default', path = name): RateLimitRule {
  if (typeof name !== 'string' || !RULE_NAME.test(name)) {
    throw new RateLimitConfigError(`${path}.name`, name, 'a name of 1-64 letters, digits, "_", "." or "-"');
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RateLimitConfigError(path, options, 'an object with at least "limit" and "window"');
  }
  for (const field of Object.keys(options)) {
    if (!KNOWN_FIELDS.has(field)) {
      throw new RateLimitConfigError(`${path}.${field}`, (options as unknown as Record<string, unknown>)[field], `one of the fields ${[...KNOWN_FIELDS].join(', ')}`);
    }
  }
  const algorithm = options.algorithm ?? DEFAULT_ALGORITHM;
  if (!ALGORITHMS.includes(algorithm)) {
    throw new RateLimitConfigError(`${path}.algorithm`, options.algorithm, `one of ${ALGORITHMS.join(', ')}`);
  }
  for (const [field, owner] of Object.entries(ONLY_FOR)) {
    const value = (options as unknown as Record<string, unknown>)[field];
    if (value !== undefined && owner !== algorithm) {
      throw new RateLimitConfigError(`${path}.${field}`, value, `no value: "${field}" applies to the ${owner} algorithm only, and this rule uses ${algorithm}`);
    }
  }

  const overrides = overridable(options.overrides, algorithm, `${path}.overrides`);
  if (algorithm === 'concurrency') return concurrencyRule(options, name, path);

  const failurePolicy = options.failurePolicy === undefined ? undefined : checkFailurePolicy(options.failurePolicy, `${path}.failurePolicy`);
  const limit = parseInteger(options.limit, `${path}.limit`, 1);
  const windowMs = parseDuration(options.window, `${path}.window`);
  const lockout = compileLockout(options, path, MAX_WINDOW_MS);
  if (windowMs > MAX_WINDOW_MS) {
    throw new RateLimitConfigError(`${path}.window`, options.window, `a duration of at most ${MAX_WINDOW_MS} ms (366 days)`);
  }
  if (algorithm === 'sliding-log' && limit > MAX_SLIDING_LOG_LIMIT) {
    throw new RateLimitConfigError(
      `${path}.limit`,
      options.limit,
      `at most ${MAX_SLIDING_LOG_LIMIT} for the sliding-log algorithm, which keeps one Redis entry per admitted unit: use sliding-window for larger limits`,
    );
  }
  const windowUs = windowMs * 1000;

  let segments = 1;
  let refill = limit;
  let burst = limit;
  switch (algorithm) {
    case 'sliding-window':
      segments = parseInteger(options.segments ?? DEFAULT_SEGMENTS, `${path}.segments`, 2, MAX_SEGMENTS);
      if (windowMs % segments !== 0) {
        // Name the field the user set: a window the default 10 segments cannot divide is the window's problem.
        if (options.segments === undefined) {
          throw new RateLimitConfigError(`${path}.window`, options.window, `a whole number of ${DEFAULT_SEGMENTS} ms steps for the sliding window's default ${DEFAULT_SEGMENTS} segments (e.g. ${Math.max(DEFAULT_SEGMENTS, windowMs - (windowMs % DEFAULT_SEGMENTS))} ms), or "segments" set to a divisor of ${windowMs}`);
        }
        throw new RateLimitConfigError(`${path}.segments`, options.segments, `a number of segments that divides the window of ${windowMs} ms into whole milliseconds`);
      }
      break;
    case 'fixed-window':
      // The window's end and its count share one integer in Redis (see lua/fixed-window.lua).
      if (limit >= windowUs) throw new RateLimitConfigError(`${path}.limit`, options.limit, `fewer than 1000 per millisecond of window (${windowUs})`);
      break;
    case 'token-bucket': {
      refill = parseInteger(options.refill ?? limit, `${path}.refill`, 1, windowUs);
      // Exact arithmetic (algorithms/exact-instant.ts) counts in units of 1/d µs: the capacity must fit in them.
      const [interval] = reducedInterval(windowUs, refill);
      if (limit * interval > MAX_EXACT_UNITS) {
        throw new RateLimitConfigError(`${path}.limit`, options.limit, `a limit × window (µs) / gcd(window (µs), refill) of at most ${MAX_EXACT_UNITS} (here ${limit} × ${interval}): a smaller limit, a shorter window, or a refill that divides the window in µs`);
      }
      break;
    }
    case 'gcra': {
      burst = parseInteger(options.burst ?? limit, `${path}.burst`, 1);
      if (limit > windowUs) throw new RateLimitConfigError(`${path}.limit`, options.limit, `at most 1000 per millisecond of window (${windowUs})`);
      const [interval] = reducedInterval(windowUs, limit);
      if (burst * interval > MAX_EXACT_UNITS) {
        throw new RateLimitConfigError(`${path}.burst`, options.burst ?? burst, `a burst × window (µs) / gcd(window (µs), limit) of at most ${MAX_EXACT_UNITS} (here ${burst} × ${interval}): a smaller burst, a shorter window, or a limit that divides the window in µs`);
      }
      break;
    }
  }
  const localBudget = compileLocalBudget(options, algorithm, algorithm === 'gcra' ? burst : limit, windowMs, lockout.blockMs > 0, path);
  return Object.freeze({
    name,
    algorithm,
    limit,
    windowMs,
    segments,
    ...lockout,
    refill,
    burst,
    ...(failurePolicy ? { failurePolicy } : {}),
    ...(overrides ? { overrides } : {}),
    ...(localBudget ? { localBudget } : {}),
  });
}

/**
 * The `overrides` option: true or false (or their strings, from env vars). A GCRA's limit sets its rate and its
 * burst another cap, and a concurrency rule holds leases, not decisions: an override's one limit fits neither.
 */
function overridable(value: unknown, algorithm: RateLimitAlgorithm, field: string): true | undefined {
  if (value === undefined || value === false || value === 'false') return undefined;
  if (value !== true && value !== 'true') throw new RateLimitConfigError(field, value, 'true or false');
  if (algorithm === 'gcra' || algorithm === 'concurrency') {
    throw new RateLimitConfigError(field, value, `false: overrides apply to the sliding-log, sliding-window, fixed-window and token-bucket algorithms, and this rule uses ${algorithm}`);
  }
  return true;
}

/**
 * A concurrency rule: `limit` leases in flight per tracker, each lasting `leaseMs` unless released or renewed.
 * It has no window, and no lockout (a refusal lasts only until a lease is released); `windowMs` is set to
 * `leaseMs` so that code reading any rule's window (headers, key TTLs) stays sane.
 */
function concurrencyRule(options: RateLimitRuleOptions, name: string, path: string): RateLimitRule {
  // Refuses a localBudget other than false.
  compileLocalBudget(options, 'concurrency', 1, 0, false, path);
  for (const field of ['window', 'blockMs', 'lockout', 'afterLockout'] as const) {
    if (options[field] !== undefined) {
      throw new RateLimitConfigError(`${path}.${field}`, options[field], `no value: the concurrency algorithm has no ${field === 'window' ? 'window (a lease lasts "leaseMs")' : 'lockout (a refusal lasts until a lease is released)'}`);
    }
  }
  const failurePolicy = options.failurePolicy === undefined ? undefined : checkFailurePolicy(options.failurePolicy, `${path}.failurePolicy`);
  const limit = parseInteger(options.limit, `${path}.limit`, 1);
  const leaseMs = boundedDuration(options.leaseMs ?? DEFAULT_LEASE_MS, `${path}.leaseMs`, MIN_LEASE_MS, MAX_WINDOW_MS);
  return Object.freeze({ name, algorithm: 'concurrency', limit, windowMs: leaseMs, leaseMs, segments: 1, blockMs: 0, refill: limit, burst: limit, ...(failurePolicy ? { failurePolicy } : {}) });
}

/** The largest cost one request can ever be admitted with under this rule. */
export function maxCost(rule: RateLimitRule): number {
  return rule.algorithm === 'gcra' ? rule.burst : rule.limit;
}
