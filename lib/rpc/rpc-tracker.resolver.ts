import type { ExecutionContext } from '@nestjs/common';
import { groupIp } from '../http/client-ip.js';
import { resolveRequestKey } from '../http/request-key.resolver.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { RpcRequest } from './rpc-context.reader.js';

/** The rules a message is decided by, each with its tracker (same order), or the first rule that cannot tell its sender. */
export type RpcTrackers = { readonly policies: RateLimitPolicy[]; readonly trackers: string[] } | { readonly untracked: RateLimitPolicy };

/**
 * The tracker of each rule for a message, read as on HTTP (`body:`, `header:`, `user`, functions; `ip` is the
 * peer address where the transport has one, or the module's `getTracker`). A message a rule cannot tell the sender
 * of never shares one bucket with others. A module default rule (`moduleDefaults`: the names of the route's rules
 * that are the module's default ones, not redeclared by `@RateLimit`) does not apply to it, so that an app that
 * added a microservice beside its HTTP routes does not see every message refused; a rule the route declares itself,
 * or one with `keyRequired`, refuses it (`untracked`). Unlike HTTP, a keyed rule never falls back to the peer
 * address: a message's peer is usually a service relaying for many clients.
 */
export async function resolveRpcTrackers(
  policies: readonly RateLimitPolicy[],
  request: RpcRequest,
  context: ExecutionContext,
  moduleDefaults: ReadonlySet<string>,
  settings: Pick<RateLimitSettings, 'getTracker' | 'ipv6Subnet'>,
): Promise<RpcTrackers> {
  const applied: RateLimitPolicy[] = [];
  const trackers: string[] = [];
  let ip: string | undefined | null;
  for (const policy of policies) {
    let tracker: string | undefined;
    if (policy.key.kind === 'ip') {
      if (ip === undefined) ip = (await peerTracker(request, context, settings)) ?? null;
      if (ip !== null) tracker = `ip:${ip}`;
    } else {
      const value = await resolveRequestKey(policy.key, request, context);
      if (value !== undefined) tracker = `${policy.key.label}:${value}`;
    }
    if (tracker !== undefined) {
      applied.push(policy);
      trackers.push(tracker);
    } else if (policy.keyRequired || !moduleDefaults.has(policy.name)) {
      return { untracked: policy };
    }
  }
  return { policies: applied, trackers };
}

/** The module's `getTracker` when given (an empty answer: none), else the peer address, IPv6 per `ipv6Subnet`. */
async function peerTracker(request: RpcRequest, context: ExecutionContext, settings: Pick<RateLimitSettings, 'getTracker' | 'ipv6Subnet'>): Promise<string | undefined> {
  if (settings.getTracker) {
    const own: unknown = await settings.getTracker(request as RpcRequest & Record<string, unknown>, context);
    return typeof own === 'string' && own !== '' ? own : undefined;
  }
  return request.ip ? groupIp(request.ip, settings.ipv6Subnet) : undefined;
}
