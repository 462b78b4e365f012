import type { ExecutionContext } from '@nestjs/common';
import type { MultiDecision } from '../interfaces/decision.interface.js';
import type { Lease } from '../interfaces/lease-store.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import type { RateLimitService } from '../rate-limit.service.js';

/** Releases waiting for RateLimitInterceptor, by the handler call's arguments (one array per call, shared by its guards and interceptors). */
const pending = new WeakMap<object, () => void>();

/** Whether a request's rules include a concurrency rule, whose leases the guard must hold for the request. */
export function hasLeaseRules(entries: readonly RuleKey[]): boolean {
  for (const entry of entries) if (entry.rule.algorithm === 'concurrency') return true;
  return false;
}

/**
 * Decides the request's rules, taking a lease for each concurrency rule (see `RateLimitService.decideWithLeases`),
 * and arranges the release of the leases of an admitted request: over HTTP (and GraphQL over HTTP) when the
 * response finishes or its connection closes (an aborted request, a handler that throws, another guard that
 * refuses all end there); otherwise (WebSocket messages, other transports) when the handler completes or fails,
 * through RateLimitInterceptor, with the WebSocket client's disconnection as the backstop.
 */
export async function decideHoldingLeases(service: RateLimitService, entries: readonly RuleKey[], rulesVersion: number, context: ExecutionContext, response: unknown): Promise<MultiDecision> {
  const { leases, ...result } = await service.decideWithLeases(entries, rulesVersion);
  if (leases.length > 0) holdUntilDone(leases, context, response);
  return result;
}

/** The release of the leases the guard took for this handler call (not over HTTP), handed over once. */
export function takePendingRelease(context: ExecutionContext): (() => void) | undefined {
  const args = context.getArgs();
  const release = pending.get(args);
  if (release) pending.delete(args);
  return release;
}

function releaseAll(leases: readonly Lease[]): void {
  for (const lease of leases) void lease.release();
}

type Emitter = { once(event: string, listener: () => void): unknown; off?(event: string, listener: () => void): unknown };
type NodeResponse = Emitter & { writableFinished?: boolean; destroyed?: boolean };

function holdUntilDone(leases: Lease[], context: ExecutionContext, response: unknown): void {
  const raw = nodeResponse(response);
  if (raw) {
    // The client went away while the rules were decided: nobody is served.
    if (raw.writableFinished || raw.destroyed) return releaseAll(leases);
    const release = () => releaseAll(leases);
    raw.once('finish', release);
    raw.once('close', release);
    return;
  }
  let detach = () => {};
  if (context.getType<string>() === 'ws') {
    const client = context.switchToWs().getClient<Partial<Emitter> | undefined>();
    if (typeof client?.once === 'function') {
      // ws emits 'close', socket.io 'disconnect'; taken off once released, or a long-lived socket would pile listeners up.
      const onGone = () => releaseAll(leases);
      for (const event of CLIENT_GONE) client.once(event, onGone);
      detach = () => {
        for (const event of CLIENT_GONE) client.off?.(event, onGone);
      };
    }
  }
  pending.set(context.getArgs(), () => {
    detach();
    releaseAll(leases);
  });
}

const CLIENT_GONE = ['close', 'disconnect'];

/** Express's response, or the Node response behind a Fastify reply (`reply.raw`). */
function nodeResponse(response: unknown): NodeResponse | undefined {
  const candidate = (response as { raw?: unknown } | undefined)?.raw ?? response;
  return typeof (candidate as NodeResponse | undefined)?.once === 'function' && 'writableFinished' in (candidate as object) ? (candidate as NodeResponse) : undefined;
}
