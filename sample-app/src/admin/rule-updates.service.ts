import { Injectable, InternalServerErrorException, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { RATE_LIMIT_CONFIG } from '../config/rate-limit.config.js';
import {
  defineRule,
  RateLimitConfigError,
  RateLimitPolicies,
  type RateLimitPolicyOptions,
  type RateLimitRuleOptions,
  type RateLimitRulesConfig,
} from 'nestjs-redis-rate-limit';
import { fieldError } from './field-error.js';
import type { RulePatch } from './rule-patch.pipe.js';

/** Settings that belong to one algorithm; they go when the algorithm changes, or the rule would be invalid. */
const ALGORITHM_FIELDS = ['segments', 'refill', 'burst'] as const;
/** Fields of a policy that are not the rule's own (how the guard applies it); `defineRule` knows only the rule's. */
const GUARD_FIELDS = ['key', 'cost', 'shared', 'keyRequired'] as const;

export interface RuleUpdate {
  rule: string;
  settings: RateLimitPolicyOptions;
}

/**
 * Changes a rule at run time through ConfigService, which the rate-limit module watches: the next request
 * is decided by the new rule, on every route and in every service call that uses it.
 */
@Injectable()
export class RuleUpdatesService {
  constructor(
    private readonly config: ConfigService,
    private readonly policies: RateLimitPolicies,
  ) {}

  update(name: string, patch: RulePatch): RuleUpdate {
    const path = this.pathOf(name);
    const current = this.config.getOrThrow<RateLimitPolicyOptions>(path);
    const next = merge(current, patch);
    // The module's watcher would only log an invalid rule and keep the old one; validate first to answer 400.
    try {
      defineRule(ruleFields(next), name, path);
    } catch (error) {
      if (error instanceof RateLimitConfigError) throw fieldError(error.field, error.message);
      throw error;
    }
    if (JSON.stringify(next) === JSON.stringify(current)) return { rule: name, settings: next };

    const version = this.policies.version;
    this.config.set(path, next);
    if (this.policies.version === version) {
      // The watcher refused what defineRule accepted (a check on the whole set of rules): put the old one back.
      this.config.set(path, current);
      throw new InternalServerErrorException(`The rate limiter refused the new "${name}" rule; see the "RateLimit" log`);
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

function ruleFields(policy: RateLimitPolicyOptions): RateLimitRuleOptions {
  const rule: Record<string, unknown> = { ...policy };
  for (const field of GUARD_FIELDS) delete rule[field];
  return rule as unknown as RateLimitRuleOptions;
}
