import type { Decision } from '../../lib/index.js';
import { defineRule, type RateLimitMetrics } from '../../lib/index.js';
import { DecisionObserver } from '../../lib/observability/decision.observer.js';

const rule = defineRule({ limit: 10, window: '1m', algorithm: 'sliding-log' }, 'api');

function recording() {
  const samples: [string, number][] = [];
  const metrics: RateLimitMetrics = {
    decision: () => undefined,
    duration: () => undefined,
    storeError: () => undefined,
    circuit: () => undefined,
    blockCacheHit: () => undefined,
    utilization: (name, ratio) => samples.push([name, ratio]),
  };
  return { observer: new DecisionObserver({}, metrics), samples };
}

const decision = (d: Partial<Decision>): Decision => ({ allowed: true, limit: 10, remaining: 5, resetAfterMs: 0, retryAfterMs: 0, ...d });

describe('DecisionObserver utilisation samples', () => {
  it.each(['open', 'closed'] as const)("does not sample a decision the '%s' failure policy made up without a window", (policy) => {
    const { observer, samples } = recording();
    const d = decision({ allowed: policy === 'open', remaining: policy === 'open' ? 9 : 0, degraded: policy });
    observer.observe([{ key: 'k', rule }], { allowed: d.allowed, decisions: [d] }, performance.now(), false);
    expect(samples).toEqual([]);
  });

  it("samples a decision of the 'memory' fallback, which has a window", () => {
    const { observer, samples } = recording();
    const d = decision({ remaining: 2, degraded: 'memory' });
    observer.observe([{ key: 'k', rule }], { allowed: true, decisions: [d] }, performance.now(), false);
    expect(samples).toEqual([['api', 0.8]]);
  });

  it("takes a refused entry's own cost over the call's", () => {
    const { observer, samples } = recording();
    const d = decision({ allowed: false, remaining: 1 });
    observer.observe([{ key: 'k', rule, cost: 4 }], { allowed: false, decisions: [d] }, performance.now(), false, 2);
    expect(samples).toEqual([['api', 1.3]]);
  });
});
