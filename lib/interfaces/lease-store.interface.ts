import type { MultiDecision } from './decision.interface.js';
import type { FailurePolicy, RateLimitRule } from './rule.interface.js';
import type { RuleKey } from './store.interface.js';

/** A slot of a concurrency rule, held until released or until it expires `leaseMs` after it was taken or renewed. */
export interface LeaseHandle {
  /** The lease's id in the store (random; unique per acquire). */
  readonly id: string;
  /** Pushes the lease's expiry to `leaseMs` from now; false when the lease was lost (it expired, or was released). */
  renew(): Promise<boolean>;
  /** Frees the slot. Releasing a lease that is gone already does nothing. */
  release(): Promise<void>;
}

/** The answer to "may one more request of this tracker be in flight?". */
export interface LeaseDecision {
  /** Whether a lease was taken. */
  acquired: boolean;
  /** Leases the rule allows in flight at once. */
  limit: number;
  /** Leases held after this call, this one included when acquired. */
  inFlight: number;
  /** 0 when acquired; otherwise ms until the oldest lease expires, the latest a slot frees if nobody releases one. */
  retryAfterMs: number;
  /** The lease, when acquired (on failure policy 'open', a lease that holds nothing). */
  lease?: LeaseHandle;
  /** Set when the store could not answer and the failure policy decided, as on `Decision`. */
  degraded?: FailurePolicy;
}

/** Where the leases of concurrency rules are kept: Redis (a sorted set per tracker, in Lua) or this process's memory. */
export interface LeaseStore {
  /** Takes a lease under `rule` (a concurrency rule) for the tracker `key` if fewer than `rule.limit` are held. */
  acquire(key: string, rule: RateLimitRule): Promise<LeaseDecision>;
}

/** A lease the service hands out: renewed in the background while held, released once (further calls do nothing). */
export interface Lease {
  /** The lease's id in the store. */
  readonly id: string;
  /** Whether `release()` was called (or the lease was found lost on renewal). */
  readonly released: boolean;
  /** Frees the slot and stops the renewal. Idempotent; never rejects (a lease Redis could not be told of expires after `leaseMs`). */
  release(): Promise<void>;
}

/** What `RateLimitService.acquire` answers. */
export interface LeaseResult {
  /** Whether a lease was taken: then `lease` is set, and must be released. */
  acquired: boolean;
  /** Leases the rule allows in flight at once. */
  limit: number;
  /** Slots left after this call. */
  remaining: number;
  /** 0 when acquired; otherwise ms after which to try again: 1 s, or sooner when the oldest lease expires sooner. */
  retryAfterMs: number;
  lease?: Lease;
  /** Set when the failure policy decided, as on `Decision`. */
  degraded?: FailurePolicy;
}

/** A request's rate rules decided, for its leases to be taken after (`RateLimitService.takeLeasesAfter`). */
export interface RatedRequest {
  readonly entries: readonly RuleKey[];
  /** The entries that are not concurrency rules, in order. */
  readonly rated: readonly RuleKey[];
  /** Their decision. */
  readonly rates: MultiDecision;
}

/**
 * What the HTTP lease binders ask of `RateLimitService` (which implements it): a request's rules decided with its
 * concurrency leases taken, at once or after the rate rules.
 */
export interface RequestLeaseDecider {
  decideWithLeases(entries: readonly RuleKey[], rulesVersion?: number): Promise<MultiDecision & { leases: Lease[] }>;
  decideRates(entries: readonly RuleKey[], rulesVersion?: number): Promise<RatedRequest>;
  takeLeasesAfter(request: RatedRequest): Promise<MultiDecision & { leases: Lease[] }>;
}
