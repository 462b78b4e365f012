import type { ExecutionContext } from '@nestjs/common';
import type { RateLimitKeyFunction, RateLimitMode, RateLimitSkipIf, RefusedEvents } from './rate-limit-options.interface.js';
import type { RateLimitRule } from './rule.interface.js';

/** A parsed `key` option. */
export type KeySpec =
  | { readonly kind: 'ip' | 'user'; readonly label: string }
  | { readonly kind: 'header' | 'param' | 'query' | 'body'; readonly label: string; readonly path: readonly string[] }
  | { readonly kind: 'function'; readonly label: string; readonly resolve: RateLimitKeyFunction };

/** A validated rule together with how the guard applies it. */
export interface RateLimitPolicy {
  /** The rule's name (also `rule.name`, which a request-dependent policy cannot give before it is resolved). */
  readonly name: string;
  /**
   * The validated rule. On a request-dependent policy (`resolve` set) reading it throws a RateLimitConfigError
   * naming the rule: its limits exist only per request.
   */
  readonly rule: RateLimitRule;
  readonly key: KeySpec;
  /** Units each request takes; throws like `rule` on a request-dependent policy. */
  readonly cost: number;
  readonly shared: boolean;
  readonly keyRequired: boolean;
  /** The rule is neither charged nor reported for a request this returns true for. */
  readonly skipIf?: RateLimitSkipIf;
  /** The rule is neither charged nor reported for a request whose User-Agent matches one of these. */
  readonly ignoreUserAgents?: readonly RegExp[];
  /** The rule's own mode; absent: the module's (`RateLimitPolicies.mode`), read per request so a switch applies live. */
  readonly mode?: RateLimitMode;
  /** What becomes of an `@EventPattern` message the rule refuses; absent: `'drop'`. */
  readonly refusedEvents?: RefusedEvents;
  /**
   * Set when `limit`, `window`, `cost` or `blockMs` are functions of the request: resolves them and returns the
   * policy with values, validated as a static one is; rejects (naming the rule, the field and the value) when a
   * function throws or returns an invalid value.
   */
  readonly resolve?: (context: ExecutionContext) => Promise<RateLimitPolicy>;
}
