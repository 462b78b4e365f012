import type { MultiDecision, RateLimitRule, RateLimitStore, RuleKey } from '../../lib/index.js';

/**
 * A store that counts the decisions asked of the one it wraps and knows which are in flight: tests of waiting calls
 * assert how many times the store was asked, and wait for its answers before they look.
 */
export class CountingStore implements RateLimitStore {
  /** Decisions asked (consume and consumeAll). */
  calls = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(readonly inner: RateLimitStore) {}

  consume(key: string, rule: RateLimitRule, cost?: number) {
    return this.track(this.inner.consume(key, rule, cost));
  }
  consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> {
    return this.track(this.inner.consumeAll(entries, cost));
  }
  peek(key: string, rule: RateLimitRule, cost?: number) {
    return this.inner.peek(key, rule, cost);
  }
  refund(key: string, rule: RateLimitRule, cost?: number) {
    return this.track(this.inner.refund(key, rule, cost), false);
  }
  reset(key: string, rule: RateLimitRule) {
    return this.inner.reset(key, rule);
  }

  /** Resolves once no call is in flight and what their answers set off has run (the next calls included). */
  async idle(): Promise<void> {
    do {
      await Promise.allSettled([...this.inFlight]);
      // A macrotask turn: every microtask the answers queued (the waiter's next call included) has run.
      await new Promise((resolve) => setImmediate(resolve));
    } while (this.inFlight.size > 0);
  }

  private track<T>(call: Promise<T>, decision = true): Promise<T> {
    if (decision) this.calls++;
    this.inFlight.add(call);
    void call.finally(() => this.inFlight.delete(call)).catch(() => undefined);
    return call;
  }
}
