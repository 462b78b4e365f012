import { MemoryStore, RateLimitPolicies, RateLimitService, ResilientStore, type Decision, type MultiDecision, type RateLimitMetrics, type RateLimitRule, type RateLimitStore, type RuleKey } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { ManualClock } from '../support/manual.clock.js';

/** A store that is down: every call fails. */
const down: RateLimitStore = {
  consume: () => Promise.reject(new Error('store down')),
  consumeAll: () => Promise.reject(new Error('store down')),
  peek: () => Promise.reject(new Error('store down')),
  refund: () => Promise.reject(new Error('store down')),
  reset: () => Promise.reject(new Error('store down')),
};

/** The memory store, whose `peek` can be made to fail as a store that is down would; it counts the peeks. */
class PeekFailingStore implements RateLimitStore {
  failPeeks = false;
  peeks = 0;
  constructor(private readonly inner: RateLimitStore) {}
  consume = (key: string, rule: RateLimitRule, cost?: number): Promise<Decision> => this.inner.consume(key, rule, cost);
  consumeAll = (entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> => this.inner.consumeAll(entries, cost);
  peek = (key: string, rule: RateLimitRule, cost?: number): Promise<Decision> => {
    this.peeks++;
    return this.failPeeks ? Promise.reject(new Error('store down')) : this.inner.peek(key, rule, cost);
  };
  refund = (key: string, rule: RateLimitRule, cost?: number) => this.inner.refund(key, rule, cost);
  reset = (key: string, rule: RateLimitRule) => this.inner.reset(key, rule);
}

describe('a shadow rule of a request that a rule in force refused', () => {
  const seen: [string, string][] = [];
  let store: PeekFailingStore;

  function service(trialLimit: number, inner?: (clock: ManualClock) => RateLimitStore): RateLimitService {
    const clock = new ManualClock();
    store = new PeekFailingStore(inner?.(clock) ?? new MemoryStore({ clock: clock.now }));
    seen.length = 0;
    const metrics: RateLimitMetrics = { decision: (rule, result) => seen.push([rule, result]), duration() {}, storeError() {}, circuit() {}, blockCacheHit() {} };
    const rules = { rules: { tight: { limit: 1, window: '1m' }, trial: { limit: trialLimit, window: '1m', mode: 'shadow' as const } } };
    return new RateLimitService(store, new RateLimitPolicies(rules), validateModuleOptions({ clock: clock.now }), metrics);
  }

  it('reports what the shadow rule holds, and charges it nothing', async () => {
    const limits = service(3);
    await limits.consumeAll('u', ['tight', 'trial']);
    for (let i = 0; i < 2; i++) {
      const refused = await limits.consumeAll('u', ['tight', 'trial']);
      expect(refused.allowed).toBe(false);
      expect(refused.decisions[1]).toMatchObject({ allowed: true, limit: 3, remaining: 2, retryAfterMs: 0, shadow: true });
      expect(refused.decisions[1].resetAfterMs).toBeGreaterThan(0);
    }
  });

  it('neither counts nor makes the client wait for a spent shadow rule', async () => {
    const limits = service(1);
    await limits.consumeAll('u', ['tight', 'trial']);
    seen.length = 0;
    const refused = await limits.consumeAll('u', ['tight', 'trial']);
    expect(refused.decisions[1]).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0, shadow: true });
    expect(seen).toEqual([['tight', 'rejected']]);
  });

  it('leaves the refusal as it was, reporting a full budget, when the store cannot peek the shadow rule', async () => {
    const limits = service(3);
    await limits.consumeAll('u', ['tight', 'trial']);
    store.failPeeks = true;
    const refused = await limits.consumeAll('u', ['tight', 'trial']);
    expect(refused.allowed).toBe(false);
    expect(refused.decisions[1]).toEqual({ allowed: true, limit: 3, remaining: 3, resetAfterMs: 0, retryAfterMs: 0, shadow: true });
  });

  it('does not ask a store that could not decide the rules in force what the shadow rule holds', async () => {
    const limits = service(3, (clock) => new ResilientStore(down, new MemoryStore({ clock: clock.now }), { failurePolicy: 'closed' }));
    const refused = await limits.consumeAll('u', ['tight', 'trial']);
    expect(refused.decisions[0].degraded).toBe('closed');
    expect(refused.decisions[1]).toEqual({ allowed: true, limit: 3, remaining: 3, resetAfterMs: 0, retryAfterMs: 0, shadow: true });
    expect(store.peeks).toBe(0);
  });
});
