import type { ExecutionContext } from '@nestjs/common';
import type { MultiDecision } from '../interfaces/decision.interface.js';
import type { Lease } from '../interfaces/lease-store.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import type { RequestLeaseDecider } from '../interfaces/lease-store.interface.js';
import { decideDeferringLeases, type RefuseCall } from './handler-lease.binder.js';
import { releaseAll } from '../stores/leases/lease.holder.js';

/** Whether a request's rules include a concurrency rule, whose leases the guard must hold for the request. */
export function hasLeaseRules(entries: readonly RuleKey[]): boolean {
  for (const entry of entries) if (entry.rule.algorithm === 'concurrency') return true;
  return false;
}

/**
 * Decides the request's rules and arranges the leases of its concurrency rules. Over HTTP (and GraphQL over
 * HTTP) the guard takes them (see `RateLimitService.decideWithLeases`), and the response's end releases those of
 * an admitted request when it finishes or its connection closes (an aborted request, a handler that throws,
 * another guard that refuses all end there). Otherwise (WebSocket messages, other transports), where nothing
 * would release them if another guard refused the call, RateLimitInterceptor takes them once every guard
 * admitted, and releases them when the handler ends (http/handler-lease.binder.ts); `refuse` then refuses the
 * call if a lease is not free, and `beforeDeferring` is called first, to refuse the call (by throwing) when that
 * interceptor will not run for it: nothing would hold its leases.
 */
export async function decideHoldingLeases(
  service: RequestLeaseDecider,
  entries: readonly RuleKey[],
  rulesVersion: number,
  context: ExecutionContext,
  response: unknown,
  refuse: RefuseCall,
  beforeDeferring: () => void,
): Promise<MultiDecision> {
  const raw = nodeResponse(response);
  if (!raw) {
    beforeDeferring();
    return decideDeferringLeases(service, entries, rulesVersion, context, refuse);
  }
  const { leases, ...result } = await service.decideWithLeases(entries, rulesVersion);
  if (leases.length > 0) holdUntilResponseEnds(leases, raw);
  return result;
}

type NodeResponse = { once(event: string, listener: () => void): unknown; writableFinished?: boolean; destroyed?: boolean };

function holdUntilResponseEnds(leases: Lease[], raw: NodeResponse): void {
  // The client went away while the rules were decided: nobody is served.
  if (raw.writableFinished || raw.destroyed) return releaseAll(leases);
  const release = () => releaseAll(leases);
  raw.once('finish', release);
  raw.once('close', release);
}

/** Express's response, or the Node response behind a Fastify reply (`reply.raw`). */
function nodeResponse(response: unknown): NodeResponse | undefined {
  const candidate = (response as { raw?: unknown } | undefined)?.raw ?? response;
  return typeof (candidate as NodeResponse | undefined)?.once === 'function' && 'writableFinished' in (candidate as object) ? (candidate as NodeResponse) : undefined;
}
