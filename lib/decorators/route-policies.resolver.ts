import { compileRoutePolicy, overridePolicy } from '../config/policy.compiler.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { RateLimitPolicies } from '../config/rate-limit.policies.js';
import type { RateLimitKey, RateLimitPolicyOptions } from '../interfaces/rate-limit-options.interface.js';
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
 * a later rule replaces an earlier one of the same name, keeping what it does not set of who applies to it
 * (`inheritedOptions`). Skips remove rules, except that a named skip (on the class or the handler) does not remove
 * what the handler itself declares; only a handler-level skip-all does.
 */
export function resolveRoutePolicies(policies: RateLimitPolicies, meta: RouteMetadata): RateLimitPolicy[] {
  if (meta.handlerSkip === true) return [];
  const byName = new Map<string, RateLimitPolicy>();
  for (const policy of policies.defaults) byName.set(policy.name, policy);
  // What a rule written in place overrides: the rule of its name the route has so far, else the module's named rule.
  const overridden = (name: string) => byName.get(name) ?? policies.get(name);
  for (const policy of compileEntries(policies, meta.classEntries, meta.route, overridden)) byName.set(policy.name, policy);
  const handlerPolicies = compileEntries(policies, meta.handlerEntries, meta.route, overridden);
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

function compileEntries(
  policies: RateLimitPolicies,
  entries: readonly RateLimitEntry[] | undefined,
  route: string,
  overridden: (name: string) => RateLimitPolicy | undefined,
): RateLimitPolicy[] {
  if (!entries) return [];
  let unnamed = 0;
  return entries.map((entry) => {
    const where = `@RateLimit on ${route}`;
    if (entry.kind === 'inline') {
      const name = entry.name ?? (unnamed++ === 0 ? 'default' : `default-${unnamed}`);
      const base = overridden(name);
      return compileRoutePolicy(base ? { ...inheritedOptions(base, entry.options), ...entry.options } : entry.options, name, where);
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

/**
 * What a rule written in place (`@RateLimit({ name: 'default', limit, window })`, or unnamed) keeps of the rule of
 * its name it overrides, as throttler's `@Throttle` keeps its throttler's options: who the rule applies to and how it
 * is counted per client, where it does not say itself: `skipIf`, `ignoreUserAgents` (`[]` drops them), `key` (with
 * its `keyRequired`, unless the override names a key of its own), `mode` and `refusedEvents`. Not kept: the values it decides with
 * (limit, window, algorithm and its parameters, lockout, failure policy), which the override gives as a whole,
 * validated as one rule; `cost`, counted in the units of the override's limit; and `shared`, since a shared rule has
 * one definition for every route (route-rules.checker.ts), which an override of its values could not keep.
 */
function inheritedOptions(base: RateLimitPolicy, options: RateLimitPolicyOptions): Partial<RateLimitPolicyOptions> {
  const inherited: Partial<RateLimitPolicyOptions> = {};
  if (options.skipIf === undefined && base.skipIf) inherited.skipIf = base.skipIf;
  if (options.ignoreUserAgents === undefined && base.ignoreUserAgents) inherited.ignoreUserAgents = [...base.ignoreUserAgents];
  if (options.key === undefined) {
    // A key's label is the option it was parsed from (`header:x-api-key`), lower-cased as parsing would.
    inherited.key = base.key.kind === 'function' ? base.key.resolve : (base.key.label as RateLimitKey);
    if (options.keyRequired === undefined) inherited.keyRequired = base.keyRequired;
  }
  if (options.mode === undefined && base.mode) inherited.mode = base.mode;
  if (options.refusedEvents === undefined && base.refusedEvents) inherited.refusedEvents = base.refusedEvents;
  return inherited;
}
