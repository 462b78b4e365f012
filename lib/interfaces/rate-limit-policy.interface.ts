import type { RateLimitKeyFunction } from './rate-limit-options.interface.js';
import type { RateLimitRule } from './rule.interface.js';

/** A parsed `key` option. */
export type KeySpec =
  | { readonly kind: 'ip' | 'user'; readonly label: string }
  | { readonly kind: 'header' | 'param' | 'query' | 'body'; readonly label: string; readonly path: readonly string[] }
  | { readonly kind: 'function'; readonly label: string; readonly resolve: RateLimitKeyFunction };

/** A validated rule together with how the guard applies it. */
export interface RateLimitPolicy {
  readonly rule: RateLimitRule;
  readonly key: KeySpec;
  readonly cost: number;
  readonly shared: boolean;
  readonly keyRequired: boolean;
}
