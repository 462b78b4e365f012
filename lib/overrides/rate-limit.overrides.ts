import type { OverrideStore, RateLimitOverride, RateLimitOverrideOptions } from '../interfaces/override.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RejectionAudit } from '../observability/rejection.audit.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import { checkOverride } from './override-options.validator.js';

/** What RateLimitOverrides needs from the service: rules by name, the store's overrides, the audit, the block cache. */
export interface OverrideContext {
  /** The rule a reference names (a configured rule's name, or a rule), as the service resolves it. */
  rule(ref: string | RateLimitRule): RateLimitRule;
  store(): OverrideStore | undefined;
  audit?: RejectionAudit | null;
  /** Forgets this process's cached refusals of the tracker under the rule (the block cache). */
  forget(rule: string, key: string): void;
}

/**
 * Per-tracker overrides at run time, for the rules with `overrides: true`: raise or cut one tracker's limit, or block
 * it, until an expiry, without a deploy. Kept by the store (Redis: read by every instance's next decision, inside the
 * same script), listed and removable; each change goes to the audit stream when `audit` is on.
 */
export class RateLimitOverrides {
  constructor(private readonly context: OverrideContext) {}

  /**
   * Sets (or replaces) the override of `rule` for `key`: `{ limit, ttlMs }` or `{ block: true, ttlMs }`, with an
   * optional `reason`. The rule must have `overrides: true`. Throws `RateLimitConfigError` naming a bad option.
   */
  async set(rule: string | RateLimitRule, key: string, options: RateLimitOverrideOptions): Promise<RateLimitOverride> {
    const resolved = this.context.rule(rule);
    if (!resolved.overrides) {
      throw new RateLimitConfigError(`rules.${resolved.name}.overrides`, resolved.overrides ?? false, `true for rule "${resolved.name}" to take overrides (its decisions then read them)`);
    }
    checkKey(key);
    const checked = checkOverride(resolved, options);
    const override = await this.store().set(resolved.name, key, checked);
    this.context.forget(resolved.name, key);
    const what = checked.limit === undefined ? ['block', 'true'] : ['limit', String(checked.limit)];
    this.record('override-set', resolved.name, key, [...what, 'ttlMs', String(checked.ttlMs), ...(checked.reason === undefined ? [] : ['reason', checked.reason])]);
    return override;
  }

  /** Removes the override of `rule` (its name, or the rule) for `key`: the rule's own limit applies at once. Whether one was in force. */
  async remove(rule: string | RateLimitRule, key: string): Promise<boolean> {
    const name = ruleName(rule);
    checkKey(key);
    const removed = await this.store().remove(name, key);
    this.context.forget(name, key);
    if (removed) this.record('override-removed', name, key, []);
    return removed;
  }

  /** The override of `rule` (its name, or the rule) for `key` in force now, or undefined. */
  get(rule: string | RateLimitRule, key: string): Promise<RateLimitOverride | undefined> {
    checkKey(key);
    return this.store().get(ruleName(rule), key);
  }

  /** The overrides in force, of one rule (its name, or the rule) or of all, soonest to end first. */
  list(rule?: string | RateLimitRule): Promise<RateLimitOverride[]> {
    return this.store().list(rule === undefined ? undefined : ruleName(rule));
  }

  private store(): OverrideStore {
    const store = this.context.store();
    if (!store) throw new RateLimitConfigError('store', 'a store without overrides', 'the Redis or memory store: overrides are kept by the store');
    return store;
  }

  private record(event: string, rule: string, key: string, fields: string[]): void {
    this.context.audit?.append(['event', event, 'rule', rule, 'key', key, ...fields]);
  }
}

/** A rule's name: an override belongs to the name, so one can be read or removed after its rule changed or went. */
function ruleName(rule: string | RateLimitRule): string {
  if (typeof rule === 'string' && rule.length > 0) return rule;
  if (rule !== null && typeof rule === 'object' && typeof rule.name === 'string') return rule.name;
  throw new RateLimitConfigError('rule', rule, 'a rule name or a rule');
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key.length === 0) throw new RateLimitConfigError('key', key, 'a non-empty string: the tracker the override applies to');
}
