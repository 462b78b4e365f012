import { Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { RATE_LIMIT_CONFIG } from '../config/rate-limit.config.js';
import { RateLimitConfigError, RateLimitPolicies, type RateLimitPolicyOptions, type RateLimitRulesConfig } from 'nestjs-redis-rate-limit';
import { fieldError } from './field-error.js';
import type { RulePatch } from './rule-patch.pipe.js';

/** Settings that belong to one algorithm; they go when the algorithm changes, or the rule would be invalid. */
const ALGORITHM_FIELDS = ['segments', 'refill', 'burst'] as const;

export interface RuleUpdate {
  rule: string;
  settings: RateLimitPolicyOptions;
}

/**
 * Changes a rule at run time with `RateLimitPolicies.setRule`: the next request is decided by the new rule, on
 * every route and in every service call that uses it, and the rule is written back to ConfigService. An invalid
 * rule throws, naming the field, and changes nothing.
 */
@Injectable()
export class RuleUpdatesService {
  constructor(
    private readonly config: ConfigService,
    private readonly policies: RateLimitPolicies,
  ) {}

  update(name: string, patch: RulePatch): RuleUpdate {
    const next = merge(this.config.getOrThrow<RateLimitPolicyOptions>(this.pathOf(name)), patch);
    try {
      this.policies.setRule(name, next);
    } catch (error) {
      if (error instanceof RateLimitConfigError) throw fieldError(error.field, error.message);
      throw error;
    }
    return { rule: name, settings: next };
  }

  /** `default` is the default rule; other names must be configured rules (no creating rules, no dotted paths). */
  private pathOf(name: string): string {
    if (name === 'default') return `${RATE_LIMIT_CONFIG}.defaultRule`;
    const rules = this.config.getOrThrow<RateLimitRulesConfig>(RATE_LIMIT_CONFIG).rules ?? {};
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name) || !Object.hasOwn(rules, name)) {
      throw new NotFoundException(`No rate limit rule "${name}"; the rules are: default, ${Object.keys(rules).join(', ')}`);
    }
    return `${RATE_LIMIT_CONFIG}.rules.${name}`;
  }
}

function merge(current: RateLimitPolicyOptions, patch: RulePatch): RateLimitPolicyOptions {
  const next: Record<string, unknown> = { ...current };
  if (patch.algorithm !== undefined && patch.algorithm !== current.algorithm) {
    for (const field of ALGORITHM_FIELDS) delete next[field];
  }
  return { ...next, ...patch } as RateLimitPolicyOptions;
}
