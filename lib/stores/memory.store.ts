import type { CheckResult, MemoryEntry } from '../algorithms/algorithm.interface.js';
import { expiryAfter } from '../algorithms/algorithm.interface.js';
import { throttle, type ThrottleReply } from '../algorithms/gcra.throttle.js';
import { RateLimitConfigError } from '../config/rate-limit-config.error.js';
import type { Clock } from '../interfaces/clock.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';
import { MemoryKeyTable, type KeyKind } from './memory-key.table.js';
import { ceilMs, expandDecisions, planRules, toDecision, type PlannedRule, type StoreOp } from './store.plan.js';

export interface MemoryStoreOptions {
  /** Prefix of every key, as in Redis. @default 'rl' */
  keyPrefix?: string;
  /** Time source in ms since the epoch. @default a monotonic clock (performance.timeOrigin + performance.now()) */
  clock?: Clock;
  /**
   * Most keys kept (rule state and lockouts together). When full, expired keys go first, then keys seen only
   * once, then the least recently used counts, and lockouts last (see MemoryKeyTable). @default 100000
   */
  maxKeys?: number;
}

const monotonic: Clock = () => performance.timeOrigin + performance.now();

/**
 * The embedded store: the same algorithms as the Lua scripts (their twins in `algorithms/*.memory.ts`) and the
 * same driver, so the same sequence of (time, cost) gets the same decisions. Bounded: an entry past its expiry
 * is dropped when met (and a few of the oldest are checked every few writes), and at most `maxKeys` are kept, a
 * flood of distinct trackers displacing only other keys seen once, not counts or lockouts (see MemoryKeyTable).
 * Decisions are synchronous under the hood, so concurrent calls in one process are exact.
 */
export class MemoryStore implements RateLimitStore {
  private readonly entries: MemoryKeyTable;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly maxKeys: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.prefix = options.keyPrefix ?? 'rl';
    this.clock = options.clock ?? monotonic;
    this.maxKeys = options.maxKeys ?? 100_000;
    if (!Number.isSafeInteger(this.maxKeys) || this.maxKeys < 1) {
      throw new RateLimitConfigError('maxKeys', options.maxKeys, 'a positive integer: the most keys the memory store keeps');
    }
    this.entries = new MemoryKeyTable(this.maxKeys);
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
        // The algorithm is asked too, writing nothing: the wait reported must also be enough to pass it then. If
        // it would pass, its state is reported as it is, not as it would be after a charge that is not made.
        let own = this.check(r, now, false);
        if (own[0]) own = this.check({ ...r, cost: 0 }, now, false);
        const [, , reset, retry] = own;
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
        this.write(r.keys.block, { value: now, expiresAt: expiryAfter(now, r.blockUs) }, now, 'lockout');
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

  /** The live entry for a key, or an empty one (not stored until written) when it is missing or expired. */
  private read(key: string, now: number): MemoryEntry<unknown> {
    return this.entries.get(key, now);
  }

  /** Stores an entry, or drops it if it holds nothing; `kind` 'lockout' for a lockout, which is forgotten last. */
  private write(key: string, entry: MemoryEntry<unknown>, now: number, kind: KeyKind = 'state'): void {
    this.entries.set(key, entry, now, kind);
  }
}
