import type { RateLimitRule, WindowAlgorithm } from '../../lib/index.js';
import {
  fixedWindowModel,
  gcraModel,
  slidingLogModel,
  slidingWindowModel,
  tokenBucketModel,
  type AlgorithmModel,
  type ModelDecision,
} from './reference-decisions.models.js';

/** The reference model of one rule's algorithm, from the rule as defineRule returns it. */
export function modelOf(rule: RateLimitRule): AlgorithmModel {
  switch (rule.algorithm as WindowAlgorithm) {
    case 'fixed-window':
      return fixedWindowModel(rule.limit, rule.windowMs);
    case 'sliding-log':
      return slidingLogModel(rule.limit, rule.windowMs);
    case 'sliding-window':
      return slidingWindowModel(rule.limit, rule.windowMs, rule.segments);
    case 'token-bucket':
      return tokenBucketModel(rule.limit, rule.windowMs, rule.refill);
    case 'gcra':
      return gcraModel(rule.limit, rule.windowMs, rule.burst);
  }
}

/** One tracker under one rule: the algorithm's state, the instant its lockout started and that lockout's level. */
interface Slot {
  rule: RateLimitRule;
  algorithm: AlgorithmModel;
  lockedAt?: number;
  level: number;
}

/**
 * The lockout's length (ms) at `level`: blockMs for a fixed one; an escalating one multiplies base by the factor once
 * per level, stopping at max, and rounds to the nearest ms (products, as the stores promise, not `**`).
 */
export function lockoutLength(rule: RateLimitRule, level: number): number {
  if (rule.lockoutFactor === undefined) return rule.blockMs;
  const max = rule.lockoutMaxMs!;
  let length = rule.blockMs;
  for (let i = 0; i < level && length < max; i++) length *= rule.lockoutFactor;
  return Math.min(Math.floor(length + 0.5), max);
}

export interface ModelEntry {
  key: string;
  rule: RateLimitRule;
  cost?: number;
}

/**
 * The whole store as a reference: every (rule, tracker) slot, lockouts, and consumeAll's all-or-nothing.
 * Lockout (a rule with blockMs): a consume refusal starts one, reporting retry = max(the algorithm's wait,
 * blockMs) and reset = max(the algorithm's reset, blockMs); while one is on (never more than blockMs ahead,
 * even when the clock steps back), every request is refused with remaining 0, retry = max(what is left of the
 * lockout, the algorithm's own wait for this request) and reset = max(what is left, the algorithm's reset as
 * the state is: a refusal charges nothing). An escalating lockout (lockoutFactor) lasts lockoutLength(level) instead
 * of blockMs: one level above the previous lockout's when that one ended less than lockoutForgetMs ago, else 0.
 * With afterLockout 'restart' (lockoutRestartsCount), the refusal that starts a lockout also forgets the algorithm's
 * state, and reports the lockout's length alone.
 */
export class ReferenceStore {
  private readonly slots = new Map<string, Slot>();

  consume(t: number, key: string, rule: RateLimitRule, cost: number): ModelDecision {
    return this.consumeAll(t, [{ key, rule, cost }], cost).decisions[0];
  }

  peek(t: number, key: string, rule: RateLimitRule, cost: number): ModelDecision {
    const slot = this.slot(key, rule);
    return this.locked(slot, t) ? this.lockedDecision(slot, t, cost) : slot.algorithm.decide(t, cost, false);
  }

  refund(t: number, key: string, rule: RateLimitRule, cost: number): void {
    this.slot(key, rule).algorithm.refund(t, cost);
  }

  reset(key: string, rule: RateLimitRule): void {
    this.slots.delete(this.id(key, rule));
  }

  /** Entries repeating a tracker under a rule are one request of their summed cost, and get the same decision. */
  consumeAll(t: number, entries: readonly ModelEntry[], cost: number): { allowed: boolean; decisions: ModelDecision[] } {
    const merged = new Map<string, { slot: Slot; cost: number }>();
    for (const e of entries) {
      const id = this.id(e.key, e.rule);
      const m = merged.get(id) ?? { slot: this.slot(e.key, e.rule), cost: 0 };
      m.cost += e.cost ?? cost;
      merged.set(id, m);
    }
    const requests = [...merged.values()];
    const decided = requests.map(({ slot, cost: c }) => (this.locked(slot, t) ? this.lockedDecision(slot, t, c) : slot.algorithm.decide(t, c, false)));
    const allowed = decided.every((d) => d.allowed);
    const final = requests.map(({ slot, cost: c }, i): ModelDecision => {
      const d = decided[i];
      if (allowed) return slot.algorithm.decide(t, c, true);
      // Nothing is charged: a rule that would have admitted reports its state as it is.
      if (d.allowed) return slot.algorithm.decide(t, 0, false);
      if (slot.rule.blockMs === 0 || this.locked(slot, t)) return d;
      const forget = slot.rule.lockoutForgetMs ?? 0;
      const escalates = slot.lockedAt !== undefined && forget > 0 && t < slot.lockedAt + lockoutLength(slot.rule, slot.level) + forget;
      slot.level = escalates ? slot.level + 1 : 0;
      slot.lockedAt = t;
      const length = lockoutLength(slot.rule, slot.level);
      if (slot.rule.lockoutRestartsCount) {
        // afterLockout 'restart': the count starts afresh, so the lockout alone is the wait.
        slot.algorithm = modelOf(slot.rule);
        return { ...d, resetAfterMs: length, retryAfterMs: length };
      }
      return { ...d, resetAfterMs: Math.max(d.resetAfterMs, length), retryAfterMs: Math.max(d.retryAfterMs, length) };
    });
    const ids = [...merged.keys()];
    return { allowed, decisions: entries.map((e) => final[ids.indexOf(this.id(e.key, e.rule))]) };
  }

  /** The instants (ms) from which each stored key holds nothing: a slot's state and its lockout are two keys. */
  expiries(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, slot] of this.slots) {
      const state = slot.algorithm.expiresAt();
      if (state !== undefined) out.set(id, state);
      if (slot.lockedAt !== undefined) out.set(id + ':block', slot.lockedAt + lockoutLength(slot.rule, slot.level) + (slot.rule.lockoutForgetMs ?? 0));
    }
    return out;
  }

  private lockoutLeft(slot: Slot, t: number): number {
    const length = lockoutLength(slot.rule, slot.level);
    return slot.lockedAt === undefined ? 0 : Math.min(slot.lockedAt + length - t, length);
  }

  private locked(slot: Slot, t: number): boolean {
    return this.lockoutLeft(slot, t) > 0;
  }

  private lockedDecision(slot: Slot, t: number, cost: number): ModelDecision {
    const left = this.lockoutLeft(slot, t);
    const wait = slot.algorithm.decide(t, cost, false).retryAfterMs;
    const asIs = slot.algorithm.decide(t, 0, false);
    return { allowed: false, limit: asIs.limit, remaining: 0, resetAfterMs: Math.max(left, asIs.resetAfterMs), retryAfterMs: Math.max(left, wait) };
  }

  private id(key: string, rule: RateLimitRule): string {
    return `${rule.name}\u0000${key}`;
  }

  private slot(key: string, rule: RateLimitRule): Slot {
    const id = this.id(key, rule);
    let slot = this.slots.get(id);
    if (!slot) this.slots.set(id, (slot = { rule, algorithm: modelOf(rule), level: 0 }));
    return slot;
  }
}
