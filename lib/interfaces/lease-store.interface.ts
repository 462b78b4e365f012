import type { FailurePolicy, RateLimitRule } from './rule.interface.js';

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
