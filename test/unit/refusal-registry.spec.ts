import { defineRule, type Decision } from '../../lib/index.js';
import { claimUncounted, noteRefusal, refusalRule } from '../../lib/observability/refusal.registry.js';

const rule = defineRule({ limit: 1, window: '1m' }, 'login');
const refusal = (): Decision => ({ allowed: false, limit: 1, remaining: 0, resetAfterMs: 60_000, retryAfterMs: 60_000 });

describe('refusal registry', () => {
  it('remembers the rule of a refusal without adding anything spread, JSON or equality can see', () => {
    const decision = refusal();
    noteRefusal(decision, rule, true);
    expect(refusalRule(decision)).toBe(rule);
    expect(Reflect.ownKeys(decision)).toEqual(['allowed', 'limit', 'remaining', 'resetAfterMs', 'retryAfterMs']);
    expect(JSON.stringify(decision)).toBe(JSON.stringify(refusal()));
    expect(decision).toStrictEqual(refusal());
    expect(refusalRule({ ...decision })).toBeUndefined();
  });

  it('claims a refusal noted uncounted (a peek) exactly once', () => {
    const decision = refusal();
    noteRefusal(decision, rule, false);
    expect([claimUncounted(decision, rule), claimUncounted(decision, rule)]).toEqual([true, false]);
  });

  it('does not claim a refusal the metrics counted, even if a peek noted it first', () => {
    const decision = refusal();
    noteRefusal(decision, rule, false);
    noteRefusal(decision, rule, true);
    expect(claimUncounted(decision, rule)).toBe(false);
  });

  it('remembers the rule of a frozen decision (a custom store may freeze its replies) and claims it once', () => {
    const decision = Object.freeze(refusal());
    noteRefusal(decision, rule, false);
    expect(refusalRule(decision)).toBe(rule);
    expect([claimUncounted(decision, rule), claimUncounted(decision, rule)]).toEqual([true, false]);
  });

  it('claims an unknown refusal once, under the rule the caller names', () => {
    const decision = refusal();
    expect([claimUncounted(decision, rule), claimUncounted(decision, rule)]).toEqual([true, false]);
    expect(refusalRule(decision)).toBe(rule);
  });
});
