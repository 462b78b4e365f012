import type { ExecutionContext } from '@nestjs/common';
import { parseDuration, parseInteger } from '../rules/duration.parser.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { RateLimitPolicyOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';

/** The fields that may be functions of the request (throttler's `Resolvable`). */
export const RESOLVABLE_FIELDS = ['limit', 'window', 'blockMs', 'cost'] as const;
type ResolvableField = (typeof RESOLVABLE_FIELDS)[number];

/**
 * Distinct resolved (limit, window, blockMs, cost) tuples whose validated policy one request-dependent rule keeps.
 * Plans and tiers are few, so a steady tier is validated once; a resolver returning ever-new values (a bug, or
 * per-client numbers) costs one validation per request, never unbounded memory.
 */
export const RESOLVED_POLICIES_KEPT = 64;

/** Whether a rule has fields that are functions of the request. */
export function resolvedFields(options: RateLimitPolicyOptions): ResolvableField[] {
  return RESOLVABLE_FIELDS.filter((field) => typeof options[field] === 'function');
}

/** What the static compiler gives a request-dependent rule: the validated guard fields (all but `cost`). */
export type StaticGuardFields = Pick<RateLimitPolicy, 'key' | 'shared' | 'keyRequired' | 'skipIf' | 'ignoreUserAgents' | 'mode' | 'refusedEvents'>;

/** Thrown (and logged by the guard) when a function of a rule throws on a request. */
export class RateLimitResolveError extends Error {
  constructor(
    /** Dotted path of the field whose function threw, e.g. `rules.tiered.limit`. */
    readonly field: string,
    cause: unknown,
  ) {
    super(`Rate limit option "${field}": its function threw ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`, { cause });
    this.name = 'RateLimitResolveError';
  }
}

/**
 * A rule whose `fields` are functions of the request. At start-up, what can be checked without a request is
 * checked (the other fields, and a static limit, window, blockMs or cost on its own); per request, `resolve`
 * calls the functions and validates the values with `compile`, exactly as a static rule is validated.
 */
export function compileResolvablePolicy(
  options: RateLimitPolicyOptions,
  name: string,
  path: string,
  fields: readonly ResolvableField[],
  guard: StaticGuardFields,
  compile: (options: RateLimitPolicyOptions) => RateLimitPolicy,
): RateLimitPolicy {
  checkWithoutRequest(options, path, fields, compile);
  const kept = new Map<string, RateLimitPolicy>();
  const resolve = async (context: ExecutionContext): Promise<RateLimitPolicy> => {
    const values = new Array<unknown>(fields.length);
    for (let i = 0; i < fields.length; i++) {
      try {
        values[i] = await (options[fields[i]] as (context: ExecutionContext) => unknown)(context);
      } catch (error) {
        throw new RateLimitResolveError(`${path}.${fields[i]}`, error);
      }
    }
    // Typed, so that 5 and "5", or undefined and null (a default and an error), never share an entry.
    const signature = values.map((v) => `${typeof v}:${String(v)}`).join('\n');
    let policy = kept.get(signature);
    if (policy) return policy;
    const resolved: Record<string, unknown> = { ...options };
    fields.forEach((field, i) => (resolved[field] = values[i]));
    policy = compile(resolved as unknown as RateLimitPolicyOptions);
    if (kept.size >= RESOLVED_POLICIES_KEPT) kept.delete(kept.keys().next().value as string);
    kept.set(signature, policy);
    return policy;
  };
  const unresolved = () =>
    new RateLimitConfigError(path, `rule "${name}" computes ${fields.join(', ')} per request`, 'a rule with values here: only RateLimitGuard resolves functions of the request, RateLimitService has none');
  return Object.freeze({
    name,
    get rule(): never {
      throw unresolved();
    },
    get cost(): never {
      throw unresolved();
    },
    ...guard,
    resolve,
  });
}

/** Placeholders that every algorithm accepts, standing in for the functions at start-up. */
const PLACEHOLDERS: Record<ResolvableField, unknown> = { limit: 1, window: 60_000, blockMs: 0, cost: 1 };
/** Fields whose validity depends on the others (segments divide the window, cost within the limit, ...). */
const COMBINED = new Set(['limit', 'window', 'blockMs', 'cost', 'segments', 'refill', 'burst']);

function checkWithoutRequest(options: RateLimitPolicyOptions, path: string, fields: readonly ResolvableField[], compile: (options: RateLimitPolicyOptions) => RateLimitPolicy): void {
  if (!fields.includes('limit')) parseInteger(options.limit, `${path}.limit`, 1);
  // A concurrency rule has no window (define-rule.ts says so, naming the field, if one is given).
  if (!fields.includes('window') && options.algorithm !== 'concurrency') parseDuration(options.window as string | number, `${path}.window`);
  if (!fields.includes('blockMs')) parseDuration((options.blockMs as string | number | undefined) ?? 0, `${path}.blockMs`, { allowZero: true });
  if (!fields.includes('cost') && options.cost !== undefined) parseInteger(options.cost, `${path}.cost`, 1);
  const probe: Record<string, unknown> = { ...options };
  for (const field of fields) probe[field] = PLACEHOLDERS[field];
  try {
    compile(probe as unknown as RateLimitPolicyOptions);
  } catch (error) {
    // A combination the placeholders fail may hold for the values of a request: those are checked per request.
    const field = error instanceof RateLimitConfigError ? error.field.slice(path.length + 1) : '';
    if (!COMBINED.has(field)) throw error;
  }
}
