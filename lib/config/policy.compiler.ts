import { defineRule, maxCost } from './define-rule.js';
import { parseInteger } from './duration.parser.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';
import type { RateLimitKey, RateLimitPolicyOptions, RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';
import type { KeySpec, RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitRuleOptions } from '../interfaces/rule.interface.js';

const GUARD_FIELDS = ['key', 'cost', 'shared', 'keyRequired'] as const;
type GuardFields = Pick<RateLimitPolicyOptions, (typeof GUARD_FIELDS)[number]>;
const KEY_PATTERN = /^(header|param|query|body):([^\s]+)$/;

/** The compiled rules of the module: the default one (if any) and the named ones. */
export interface CompiledRules {
  readonly defaultPolicy?: RateLimitPolicy;
  /** Whether `defaultRule` was given at all (`false` turns off a default rule set elsewhere). */
  readonly defaultGiven: boolean;
  readonly named: ReadonlyMap<string, RateLimitPolicy>;
}

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

/** Validates the guard's fields of a rule; every error names `path.<field>` and the value. */
export function compileGuardFields(guard: GuardFields, path: string, base?: RateLimitPolicy): Omit<RateLimitPolicy, 'rule'> {
  for (const field of ['shared', 'keyRequired'] as const) {
    if (guard[field] !== undefined && typeof guard[field] !== 'boolean') {
      throw new RateLimitConfigError(`${path}.${field}`, guard[field], 'true or false');
    }
  }
  return {
    key: guard.key === undefined ? (base?.key ?? IP_KEY) : parseKey(guard.key, `${path}.key`),
    cost: guard.cost === undefined ? (base?.cost ?? 1) : parseInteger(guard.cost, `${path}.cost`, 1),
    shared: guard.shared ?? base?.shared ?? false,
    keyRequired: guard.keyRequired ?? base?.keyRequired ?? false,
  };
}

/** Validates a rule with its guard fields, as written in options, config or a decorator. */
export function compilePolicy(options: RateLimitPolicyOptions, name: string, path: string): RateLimitPolicy {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RateLimitConfigError(path, options, 'an object with at least "limit" and "window"');
  }
  const { rule, guard } = splitPolicyOptions(options);
  return withCostChecked({ rule: defineRule(rule, name, path), ...compileGuardFields(guard, path) }, path);
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
    if (field !== 'defaultRule' && field !== 'rules') {
      throw new RateLimitConfigError(at(field), (config as Record<string, unknown>)[field], 'only "defaultRule" and "rules" here');
    }
  }
  const named = new Map<string, RateLimitPolicy>();
  if (config.rules !== undefined) {
    if (config.rules === null || typeof config.rules !== 'object' || Array.isArray(config.rules)) {
      throw new RateLimitConfigError(at('rules'), config.rules, 'an object of named rules, e.g. { login: { limit: 5, window: "1m" } }');
    }
    for (const [name, options] of Object.entries(config.rules)) named.set(name, compilePolicy(options, name, at(`rules.${name}`)));
  }
  const defaultRule = config.defaultRule;
  const defaultPolicy = defaultRule === undefined || defaultRule === false ? undefined : compilePolicy(defaultRule, 'default', at('defaultRule'));
  return { defaultPolicy, defaultGiven: defaultRule !== undefined, named };
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
