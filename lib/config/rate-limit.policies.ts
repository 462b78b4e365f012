import { compileRules, type CompiledRules } from './policy.compiler.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';

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
    this.current = RateLimitPolicies.merge(compileRules(fromCode), fromConfig && compileRules(fromConfig, configPath));
  }

  /** Bumped on every replacement. */
  get version(): number {
    return this.revision;
  }

  get defaultPolicy(): RateLimitPolicy | undefined {
    return this.current.defaultPolicy;
  }

  /** The named rule, or undefined. `'default'` names the default rule. */
  get(name: string): RateLimitPolicy | undefined {
    return this.current.named.get(name) ?? (name === 'default' ? this.current.defaultPolicy : undefined);
  }

  names(): string[] {
    return [...this.current.named.keys()];
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
    const next = RateLimitPolicies.merge(compileRules(this.fromCode), fromConfig && compileRules(fromConfig, configPath));
    this.checkRequired(next, `${configPath}.rules`);
    this.current = next;
    this.revision++;
  }

  private checkRequired(rules: CompiledRules, path: string): void {
    for (const name of this.required) {
      if (!rules.named.has(name) && !(name === 'default' && rules.defaultPolicy)) {
        throw new RateLimitConfigError(`${path}.${name}`, undefined, 'a rule: @RateLimit decorators refer to it');
      }
    }
  }

  /** Config wins over code, rule by rule. */
  private static merge(code: CompiledRules, config?: CompiledRules): CompiledRules {
    if (!config) return code;
    return {
      defaultPolicy: config.defaultGiven ? config.defaultPolicy : code.defaultPolicy,
      defaultGiven: code.defaultGiven || config.defaultGiven,
      named: new Map([...code.named, ...config.named]),
    };
  }
}
