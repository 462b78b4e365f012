import { defineRule, maxCost, RULE_NAME } from '../rules/define-rule.js';
import { parseInteger } from '../rules/duration.parser.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import { compileResolvablePolicy, resolvedFields } from './resolvable-policy.compiler.js';
import type { RateLimitKey, RateLimitMode, RateLimitNamedPolicyOptions, RateLimitPolicyOptions, RateLimitRulesConfig, RefusedEvents } from '../interfaces/rate-limit-options.interface.js';
import type { KeySpec, RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitRuleOptions } from '../interfaces/rule.interface.js';

const GUARD_FIELDS = ['key', 'cost', 'shared', 'keyRequired', 'skipIf', 'ignoreUserAgents', 'mode', 'refusedEvents'] as const;
type GuardFields = Pick<RateLimitPolicyOptions, (typeof GUARD_FIELDS)[number]>;
const KEY_PATTERN = /^(header|param|query|body):([^\s]+)$/;

/** The compiled rules of the module: the default ones (if any) and the named ones. */
export interface CompiledRules {
  /** The rules every route gets, in order: the one `'default'` rule, or the named list `defaultRule` gives. */
  readonly defaults: readonly RateLimitPolicy[];
  /** Whether `defaultRule` was given at all (`false` turns off a default rule set elsewhere). */
  readonly defaultGiven: boolean;
  readonly named: ReadonlyMap<string, RateLimitPolicy>;
  /** The `mode` given for rules that set none, if one was. */
  readonly mode?: RateLimitMode;
}

/** The options each request-dependent or referenced policy was compiled from, to derive overrides from. */
const sources = new WeakMap<RateLimitPolicy, RateLimitPolicyOptions>();

/** Splits a policy into the engine's rule fields and the guard's fields. */
export function splitPolicyOptions(options: object): { rule: RateLimitRuleOptions; guard: GuardFields } {
  const rule: Record<string, unknown> = {};
  const guard: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(options)) {
    if (value === undefined) continue;
    ((GUARD_FIELDS as readonly string[]).includes(field) ? guard : rule)[field] = value;
  }
  return { rule: rule as unknown as RateLimitRuleOptions, guard };
}

/**
 * Validates the guard's fields of a rule; every error names `path.<field>` and the value. A `cost` that is a
 * function of the request is left to `compileRoutePolicy` (the result then carries the base's cost, or 1).
 */
export function compileGuardFields(guard: GuardFields, path: string, base?: RateLimitPolicy): Omit<RateLimitPolicy, 'rule' | 'name'> {
  for (const field of ['shared', 'keyRequired'] as const) {
    if (guard[field] !== undefined && typeof guard[field] !== 'boolean') {
      throw new RateLimitConfigError(`${path}.${field}`, guard[field], 'true or false');
    }
  }
  if (guard.skipIf !== undefined && typeof guard.skipIf !== 'function') {
    throw new RateLimitConfigError(`${path}.skipIf`, guard.skipIf, 'a function (context) => boolean | Promise<boolean>');
  }
  const skipIf = guard.skipIf ?? base?.skipIf;
  const ignoreUserAgents = guard.ignoreUserAgents === undefined ? base?.ignoreUserAgents : userAgentPatterns(guard.ignoreUserAgents, `${path}.ignoreUserAgents`);
  const cost = guard.cost === undefined || typeof guard.cost === 'function' ? (base && !base.resolve ? base.cost : 1) : parseInteger(guard.cost, `${path}.cost`, 1);
  return {
    key: guard.key === undefined ? (base?.key ?? IP_KEY) : parseKey(guard.key, `${path}.key`),
    cost,
    shared: guard.shared ?? base?.shared ?? false,
    keyRequired: guard.keyRequired ?? base?.keyRequired ?? false,
    ...(skipIf ? { skipIf } : {}),
    ...(ignoreUserAgents?.length ? { ignoreUserAgents } : {}),
    ...withMode(guard.mode === undefined ? base?.mode : parseMode(guard.mode, `${path}.mode`)),
    ...withRefusedEvents(guard.refusedEvents === undefined ? base?.refusedEvents : parseRefusedEvents(guard.refusedEvents, `${path}.refusedEvents`)),
  };
}

/** Checks a `mode` option (per rule, module-wide or in config). */
export function parseMode(value: unknown, field: string): RateLimitMode {
  if (value !== 'enforce' && value !== 'shadow') throw new RateLimitConfigError(field, value, '"enforce" or "shadow"');
  return value;
}

