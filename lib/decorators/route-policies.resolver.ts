import { compileRoutePolicy, overridePolicy } from '../config/policy.compiler.js';
import { RateLimitConfigError } from '../config/rate-limit-config.error.js';
import type { RateLimitPolicies } from '../config/rate-limit.policies.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitEntry } from './rate-limit.decorator.js';
import type { SkipRateLimitMetadata } from './skip-rate-limit.decorator.js';

/** What the decorators say about one route. */
export interface RouteMetadata {
  readonly route: string;
  readonly classEntries?: readonly RateLimitEntry[];
  readonly handlerEntries?: readonly RateLimitEntry[];
  readonly classSkip?: SkipRateLimitMetadata;
  readonly handlerSkip?: SkipRateLimitMetadata;
}

/**
 * The rules that apply to a route, in order: the module's default rules, then the class's, then the handler's;
 * a later rule replaces an earlier one of the same name. Skips remove rules, except that a named skip (on the
 * class or the handler) does not remove what the handler itself declares; only a handler-level skip-all does.
 */
export function resolveRoutePolicies(policies: RateLimitPolicies, meta: RouteMetadata): RateLimitPolicy[] {
  if (meta.handlerSkip === true) return [];
  const byName = new Map<string, RateLimitPolicy>();
  for (const policy of policies.defaults) byName.set(policy.name, policy);
  for (const policy of compileEntries(policies, meta.classEntries, meta.route)) byName.set(policy.name, policy);
  const handlerPolicies = compileEntries(policies, meta.handlerEntries, meta.route);
  const own = new Set(handlerPolicies.map((p) => p.name));
  for (const policy of handlerPolicies) byName.set(policy.name, policy);

  for (const name of byName.keys()) {
    const classSkips = meta.classSkip === true || (meta.classSkip?.includes(name) ?? false);
    const handlerSkips = Array.isArray(meta.handlerSkip) && meta.handlerSkip.includes(name);
    // A named skip drops inherited rules (module default, class rules), never a rule the handler declares itself:
    // `@SkipRateLimit('default')` next to the handler's own unnamed (= 'default') rule keeps that rule.
    if ((handlerSkips || classSkips) && !own.has(name)) byName.delete(name);
  }
  return [...byName.values()];
}

function compileEntries(policies: RateLimitPolicies, entries: readonly RateLimitEntry[] | undefined, route: string): RateLimitPolicy[] {
  if (!entries) return [];
  let unnamed = 0;
  return entries.map((entry) => {
    const where = `@RateLimit on ${route}`;
    if (entry.kind === 'inline') {
      const name = entry.name ?? (unnamed++ === 0 ? 'default' : `default-${unnamed}`);
      return compileRoutePolicy(entry.options, name, where);
    }
    const base = policies.get(entry.name);
    if (!base) {
      const known = policies.names();
      throw new RateLimitConfigError(`${where}`, entry.name, `the name of a configured rule (${known.length ? known.join(', ') : 'none are configured'})`);
    }
    if (Object.keys(entry.options).length === 0) return base;
    return overridePolicy(base, entry.options, where);
  });
}
