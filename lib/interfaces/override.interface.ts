import type { Duration } from './rule.interface.js';

/** What an operator sets for one tracker under one rule with `overrides: true` (see `RateLimitService.overrides`). */
export interface RateLimitOverrideOptions {
  /**
   * The limit in force instead of the rule's (a raise or a cut), a positive integer within what the rule's algorithm
   * allows (a token bucket's capacity; its refill stays the rule's). Exactly one of `limit` and `block`.
   */
  limit?: number;
  /** `true`: refuse every request of the tracker under this rule until the override expires, the time left as the wait. */
  block?: boolean;
  /** How long the override lasts (ms or a duration string), from 1 ms to 366 days; it then ends by itself. */
  ttlMs: Duration;
  /** Why, for whoever lists it and for the audit stream: up to 200 characters. @default none */
  reason?: string;
}

/** An override in force, as `get` and `list` report it. */
export interface RateLimitOverride {
  /** The rule's name: an override belongs to the rule of that name, whatever its definition becomes. */
  rule: string;
  /** The tracker, as given to `set`. */
  key: string;
  /** The limit in force for this tracker; absent for a block. */
  limit?: number;
  /** Whether every request is refused. */
  block: boolean;
  /** When it ends, in ms since the epoch, on the decisions' clock (the module's `clock`, else Redis's). */
  expiresAt: number;
  reason?: string;
}

/** An override as a store keeps it: validated, the duration in ms. */
export interface StoredOverride {
  limit?: number;
  ttlMs: number;
  reason?: string;
}

/**
 * Where a store keeps its overrides, which its decisions of overridable rules read (RedisStore: in Redis, beside
 * each rule's state; MemoryStore: in the process). Callers go through `RateLimitService.overrides`, which validates.
 */
export interface OverrideStore {
  /** Sets (or replaces) the override; `limit` absent is a block. Returns it as `get` would. */
  set(rule: string, key: string, override: StoredOverride): Promise<RateLimitOverride>;
  /** The override in force, or undefined. */
  get(rule: string, key: string): Promise<RateLimitOverride | undefined>;
  /** Removes it; whether one was in force. */
  remove(rule: string, key: string): Promise<boolean>;
  /** The overrides in force, of one rule or all, soonest to end first. */
  list(rule?: string): Promise<RateLimitOverride[]>;
  /**
   * Every override in force, as `list()`, reading again only those set, replaced or removed since `previous` (optional:
   * a store whose `list` is cheap needs none). What the memory fallback's copy is refreshed from.
   */
  snapshot?(previous?: OverrideSnapshot): Promise<OverrideSnapshot>;
}

/** The overrides a store held at a `snapshot`, by an id of each that changes whenever the override does. */
export interface OverrideSnapshot {
  readonly overrides: ReadonlyMap<string, RateLimitOverride>;
}