/** Checks a rule's `refusedEvents` option. */
function parseRefusedEvents(value: unknown, field: string): RefusedEvents {
  if (value !== 'drop' && value !== 'redeliver' && value !== 'reject') throw new RateLimitConfigError(field, value, '"drop", "redeliver" or "reject"');
  return value;
}

/** `refusedEvents` only where it is set, so that a rule without it reads as it did. */
function withRefusedEvents(refusedEvents: RefusedEvents | undefined): { refusedEvents?: RefusedEvents } {
  return refusedEvents === undefined ? {} : { refusedEvents };
}

/** A mode only where one is set: a rule without one follows the module's, read per request. */
function withMode(mode: RateLimitMode | undefined): { mode?: RateLimitMode } {
  return mode === undefined ? {} : { mode };
}

/** Checks an `ignoreUserAgents` option (per rule or module-wide): an array of RegExp. */
export function userAgentPatterns(value: unknown, field: string): readonly RegExp[] {
  if (!Array.isArray(value) || !value.every((p) => p instanceof RegExp)) {
    throw new RateLimitConfigError(field, value instanceof RegExp ? String(value) : value, 'an array of regular expressions, e.g. [/googlebot/i]');
  }
  return Object.freeze([...value]);
}

/**
 * Validates a rule with its guard fields, all of them values: `RateLimitService` compiles with it, having no
 * request to resolve functions with, so a function of the request is refused here, naming the field.
 */
export function compilePolicy(options: RateLimitPolicyOptions, name: string, path: string): RateLimitPolicy {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RateLimitConfigError(path, options, 'an object with at least "limit" and "window"');
  }
  for (const field of resolvedFields(options)) {
    throw new RateLimitConfigError(`${path}.${field}`, `a function`, 'a value: functions of the request are resolved by RateLimitGuard only (in @RateLimit, defaultRule or rules)');
  }
  const { rule, guard } = splitPolicyOptions(options);
  return withCostChecked({ name, rule: defineRule(rule as RateLimitRuleOptions, name, path), ...compileGuardFields(guard, path) }, path);
}

/**
 * Validates a rule the guard applies: with values, or with `limit`, `window`, `blockMs` or `cost` as functions
 * of the request (then resolved and validated per request, see resolvable-policy.compiler.ts).
 */
export function compileRoutePolicy(options: RateLimitPolicyOptions, name: string, path: string): RateLimitPolicy {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RateLimitConfigError(path, options, 'an object with at least "limit" and "window"');
  }
  const fields = resolvedFields(options);
  let policy: RateLimitPolicy;
  if (fields.length === 0) {
    policy = compilePolicy(options, name, path);
  } else {
    const { guard } = splitPolicyOptions(options);
    // The cost may be a function here: the resolvable policy resolves it per request.
    const { cost: _cost, ...guardFields } = compileGuardFields(guard, path);
    policy = compileResolvablePolicy(options, name, path, fields, guardFields, (resolved) => compilePolicy(resolved, name, path));
  }
  sources.set(policy, options);
  return policy;
}

/** A configured rule with guard fields overridden where a decorator refers to it (`@RateLimit({ name, key })`). */
export function overridePolicy(base: RateLimitPolicy, overrides: GuardFields, path: string): RateLimitPolicy {
  const source = sources.get(base);
  if (source && (base.resolve || resolvedFields(overrides as RateLimitPolicyOptions).length > 0)) {
    return compileRoutePolicy({ ...source, ...overrides }, base.name, path);
  }
  return withCostChecked({ name: base.name, rule: base.rule, ...compileGuardFields(overrides, path, base) }, path);
}

/** A cost the rule can never admit would refuse every request forever: refuse it where it is written. */
export function withCostChecked(policy: RateLimitPolicy, path: string): RateLimitPolicy {
  if (policy.cost > maxCost(policy.rule)) {
    throw new RateLimitConfigError(`${path}.cost`, policy.cost, `at most ${maxCost(policy.rule)}, the most rule "${policy.rule.name}" ever admits`);
  }
  return Object.freeze(policy);
}

