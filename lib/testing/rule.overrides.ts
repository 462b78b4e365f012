import type { RateLimitPolicies } from '../config/rate-limit.policies.js';
import { readRulesConfig } from '../config/config.watcher.js';
import type { RateLimitModuleOptions, RateLimitPolicyOptions, RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import { RateLimitTestingError } from './rate-limit-testing.error.js';

/** Where a rule's options are read from: the module's settings (its ConfigService) and its options (the code). */
export interface RuleSources {
  readonly settings: RateLimitSettings;
  readonly options: RateLimitModuleOptions;
}

/**
 * The rules a test changed, each with the options it had before its first change, to be put back by `restore`.
 * Changes go through `RateLimitPolicies.setRule`, as the app's own run-time changes do (and so reach its ConfigService).
 */
export class RuleOverrides {
  private readonly originals = new Map<string, RateLimitPolicyOptions>();
  /** The options each changed rule has now, which the next change goes over. */
  private readonly current = new Map<string, RateLimitPolicyOptions>();

  /** Puts in force the rule `name` with `change` over the options it has now; an invalid result throws RateLimitConfigError. */
  set(policies: RateLimitPolicies, sources: RuleSources, name: string, change: Partial<RateLimitPolicyOptions>): RateLimitPolicy {
    const original = this.originals.get(name) ?? optionsOf(name, sources);
    if (!original) {
      throw new RateLimitTestingError(
        `RateLimitTesting.setRule("${name}"): no rule of that name is configured (${policies.names().join(', ') || 'none are'}). It changes the named rules of the module's options or ConfigService, and "default" for a single defaultRule; a rule given inline to @RateLimit() is changed by giving it a name.`,
      );
    }
    const next = { ...(this.current.get(name) ?? original), ...change } as RateLimitPolicyOptions;
    const policy = policies.setRule(name, next);
    if (!this.originals.has(name)) this.originals.set(name, original);
    this.current.set(name, next);
    return policy;
  }

  /** Puts every changed rule back as it was before its first change. */
  restore(policies: RateLimitPolicies): void {
    for (const [name, original] of this.originals) policies.setRule(name, original);
    this.originals.clear();
    this.current.clear();
  }
}

/** A rule's options as the module reads them: ConfigService's over the code's, rule by rule. */
function optionsOf(name: string, { settings, options }: RuleSources): RateLimitPolicyOptions | undefined {
  return ruleIn(readRulesConfig(settings), name) ?? ruleIn(options, name);
}

function ruleIn(config: RateLimitRulesConfig | undefined, name: string): RateLimitPolicyOptions | undefined {
  if (name === 'default') {
    const rule = config?.defaultRule;
    return rule && !Array.isArray(rule) ? (rule as RateLimitPolicyOptions) : undefined;
  }
  const rules = config?.rules;
  return rules !== null && typeof rules === 'object' && Object.hasOwn(rules, name) ? rules[name] : undefined;
}
