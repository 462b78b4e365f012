import { defineRule, RateLimitExceededException, type Decision } from '../../lib/index.js';

const rule = defineRule({ limit: 5, window: '1m' }, 'login');
const refusal = (d: Partial<Decision> = {}): Decision => ({ allowed: false, limit: 5, remaining: 0, resetAfterMs: 60_000, retryAfterMs: 30_000, ...d });

describe('RateLimitExceededException', () => {
  it('keeps the three-argument form: message, wait in ms, decisions', () => {
    const exception = new RateLimitExceededException('Slow down', 2_001, [refusal()]);
    expect(exception.getStatus()).toBe(429);
    expect(exception.getResponse()).toEqual({ statusCode: 429, message: 'Slow down', retryAfter: 3 });
    expect(exception.rules).toEqual([]);
  });

  it('pairs each decision with the rule given for it', () => {
    const decision = refusal();
    expect(new RateLimitExceededException('x', 1, [decision], [rule]).outcomes).toEqual([{ rule, decision }]);
  });

  it('refuses rules that do not pair one to one with the decisions, naming both counts', () => {
    expect(() => new RateLimitExceededException('x', 1, [refusal(), refusal()], [rule])).toThrow(
      'RateLimitExceededException: rules has 1 entries but decisions has 2; give one rule per decision, in the same order, or none',
    );
  });

  it('leaves out of its outcomes a decision the module did not make, since its rule is unknown', () => {
    expect(new RateLimitExceededException('x', 1, [refusal()]).outcomes).toEqual([]);
  });
});
