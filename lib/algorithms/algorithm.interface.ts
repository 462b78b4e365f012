import type { RateLimitAlgorithm, RateLimitRule } from '../interfaces/rule.interface.js';

/** A rule as the algorithms compute with it: times in µs, as the Lua driver builds it from ARGV. */
export interface AlgorithmRule {
  limit: number;
  /** µs */
  window: number;
  /** segments (sliding window), refill (token bucket), max_burst + 1 (GCRA); unused otherwise. */
  param: number;
}

/** allowed, remaining, reset after (µs), retry after (µs; -1 = never): what each Lua `check` returns. */
export type CheckResult = [allowed: boolean, remaining: number, resetAfterUs: number, retryAfterUs: number];

/** What the memory store keeps per key: the value a Redis key would hold, and when it would expire (µs). */
export interface MemoryEntry<S> {
  value: S | undefined;
  expiresAt: number;
}

/** The in-memory twin of an algorithm's Lua: the same arithmetic, on a JS value instead of a Redis key. */
export interface MemoryAlgorithm<S> {
  check(entry: MemoryEntry<S>, r: AlgorithmRule, now: number, cost: number, apply: boolean): CheckResult;
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

/** PEXPIRE's argument, rounded as the Lua `ceil_ms` does, turned back into an absolute expiry in µs. */
export function expiryAfter(now: number, ttlUs: number): number {
  return now + Math.max(0, Math.ceil(ttlUs / 1000)) * 1000;
}
