import type { CheckResult, MemoryEntry } from '../algorithms/algorithm.interface.js';
import { expiryAfter } from '../algorithms/algorithm.interface.js';
import { throttle, type ThrottleReply } from '../algorithms/gcra.throttle.js';
import type { Clock } from '../interfaces/clock.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';
import { ceilMs, expandDecisions, planRules, toDecision, type PlannedRule, type StoreOp } from './store.plan.js';

export interface MemoryStoreOptions {
  /** Prefix of every key, as in Redis. @default 'rl' */
  keyPrefix?: string;
  /** Time source in ms since the epoch. @default a monotonic clock (performance.timeOrigin + performance.now()) */
  clock?: Clock;
  /** Most keys kept; past it the least recently used are dropped. @default 100000 */
  maxKeys?: number;
}

const monotonic: Clock = () => performance.timeOrigin + performance.now();

/**
 * The embedded store: the same algorithms as the Lua scripts (their twins in `algorithms/*.memory.ts`) and the
 * same driver, so the same sequence of (time, cost) gets the same decisions. Bounded: an entry past its expiry
 * is dropped when met (and a few of the oldest are checked on every write), and at most `maxKeys` are kept (LRU).
 * Decisions are synchronous under the hood, so concurrent calls in one process are exact.
 */
export class MemoryStore implements RateLimitStore {
  private readonly entries = new Map<string, MemoryEntry<unknown>>();
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly maxKeys: number;
  private writes = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.prefix = options.keyPrefix ?? 'rl';
    this.clock = options.clock ?? monotonic;
    this.maxKeys = options.maxKeys ?? 100_000;
    if (!Number.isSafeInteger(this.maxKeys) || this.maxKeys < 1) {
      throw new RangeError(`Invalid memory store option "maxKeys": ${String(options.maxKeys)} (expected a positive integer)`);
    }
  }

  /** Keys held now (rule state and lockouts). */
  get size(): number {
    return this.entries.size;
  }

  async consume(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.run('consume', [{ key, rule }], cost).decisions[0];
  }

  async consumeAll(entries: readonly RuleKey[], cost = 1): Promise<MultiDecision> {
    return this.run('consume', entries, cost);
  }

  async peek(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.run('peek', [{ key, rule }], cost).decisions[0];
  }

  async refund(key: string, rule: RateLimitRule, cost = 1): Promise<void> {
    this.run('refund', [{ key, rule }], cost);
  }

  /** redis-cell's `CL.THROTTLE key max_burst count period [quantity]` (period in seconds), with its five-value reply. */
  throttle(key: string, maxBurst: number, count: number, period: number, quantity = 1): Promise<ThrottleReply> {
    return throttle(this, key, maxBurst, count, period, quantity);
  }

  async reset(key: string, rule: RateLimitRule): Promise<void> {
    const [planned] = planRules(this.prefix, [{ key, rule }], 0, 'peek').rules;
    this.entries.delete(planned.keys.state);
    this.entries.delete(planned.keys.block);
  }

  /** Drops everything. */
  clear(): void {
    this.entries.clear();
  }

  /** Mirrors lua/includes/driver.lua step by step. */
  private run(op: StoreOp, entries: readonly RuleKey[], cost: number): MultiDecision {
    const plan = planRules(this.prefix, entries, cost, op);
    const rules = plan.rules;
    const now = Math.floor(this.clock() * 1000);
    if (op === 'refund') {
      for (const r of rules) {
        const entry = this.read(r.keys.state, now);
        r.definition.memory.refund(entry, r.params, now, r.cost);
        this.write(r.keys.state, entry, now);
      }
      return { allowed: true, decisions: [] };
    }
    const writeNow = op === 'consume' && rules.length === 1;
    let all = true;
    const blocked: boolean[] = [];
    const results = rules.map((r, i): CheckResult => {
      // The lockout entry holds when it started, so the current rule's length applies; at most that length from now.
      const started = r.blockUs > 0 ? (this.read(r.keys.block, now).value as number | undefined) : undefined;
      const left = started === undefined ? 0 : Math.min(started + r.blockUs - now, r.blockUs);
      blocked[i] = left > 0;
      let result: CheckResult;
      if (blocked[i]) {
        // The algorithm is asked too, writing nothing: the wait reported must also be enough to pass it then.
        const [, , reset, retry] = this.check(r, now, false);
        result = [false, 0, Math.max(reset, left), retry < 0 ? -1 : Math.max(retry, left)];
      } else {
        result = this.check(r, now, writeNow);
      }
      all &&= result[0];
      return result;
    });
    if (op === 'consume' && all && !writeNow) {
      rules.forEach((r, i) => (results[i] = this.check(r, now, true)));
    } else if (op === 'consume' && !all) {
      rules.forEach((r, i) => {
        const d = results[i];
        if (d[0]) {
          // Nothing was charged: report this rule's state as it is, not as it would have been after the charge.
          if (!writeNow) results[i] = this.check({ ...r, cost: 0 }, now, false);
          return;
        }
        if (r.blockUs === 0 || blocked[i]) return;
        this.write(r.keys.block, { value: now, expiresAt: expiryAfter(now, r.blockUs) }, now);
        // The longer of the lockout and the algorithm's own wait: the lockout alone could be refused again.
        d[2] = Math.max(d[2], r.blockUs);
        if (d[3] >= 0) d[3] = Math.max(d[3], r.blockUs);
      });
    }
    return expandDecisions(plan, {
      allowed: all,
      decisions: results.map(([allowed, remaining, reset, retry], i) =>
        toDecision(rules[i], allowed, remaining, ceilMs(reset), retry < 0 ? -1 : ceilMs(retry)),
      ),
    });
  }

  private check(r: PlannedRule, now: number, apply: boolean): CheckResult {
    const entry = this.read(r.keys.state, now);
    const result = r.definition.memory.check(entry, r.params, now, r.cost, apply);
    this.write(r.keys.state, entry, now);
    return result;
  }

  /** The live entry for a key, or an empty one (not stored) when it is missing or expired. */
  private read(key: string, now: number): MemoryEntry<unknown> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) return entry;
    if (entry) this.entries.delete(key);
    return { value: undefined, expiresAt: 0 };
  }

  /**
   * Stores an entry, or drops it if it holds nothing. Map order is the LRU order, kept approximately: an entry
   * moves to the young end only once it has aged by a quarter of `maxKeys` writes, because a delete-and-insert
   * on every decision leaves the Map full of holes that every lookup and sweep then walks over.
   */
  private write(key: string, entry: MemoryEntry<unknown>, now: number): void {
    this.writes++;
    if (entry.value === undefined) {
      this.entries.delete(key);
      return;
    }
    const age = this.writes - (entry.touched ?? -Infinity);
    if (age > this.maxKeys / 4 || !this.entries.has(key)) {
      this.entries.delete(key);
      entry.touched = this.writes;
      this.entries.set(key, entry);
    }
    if (this.entries.size > this.maxKeys || this.writes % 32 === 0) this.sweep(now);
  }

  private sweep(now: number): void {
    // Past the bound, the least recently used go; and every few writes a few of them are checked for expiry,
    // so expired state goes without a timer.
    let checked = 0;
    for (const [key, entry] of this.entries) {
      if (this.entries.size > this.maxKeys) {
        this.entries.delete(key);
      } else if (checked++ < 64 && entry.expiresAt <= now) {
        this.entries.delete(key);
      } else {
        break;
      }
    }
  }
}
