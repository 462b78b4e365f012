import { Inject, Injectable } from '@nestjs/common';
import { compilePolicy } from './config/policy.compiler.js';
import { RateLimitConfigError } from './config/rate-limit-config.error.js';
import { RateLimitPolicies } from './config/rate-limit.policies.js';
import type { RateLimitSettings } from './config/module-options.validator.js';
import { retryAfterMs } from './http/rate-limit.headers.js';
import type { Decision, MultiDecision } from './interfaces/decision.interface.js';
import type { RateLimitDecoratorOptions, RateLimitPolicyOptions } from './interfaces/rate-limit-options.interface.js';
import type { RateLimitRule } from './interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from './interfaces/store.interface.js';
import { RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE } from './rate-limit.constants.js';
import { RateLimitExceededException } from './rate-limit.exception.js';

/**
 * A rule: the name of a configured one (looked up on every call, so config changes apply), a rule from
 * `defineRule`, or rule options (compiled once per object; `name` defaults to `'default'`).
 */
export type RuleRef = string | RateLimitRule | RateLimitDecoratorOptions;

/**
 * Rate limiting for business code: the key is whatever you count per (a username, a phone number, an API
 * key), used as given. The guard uses the same service for HTTP requests.
 */
@Injectable()
export class RateLimitService {
  private readonly compiled = new WeakMap<object, RateLimitRule>();

  constructor(
    @Inject(RATE_LIMIT_STORE) readonly store: RateLimitStore,
    private readonly policies: RateLimitPolicies,
    @Inject(RATE_LIMIT_SETTINGS) private readonly settings: RateLimitSettings,
  ) {}

  /** Takes `cost` units for `key` if the rule admits them. */
  consume(key: string, rule: RuleRef, cost = 1): Promise<Decision> {
    return this.store.consume(key, this.rule(rule), cost);
  }

  /**
   * All-or-nothing over several rules, in one round trip: either every rule admits and all are charged, or
   * none is. Either one key for all rules, or `{ key, rule }` entries.
   */
  consumeAll(key: string, rules: readonly RuleRef[], cost?: number): Promise<MultiDecision>;
  consumeAll(entries: readonly { key: string; rule: RuleRef; cost?: number }[], cost?: number): Promise<MultiDecision>;
  consumeAll(keyOrEntries: string | readonly { key: string; rule: RuleRef; cost?: number }[], rulesOrCost?: readonly RuleRef[] | number, cost = 1): Promise<MultiDecision> {
    if (typeof keyOrEntries === 'string') {
      const rules = (rulesOrCost as readonly RuleRef[]).map((rule) => ({ key: keyOrEntries, rule: this.rule(rule) }));
      return this.store.consumeAll(rules, cost);
    }
    const entries: RuleKey[] = keyOrEntries.map((e) => ({ key: e.key, rule: this.rule(e.rule), cost: e.cost }));
    return this.store.consumeAll(entries, typeof rulesOrCost === 'number' ? rulesOrCost : 1);
  }

  /** What `consume` would decide now, recording nothing. */
  peek(key: string, rule: RuleRef, cost = 1): Promise<Decision> {
    return this.store.peek(key, this.rule(rule), cost);
  }

  /** Gives back units a `consume` took (e.g. when the SMS provider failed). */
  refund(key: string, rule: RuleRef, cost = 1): Promise<void> {
    return this.store.refund(key, this.rule(rule), cost);
  }

  /** Forgets the key's state under the rule, lockout included (e.g. after a successful login). */
  reset(key: string, rule: RuleRef): Promise<void> {
    return this.store.reset(key, this.rule(rule));
  }

  /** Consumes and throws `RateLimitExceededException` (429) when refused; one rule or several, all-or-nothing. */
  async enforce(key: string, rules: RuleRef | readonly RuleRef[], cost = 1): Promise<MultiDecision> {
    const list = Array.isArray(rules) ? (rules as readonly RuleRef[]) : [rules as RuleRef];
    const result = list.length === 1
      ? { decisions: [await this.consume(key, list[0], cost)] }
      : await this.consumeAll(key, list, cost);
    const multi: MultiDecision = { allowed: result.decisions.every((d) => d.allowed), decisions: result.decisions };
    if (!multi.allowed) {
      const message = typeof this.settings.errorMessage === 'string' ? this.settings.errorMessage : 'Too Many Requests';
      const rulesOf = list.map((r) => this.rule(r));
      throw new RateLimitExceededException(message, retryAfterMs(multi.decisions.map((decision, i) => ({ rule: rulesOf[i], decision }))), multi.decisions);
    }
    return multi;
  }

  /** Decides resolved entries (what the guard uses): one rule alone, several all-or-nothing. */
  async decide(entries: readonly RuleKey[]): Promise<MultiDecision> {
    if (entries.length === 1) {
      const decision = await this.store.consume(entries[0].key, entries[0].rule, entries[0].cost);
      return { allowed: decision.allowed, decisions: [decision] };
    }
    return this.store.consumeAll(entries);
  }

  /** Resolves a rule reference; unknown names throw a `RateLimitConfigError` listing the configured ones. */
  rule(ref: RuleRef): RateLimitRule {
    if (typeof ref === 'string') {
      const policy = this.policies.get(ref);
      if (!policy) throw new RateLimitConfigError('rule', ref, `the name of a configured rule (${this.policies.names().join(', ') || 'none are configured'})`);
      return policy.rule;
    }
    if (isRule(ref)) return ref;
    let rule = this.compiled.get(ref);
    if (!rule) {
      const { name = 'default', ...options } = ref;
      rule = compilePolicy(options as RateLimitPolicyOptions, name, 'rule').rule;
      this.compiled.set(ref, rule);
    }
    return rule;
  }
}

function isRule(value: object): value is RateLimitRule {
  return typeof (value as RateLimitRule).windowMs === 'number' && typeof (value as RateLimitRule).name === 'string';
}
