import type { ExecutionContext } from '@nestjs/common';
import { finalize, Observable, type Subscription } from 'rxjs';
import type { MultiDecision } from '../interfaces/decision.interface.js';
import type { Lease } from '../interfaces/lease-store.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import type { RequestLeaseDecider } from '../interfaces/lease-store.interface.js';
import { leaseNotAsked, withLeaseDecisions } from '../stores/leases/lease.decisions.js';
import { releaseAll } from '../stores/leases/lease.holder.js';

/** Sets the headers of a refused call and throws its refusal, as the guard does for its own (RateLimitGuard builds it). */
export type RefuseCall = (result: MultiDecision) => unknown;

/** Takes the leases of a call every guard admitted: resolves with them, or rejects with the refusal when one is not free. */
export type TakeLeases = () => Promise<Lease[]>;

/** Leases to take in RateLimitInterceptor, by the handler call's arguments (one array per call, shared by its guards and interceptors). */
const pending = new WeakMap<object, TakeLeases>();

/**
 * The guard's part for a call with no HTTP response to wait for (a WebSocket message, a GraphQL resolver without
 * one, another transport): decides (and charges) the rate rules, and leaves the leases of the concurrency rules
 * to RateLimitInterceptor, which runs only once every guard admitted the call: a call another guard refuses
 * holds nothing. Until then the concurrency rules report the lease as not yet asked.
 */
export async function decideDeferringLeases(service: RequestLeaseDecider, entries: readonly RuleKey[], rulesVersion: number, context: ExecutionContext, refuse: RefuseCall): Promise<MultiDecision> {
  const rated = await service.decideRates(entries, rulesVersion);
  if (rated.rates.allowed) {
    const take: TakeLeases = async () => {
      const { leases, ...result } = await service.takeLeasesAfter(rated);
      if (!result.allowed) await refuse(result);
      return leases;
    };
    const args = context.getArgs();
    // A second RateLimitGuard on the same call (a global one and a gateway's own) adds its leases to the first's.
    const earlier = pending.get(args);
    pending.set(args, earlier ? () => takeBoth(earlier, take) : take);
  }
  return { allowed: rated.rates.allowed, decisions: withLeaseDecisions(entries, rated.rates.decisions, (entry) => leaseNotAsked(entry.rule)) };
}

/** The leases the guard left for this handler call to take (not over HTTP), handed over once. */
export function takePendingLeases(context: ExecutionContext): TakeLeases | undefined {
  const args = context.getArgs();
  const take = pending.get(args);
  if (take) pending.delete(args);
  return take;
}

/**
 * `handled`, run once the call's leases are taken, which are released when it completes, fails or is
 * unsubscribed, or when the WebSocket client disconnects first; the refusal instead when a lease is not free.
 */
export function holdingLeases<T>(take: TakeLeases, context: ExecutionContext, handled: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    let inner: Subscription | undefined;
    take().then(
      (leases) => {
        const release = holdUntilDone(leases, context);
        // Unsubscribed while the leases were taken: nobody runs the handler.
        if (subscriber.closed) return release();
        inner = handled.pipe(finalize(release)).subscribe(subscriber);
      },
      (error: unknown) => {
        if (!subscriber.closed) subscriber.error(error);
      },
    );
    return () => inner?.unsubscribe();
  });
}

async function takeBoth(first: TakeLeases, second: TakeLeases): Promise<Lease[]> {
  const leases = await first();
  try {
    return [...leases, ...(await second())];
  } catch (error) {
    releaseAll(leases);
    throw error;
  }
}

type Emitter = { once(event: string, listener: () => void): unknown; off?(event: string, listener: () => void): unknown };

const CLIENT_GONE = ['close', 'disconnect'];

/** Releases the leases when the WebSocket client goes away first; returns the release for the end of the handler, which stops listening. */
function holdUntilDone(leases: readonly Lease[], context: ExecutionContext): () => void {
  if (leases.length === 0) return () => {};
  const release = () => releaseAll(leases);
  if (context.getType<string>() !== 'ws') return release;
  const client = context.switchToWs().getClient<Partial<Emitter> | undefined>();
  if (typeof client?.once !== 'function') return release;
  // ws emits 'close', socket.io 'disconnect'; taken off once released, or a long-lived socket would pile listeners up.
  for (const event of CLIENT_GONE) client.once(event, release);
  return () => {
    for (const event of CLIENT_GONE) client.off?.(event, release);
    release();
  };
}
