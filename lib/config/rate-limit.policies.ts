import { checkDefaultNames, compileRules, defaultNameField, type CompiledRules } from './policy.compiler.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitMode, RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';

/**
 * The rules in force. The guard and the service read them on every request, so a rule replaced at run time
 * (from ConfigService) applies to the next request; `version` tells caches that something changed.
 */
export class RateLimitPolicies {
  private current: CompiledRules;
  private fromCode: RateLimitRulesConfig;
  private revision = 0;
  private required: ReadonlySet<string> = new Set();

  constructor(fromCode: RateLimitRulesConfig, fromConfig?: RateLimitRulesConfig, configPath = '') {
    this.fromCode = fromCode;
    this.current = RateLimitPolicies.merge(fromCode, fromConfig, configPath);
  }

  /** Bumped on every replacement. */
  get version(): number {
    return this.revision;
  }

  /** The mode of rules that set none: config's `mode`, else the module option's, else `'enforce'`. */
  get mode(): RateLimitMode {
    return this.current.mode ?? 'enforce';
  }

  /** Whether a policy is in shadow mode now: its own mode, else the module's. */
  isShadow(policy: Pick<RateLimitPolicy, 'mode'>): boolean {
    return (policy.mode ?? this.current.mode) === 'shadow';
  }

  /** The rules every route gets, in order (`defaultRule`: one rule named `'default'`, or a list of named rules). */
  get defaults(): readonly RateLimitPolicy[] {
    return this.current.defaults;
  }

  /** The named rule or default rule of this name, or undefined. `'default'` names the single default rule. */
  get(name: string): RateLimitPolicy | undefined {
    return this.current.named.get(name) ?? this.current.defaults.find((policy) => policy.name === name);
  }

  /** The names `get` knows: the named rules, then the default rules. */
  names(): string[] {
    return [...this.current.named.keys(), ...this.current.defaults.map((policy) => policy.name)];
  }

  /** Names that decorators refer to: a config reload that drops one of them is refused. */
  require(names: Iterable<string>): void {
    this.required = new Set(names);
    this.checkRequired(this.current, 'rules');
  }

  /**
   * Replaces the rules read from configuration; validation errors throw (naming the field) and leave the
   * rules in force untouched.
   */
  replaceFromConfig(fromConfig: RateLimitRulesConfig | undefined, configPath: string): void {
    const next = RateLimitPolicies.merge(this.fromCode, fromConfig, configPath);
    this.checkRequired(next, `${configPath}.rules`);
    this.current = next;
    this.revision++;
  }

  private checkRequired(rules: CompiledRules, path: string): void {
    for (const name of this.required) {
      if (!rules.named.has(name) && !rules.defaults.some((policy) => policy.name === name)) {
        throw new RateLimitConfigError(`${path}.${name}`, undefined, 'a rule: @RateLimit decorators refer to it');
      }
    }
  }

  /** Config wins over code, rule by rule; `defaultRule` in config replaces every default rule of the code. */
  private static merge(fromCode: RateLimitRulesConfig, fromConfig: RateLimitRulesConfig | undefined, configPath: string): CompiledRules {
    const code = compileRules(fromCode);
    if (!fromConfig) return code;
    const config = compileRules(fromConfig, configPath);
    const named = new Map([...code.named, ...config.named]);
    const [defaults, defaultRule, path] = config.defaultGiven
      ? [config.defaults, fromConfig.defaultRule, `${configPath}.defaultRule`]
      : [code.defaults, fromCode.defaultRule, 'defaultRule'];
    // Each side was checked alone; a default rule of one side may still share its name with a rule of the other.
    checkDefaultNames(defaults, named, defaultNameField(defaultRule, path));
    const mode = config.mode ?? code.mode;
    return { defaults, defaultGiven: code.defaultGiven || config.defaultGiven, named, ...(mode ? { mode } : {}) };
  }
}
