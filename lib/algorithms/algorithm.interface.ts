import type { RateLimitAlgorithm, RateLimitRule } from '../interfaces/rule.interface.js';

/** A rule as the algorithms compute with it: times in µs, as the Lua driver builds it from ARGV. */
export interface AlgorithmRule {
  limit: number;
  /** µs */
  window: number;
  /** segments (sliding window), refill (token bucket), max_burst + 1 (GCRA); unused otherwise. */
  param: number;
  /**
   * Token bucket and GCRA: the emission interval as [units, d] (see exact-instant.ts), worked out on first use and
   * kept, since a rule's parameters are built once per rule by the memory store.
   */
  interval?: readonly [units: number, d: number];
}

/**
 * What each Lua `check` returns: allowed, remaining, reset after (µs), retry after (µs; -1 = never). The twins fill
 * one the caller owns and return it, so that a decision builds no result it throws away.
 */
export interface CheckResult {
  allowed: boolean;
  remaining: number;
  resetAfterUs: number;
  retryAfterUs: number;
}

export function checkResult(): CheckResult {
  return { allowed: false, remaining: 0, resetAfterUs: 0, retryAfterUs: 0 };
}

/** Fills `out` and returns it. */
export function answer(out: CheckResult, allowed: boolean, remaining: number, resetAfterUs: number, retryAfterUs: number): CheckResult {
  out.allowed = allowed;
  out.remaining = remaining;
  out.resetAfterUs = resetAfterUs;
  out.retryAfterUs = retryAfterUs;
  return out;
}

/** What the memory store keeps per key: the value a Redis key would hold, and when it would expire (µs). */
export interface MemoryEntry<S> {
  /** The state, or undefined: none (the key then holds nothing). `INTEGER`: the state is the number in `integer`. */
  value: S | undefined;
  /**
   * The state when it is one integer (`value` is then `INTEGER`), as a fixed window's count: a field that only
   * ever holds numbers is written in place, where a number written to `value` is a new heap object each time.
   */
  integer: number;
  expiresAt: number;
}

/** `MemoryEntry.value` when the state is the entry's `integer`. */
export const INTEGER = 1;
export type IntegerState = typeof INTEGER;

/** The in-memory twin of an algorithm's Lua: the same arithmetic, on a JS value instead of a Redis key. */
export interface MemoryAlgorithm<S> {
  /** The Lua `check`: fills `out` and returns it. */
  check(entry: MemoryEntry<S>, r: AlgorithmRule, now: number, cost: number, apply: boolean, out: CheckResult): CheckResult;
  refund(entry: MemoryEntry<S>, r: AlgorithmRule, now: number, cost: number): void;
}

/** Everything a store needs about one algorithm. */
export interface AlgorithmDefinition {
  name: RateLimitAlgorithm;
  /** The id the Lua driver dispatches on; starts the state key's tag (see stateTag). */
  tag: string;
  /**
   * The state key's tag: `tag` followed by the rule's parameters that give the stored state its meaning (cells of
   * 100 ms: `sw100`), so that a live change of them starts afresh instead of misreading the old state.
   */
  stateTag(rule: RateLimitRule): string;
  /** The file in `lua/`. */
  script: string;
  /** The algorithm's own ARGV parameter (see AlgorithmRule.param). */
  param(rule: RateLimitRule): number;
  /** What `Decision.limit` reports. */
  capacity(rule: RateLimitRule): number;
  memory: MemoryAlgorithm<unknown>;
}

/**
 * `value - value % step` for a non-negative integer `value` and a positive integer `step`, both below 2^53. The
 * instants are µs since the epoch, past 2^31, where `%` is a floating-point remainder: in the fixed window's check
 * that was a fifth of a memory decision. The division is exact enough: a quotient that is not an integer lies at
 * least 1/step from one, more than its rounding error (below value / step × 2^-53 < 1/step), so its floor is exact.
 */
export function floorTo(value: number, step: number): number {
  return Math.floor(value / step) * step;
}

/** PEXPIRE's argument, rounded as the Lua `ceil_ms` does, turned back into an absolute expiry in µs. */
export function expiryAfter(now: number, ttlUs: number): number {
  return now + Math.max(0, Math.ceil(ttlUs / 1000)) * 1000;
}