/** Compiles `defaultRule` and `rules` as found at `path` (the options, or a config namespace). */
export function compileRules(config: RateLimitRulesConfig, path = ''): CompiledRules {
  const at = (field: string) => (path ? `${path}.${field}` : field);
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new RateLimitConfigError(path || 'options', config, 'an object with "defaultRule" and/or "rules"');
  }
  for (const field of Object.keys(config)) {
    if (field !== 'defaultRule' && field !== 'rules' && field !== 'mode') {
      throw new RateLimitConfigError(at(field), (config as Record<string, unknown>)[field], 'only "defaultRule", "rules" and "mode" here');
    }
  }
  const mode = config.mode === undefined ? undefined : parseMode(config.mode, at('mode'));
  const named = new Map<string, RateLimitPolicy>();
  if (config.rules !== undefined) {
    if (config.rules === null || typeof config.rules !== 'object' || Array.isArray(config.rules)) {
      throw new RateLimitConfigError(at('rules'), config.rules, 'an object of named rules, e.g. { login: { limit: 5, window: "1m" } }');
    }
    for (const [name, options] of Object.entries(config.rules)) named.set(name, compileRoutePolicy(options, name, at(`rules.${name}`)));
  }
  const defaults = compileDefaults(config.defaultRule, at('defaultRule'));
  checkDefaultNames(defaults, named, defaultNameField(config.defaultRule, at('defaultRule')));
  return { defaults, defaultGiven: config.defaultRule !== undefined, named, ...withMode(mode) };
}

/**
 * A default rule and a named rule of one name would make `@RateLimit('<name>')` ambiguous: refused, naming
 * the default rule's field (`fieldOf(index)`).
 */
export function checkDefaultNames(defaults: readonly RateLimitPolicy[], named: ReadonlyMap<string, RateLimitPolicy>, fieldOf: (index: number) => string): void {
  defaults.forEach((policy, i) => {
    if (named.has(policy.name)) {
      throw new RateLimitConfigError(fieldOf(i), policy.name, `a name no rule in "rules" has: @RateLimit("${policy.name}") would not tell the two apart`);
    }
  });
}

/** Compiles `defaultRule` (one rule, a list of named rules, or false), every error naming its field under `path`. */
export function compileDefaults(defaultRule: RateLimitRulesConfig['defaultRule'], path: string): RateLimitPolicy[] {
  if (defaultRule === undefined || defaultRule === false) return [];
  if (!Array.isArray(defaultRule)) return [compileRoutePolicy(defaultRule as RateLimitPolicyOptions, 'default', path)];
  const seen = new Set<string>();
  return (defaultRule as readonly RateLimitNamedPolicyOptions[]).map((entry, i) => {
    const at = `${path}[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new RateLimitConfigError(at, entry, 'a rule with a "name", e.g. { name: "short", limit: 3, window: "1s" }');
    }
    const { name, ...options } = entry;
    if (typeof name !== 'string' || !RULE_NAME.test(name)) {
      throw new RateLimitConfigError(`${at}.name`, name, 'a rule name (1-64 letters, digits, "_", "." or "-"): each rule of a list of default rules needs one');
    }
    if (seen.has(name)) throw new RateLimitConfigError(`${at}.name`, name, 'a name no other default rule has');
    seen.add(name);
    return compileRoutePolicy(options as RateLimitPolicyOptions, name, at);
  });
}

/** Where the name of the i-th default rule is written: `defaultRule[i].name` in a list, `defaultRule` for the single one. */
export function defaultNameField(defaultRule: RateLimitRulesConfig['defaultRule'], path: string): (index: number) => string {
  return Array.isArray(defaultRule) ? (i) => `${path}[${i}].name` : () => path;
}

const IP_KEY: KeySpec = Object.freeze({ kind: 'ip', label: 'ip' });
const USER_KEY: KeySpec = Object.freeze({ kind: 'user', label: 'user' });

function parseKey(key: RateLimitKey, field: string): KeySpec {
  if (typeof key === 'function') return { kind: 'function', label: 'fn', resolve: key };
  if (key === 'ip') return IP_KEY;
  if (key === 'user') return USER_KEY;
  const match = typeof key === 'string' ? KEY_PATTERN.exec(key) : null;
  if (!match) {
    throw new RateLimitConfigError(field, key, '"ip", "user", "header:<name>", "param:<name>", "query:<name>", "body:<field>" or a function');
  }
  const kind = match[1] as 'header' | 'param' | 'query' | 'body';
  const name = kind === 'header' ? match[2].toLowerCase() : match[2];
  return { kind, label: `${kind}:${name}`, path: kind === 'body' ? name.split('.') : [name] };
}
