import type { OverrideStore, RateLimitOverride, StoredOverride } from '../../interfaces/override.interface.js';
import type { MemoryRulePlan } from './memory-rule.plan.js';

/** One override as kept: when it ends (µs on the store's clock), and its limit (absent: a block). */
interface Held {
  until: number;
  limit?: number;
  reason?: string;
}

/**
 * The memory store's overrides, with the semantics of Redis's (lua/includes/driver.lua, apply_override): keyed by rule
 * name and tracker as given, ended by the store's clock, dropped when met ended. Kept apart from the key table and
 * its `maxKeys`: operators set them one by one, and an override must not be evicted by a flood of trackers.
 */
export class MemoryOverrideTable implements OverrideStore {
  private readonly rules = new Map<string, Map<string, Held>>();

  /** `now`: the store's clock, in µs. */
  constructor(private readonly now: () => number) {}

  async set(rule: string, key: string, override: StoredOverride): Promise<RateLimitOverride> {
    let held = this.rules.get(rule);
    if (held === undefined) this.rules.set(rule, (held = new Map()));
    const entry: Held = { until: this.now() + override.ttlMs * 1000, limit: override.limit, reason: override.reason };
    held.set(key, entry);
    return report(rule, key, entry);
  }

  async get(rule: string, key: string): Promise<RateLimitOverride | undefined> {
    const entry = this.held(rule, key, this.now());
    return entry && report(rule, key, entry);
  }

  async remove(rule: string, key: string): Promise<boolean> {
    const existed = this.held(rule, key, this.now()) !== undefined;
    this.rules.get(rule)?.delete(key);
    return existed;
  }

  async list(rule?: string): Promise<RateLimitOverride[]> {
    const now = this.now();
    const found: RateLimitOverride[] = [];
    for (const [name, held] of this.rules) {
      if (rule !== undefined && name !== rule) continue;
      for (const key of [...held.keys()]) {
        const entry = this.held(name, key, now);
        if (entry) found.push(report(name, key, entry));
      }
    }
    return found.sort((a, b) => a.expiresAt - b.expiresAt);
  }

  /**
   * The plan in force for `key` at `now` under an overridable rule: the rule's own, a copy with the override's
   * limit, or a block's time left (µs), as the driver's apply_override decides.
   */
  applied(plan: MemoryRulePlan, key: string, now: number): MemoryRulePlan | number {
    const entry = this.held(plan.rule.name, key, now);
    if (entry === undefined) return plan;
    if (entry.limit === undefined) return entry.until - now;
    return { ...plan, params: { ...plan.params, limit: entry.limit }, capacity: entry.limit };
  }

  /**
   * Holds exactly `overrides` (as another store's `list` reports them: each ending at `expiresAt`, ms on this table's
   * clock), in place of every override it held: the memory fallback's copy of Redis's (resilience/resilient.store.ts).
   */
  replace(overrides: readonly RateLimitOverride[]): void {
    this.rules.clear();
    for (const { rule, key, limit, block, expiresAt, reason } of overrides) {
      let held = this.rules.get(rule);
      if (held === undefined) this.rules.set(rule, (held = new Map()));
      held.set(key, { until: expiresAt * 1000, limit: block ? undefined : limit, reason });
    }
  }

  /** Drops every override. */
  clear(): void {
    this.rules.clear();
  }

  private held(rule: string, key: string, now: number): Held | undefined {
    const held = this.rules.get(rule);
    const entry = held?.get(key);
    if (entry === undefined || entry.until > now) return entry;
    held!.delete(key);
    if (held!.size === 0) this.rules.delete(rule);
    return undefined;
  }
}

function report(rule: string, key: string, { until, limit, reason }: Held): RateLimitOverride {
  return { rule, key, ...(limit === undefined ? {} : { limit }), block: limit === undefined, expiresAt: until / 1000, ...(reason === undefined ? {} : { reason }) };
}
