import type { ExecutionContext } from '@nestjs/common';
import { finalize, Observable, type Subscription } from 'rxjs';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { Lease, LeaseResult } from '../interfaces/lease-store.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import type { RateLimitService } from '../rate-limit.service.js';
import { asShadow } from '../shadow/shadow-mode.decider.js';
import { leaseNotAsked } from '../stores/lease.decisions.js';
import { releaseAll } from '../stores/lease.holder.js';

/** Sets the headers of a refused call and throws its refusal, as the guard does for its own (RateLimitGuard builds it). */
export type RefuseCall = (result: MultiDecision) => unknown;

/** Takes the leases of a call every guard admitted: resolves with them, or rejects with the refusal when one is not free. */
export type TakeLeases = () => Promise<Lease[]>;

/** Leases to take in RateLimitInterceptor, by the handler call's arguments (one array per call, shared by its guards and interceptors). */
const pending = new WeakMap<object, TakeLeases>();

const NOTHING_RATED: MultiDecision = { allowed: true, decisions: [] };

/**
 * The guard's part for a call with no HTTP response to wait for (a WebSocket message, a GraphQL resolver without
 * one, another transport): decides (and charges) the rate rules, and leaves the leases of the concurrency rules
 * to RateLimitInterceptor, which runs only once every guard admitted the call: a call another guard refuses
 * holds nothing. Until then the concurrency rules report the lease as not yet asked.
 */
export async function decideDeferringLeases(service: RateLimitService, entries: readonly RuleKey[], rulesVersion: number, context: ExecutionContext, refuse: RefuseCall): Promise<MultiDecision> {
  const rated: RuleKey[] = [];
  for (const entry of entries) if (entry.rule.algorithm !== 'concurrency') rated.push(entry);
  const rates = rated.length > 0 ? await service.decide(rated, rulesVersion) : NOTHING_RATED;
  if (rates.allowed) {
    const take: TakeLeases = () => takeLeases(service, entries, rated, rates, refuse);
    const args = context.getArgs();
    // A second RateLimitGuard on the same call (a global one and a gateway's own) adds its leases to the first's.
    const earlier = pending.get(args);
    pending.set(args, earlier ? () => takeBoth(earlier, take) : take);
  }
  return { allowed: rates.allowed, decisions: mergeDecisions(entries, rates.decisions, (entry) => leaseNotAsked(entry.rule)) };
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

/**
 * Takes a lease for each concurrency rule (as `RateLimitService.decideWithLeases` does after the rate rules
 * admitted): if one is refused, releases those taken, refunds what the rate rules charged (not those the failure
 * policy admitted uncounted) and refuses the call.
 */
async function takeLeases(service: RateLimitService, entries: readonly RuleKey[], rated: readonly RuleKey[], rates: MultiDecision, refuse: RefuseCall): Promise<Lease[]> {
  const leased = entries.filter((entry) => entry.rule.algorithm === 'concurrency');
  const settled = await Promise.allSettled(leased.map((entry) => service.acquire(entry.key, entry.rule)));
  const leases = settled.flatMap((s) => (s.status === 'fulfilled' && s.value.lease ? [s.value.lease] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    releaseAll(leases);
    throw failed.reason;
  }
  const results = settled.map((s) => (s as PromiseFulfilledResult<LeaseResult>).value);
  // A shadow concurrency rule holds its lease when it gets one, and refuses nothing when it does not.
  if (results.every((result, l) => result.acquired || leased[l].shadow === true)) return leases;
  await Promise.all(leases.map((lease) => lease.release()));
  await Promise.all(rated.map((e, i) => (rates.decisions[i].degraded === 'open' ? undefined : service.refund(e.key, e.rule, e.cost ?? 1).catch(() => undefined))));
  let l = 0;
  await refuse({ allowed: false, decisions: mergeDecisions(entries, rates.decisions, () => leaseDecision(results[l++])) });
  return [];
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

/** The decision of every entry in order: the rate rules' as decided, the concurrency rules' from `lease` (marked when shadow). */
function mergeDecisions(entries: readonly RuleKey[], rated: readonly Decision[], lease: (entry: RuleKey) => Decision): Decision[] {
  const decisions: Decision[] = new Array(entries.length);
  for (let i = 0, r = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry.rule.algorithm !== 'concurrency') {
      decisions[i] = rated[r++];
      continue;
    }
    const decision = lease(entry);
    decisions[i] = entry.shadow ? asShadow(decision) : decision;
  }
  return decisions;
}

/** `acquire`'s answer in the one `Decision` shape (as `leaseDecision` of stores/lease.decisions.ts gives it). */
function leaseDecision(result: LeaseResult): Decision {
  const { acquired, limit, remaining, retryAfterMs, degraded } = result;
  return { allowed: acquired, limit, remaining, resetAfterMs: retryAfterMs, retryAfterMs, ...(degraded ? { degraded } : {}) };
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
