import type { LeaseDecision, LeaseHandle, LeaseStore } from '../interfaces/lease-store.interface.js';
import type { FailurePolicy, RateLimitRule } from '../interfaces/rule.interface.js';
import { checkLeaseCall } from '../stores/leases/lease.check.js';
import type { MemoryLeaseStore } from '../stores/leases/memory-lease.store.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { DeadlineQueue } from './deadline.queue.js';

export interface ResilientLeaseStoreOptions {
  /** Longest wait for the primary store, in ms, for each acquire, renew and release. @default 50 */
  timeoutMs?: number;
  /** What decides when the primary cannot, unless a rule says otherwise. @default 'memory' */
  failurePolicy?: FailurePolicy;
  /** The decision store's breaker: while it is open, leases are decided by the failure policy without calling Redis. */
  breaker?: CircuitBreaker;
  /** Told of each failure of the primary (logging, metrics). */
  onError?: (error: Error, op: string) => void;
}

/** What a refusal under the `'closed'` policy tells the client to wait. */
const CLOSED_RETRY_MS = 1_000;
const NOTHING_HELD: Omit<LeaseHandle, 'id'> = { renew: async () => true, release: async () => undefined };

/**
 * The lease store behind a failure policy, as ResilientStore is for decisions: the primary (Redis) answers within
 * `timeoutMs`, or the policy decides: `'open'` admits with a lease that holds nothing, `'closed'` refuses,
 * `'memory'` takes the lease in this process. An acquire that answers after the wait is released as soon as it
 * does, so a slot is never held for a request that was not told it had it.
 */
export class ResilientLeaseStore implements LeaseStore {
  private readonly deadlines: DeadlineQueue;
  private readonly policy: FailurePolicy;

  constructor(
    readonly primary: LeaseStore,
    readonly fallback: MemoryLeaseStore,
    private readonly options: ResilientLeaseStoreOptions = {},
  ) {
    this.deadlines = new DeadlineQueue(options.timeoutMs ?? 50);
    this.policy = options.failurePolicy ?? 'memory';
  }

  async acquire(key: string, rule: RateLimitRule): Promise<LeaseDecision> {
    checkLeaseCall(key, rule);
    const policy = rule.failurePolicy ?? this.policy;
    if (this.options.breaker?.state === 'open') return this.degrade(policy, key, rule);
    const call = this.primary.acquire(key, rule);
    try {
      const decision = await this.bounded(call);
      return decision.lease ? { ...decision, lease: this.boundedHandle(decision.lease) } : decision;
    } catch (error) {
      call.then((late) => late.lease?.release()).catch(() => undefined);
      this.options.onError?.(error as Error, 'acquire');
      return this.degrade(policy, key, rule);
    }
  }

  private async degrade(policy: FailurePolicy, key: string, rule: RateLimitRule): Promise<LeaseDecision> {
    if (policy === 'memory') return { ...(await this.fallback.acquire(key, rule)), degraded: 'memory' };
    if (policy === 'open') return { acquired: true, limit: rule.limit, inFlight: 0, retryAfterMs: 0, degraded: 'open', lease: { id: 'open', ...NOTHING_HELD } };
    return { acquired: false, limit: rule.limit, inFlight: 0, retryAfterMs: CLOSED_RETRY_MS, degraded: 'closed' };
  }

  /** Renew and release within `timeoutMs`. A renewal that fails is not a lost lease: it is tried again at the next tick. */
  private boundedHandle(handle: LeaseHandle): LeaseHandle {
    return {
      id: handle.id,
      renew: () =>
        this.bounded(handle.renew()).catch((error: Error) => {
          this.options.onError?.(error, 'renew');
          return true;
        }),
      release: () =>
        this.bounded(handle.release()).catch((error: Error) => {
          // The lease expires `leaseMs` after its last renewal.
          this.options.onError?.(error, 'release');
        }),
    };
  }

  private bounded<T>(call: Promise<T>): Promise<T> {
    return this.deadlines.race(call);
  }
}
