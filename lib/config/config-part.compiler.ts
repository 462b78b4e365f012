import { compileDefaults, compileRoutePolicy, defaultNameField, parseMode } from './policy.compiler.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { RateLimitMode, RateLimitPolicyOptions, RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';

/**
 * One part of the rules' config namespace, compiled on its own so that a bad value in one part leaves the others
 * free to change: its `mode`, its `defaultRule` (a single rule or the whole list), or one rule of `rules`.
 */
export type ConfigPart =
  | { readonly kind: 'mode'; readonly mode: RateLimitMode }
  | { readonly kind: 'defaults'; readonly defaults: readonly RateLimitPolicy[]; readonly nameField: (index: number) => string }
  | { readonly kind: 'rule'; readonly policy: RateLimitPolicy };

/** A part's key: `mode`, `defaultRule`, `rules.<name>`; `''` (the namespace) and `rules` when they are not objects. */
export const RULE_PART = 'rules.';
export const DEFAULT_PART = 'defaultRule';

/**
 * The parts of a namespace, keyed, in the order `compileRules` checks them (so that the first error at start-up
 * stays the one it was): what is not a field of the namespace first, then `mode`, `rules`, `defaultRule`. A
 * value that is undefined is no part (`set('rateLimit.rules.search', undefined)` drops the rule).
 */
export function configParts(config: RateLimitRulesConfig | undefined): Map<string, unknown> {
  const parts = new Map<string, unknown>();
  if (config === undefined || config === null) return parts;
  if (!isRecord(config)) return parts.set('', config);
  const { mode, rules, defaultRule, ...others } = config as Record<string, unknown>;
  for (const [field, value] of Object.entries(others)) if (value !== undefined) parts.set(field, value);
  if (mode !== undefined) parts.set('mode', mode);
  if (rules !== undefined && !isRecord(rules)) parts.set('rules', rules);
  else if (rules) for (const [name, options] of Object.entries(rules)) if (options !== undefined) parts.set(`${RULE_PART}${name}`, options);
  if (defaultRule !== undefined) parts.set(DEFAULT_PART, defaultRule);
  return parts;
}

/** Where a part is written, for messages: `rateLimit.rules.search`. */
export function partPath(key: string, configPath: string): string {
  return key === '' ? configPath || 'options' : configPath ? `${configPath}.${key}` : key;
}

/** Compiles one part, every error naming its field under `configPath`; the value is copied first (see `detach`). */
export function compileConfigPart(key: string, value: unknown, configPath: string): ConfigPart {
  const path = partPath(key, configPath);
  if (key === '') throw new RateLimitConfigError(path, value, 'an object with "defaultRule" and/or "rules"');
  if (key === 'mode') return { kind: 'mode', mode: parseMode(value, path) };
  if (key === DEFAULT_PART) {
    const defaultRule = detach(value) as RateLimitRulesConfig['defaultRule'];
    return { kind: 'defaults', defaults: compileDefaults(defaultRule, path), nameField: defaultNameField(defaultRule, path) };
  }
  if (key === 'rules') throw new RateLimitConfigError(path, value, 'an object of named rules, e.g. { login: { limit: 5, window: "1m" } }');
  if (key.startsWith(RULE_PART)) {
    return { kind: 'rule', policy: compileRoutePolicy(detach(value) as RateLimitPolicyOptions, key.slice(RULE_PART.length), path) };
  }
  throw new RateLimitConfigError(path, value, 'only "defaultRule", "rules" and "mode" here');
}

/**
 * ConfigService's `set()` changes the config object in place, nested objects included: a rule compiled from the
 * object itself would see a later bad value through the options it keeps (for overrides), while it stays in force.
 */
function detach(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(detach);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([field, v]) => [field, detach(v)]));
  return value;
}

/** An object of fields, as `compileRules` takes one (a class instance too). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A value as text, to tell whether it changed: config objects are changed in place by `set()`, so a copy is
 * compared. A RegExp (`ignoreUserAgents`) is written as its source, which JSON alone would write as `{}`.
 */
export function snapshot(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'function' ? `[function ${(v as () => void).name}]` : v instanceof RegExp ? String(v) : v)) ?? '';
}
