import { defineRule, RateLimitConfigError, type RateLimitRuleOptions } from '../../lib/index.js';

const rule = (options: Partial<RateLimitRuleOptions> | Record<string, unknown>) => defineRule({ limit: 1000, window: '1s', ...options } as RateLimitRuleOptions, 'hot', 'r');

describe('defineRule with localBudget', () => {
  it('compiles true into takes of 1% of the limit, kept 100 ms at most', () => {
    expect(rule({ localBudget: true }).localBudget).toEqual({ maxUnits: 10, maxMs: 100 });
    expect(rule({ localBudget: 'true', algorithm: 'token-bucket' }).localBudget).toEqual({ maxUnits: 10, maxMs: 100 });
  });

  it('takes a GCRA burst as the most it admits at once', () => {
    expect(rule({ algorithm: 'gcra', burst: 300, localBudget: true }).localBudget).toEqual({ maxUnits: 3, maxMs: 100 });
  });

  it('keeps a take no longer than a shorter window by default', () => {
    expect(rule({ window: 50, localBudget: true }).localBudget).toEqual({ maxUnits: 10, maxMs: 50 });
  });

  it('compiles maxUnits and maxMs from numbers and strings', () => {
    expect(rule({ localBudget: { maxUnits: '40', maxMs: '2s' } }).localBudget).toEqual({ maxUnits: 40, maxMs: 2_000 });
  });

  it('leaves a rule without it, or with false, exactly as before', () => {
    expect(rule({ localBudget: false })).toEqual(rule({}));
    expect(rule({ localBudget: 'false' })).not.toHaveProperty('localBudget');
  });

  it.each([
    [{ localBudget: 'yes' }, /"r\.localBudget": "yes" \(expected true, false, or \{ maxUnits, maxMs \}/],
    [{ localBudget: { units: 5 } }, /"r\.localBudget\.units": 5 \(expected one of the fields maxUnits, maxMs/],
    [{ limit: 150, localBudget: true }, /"r\.localBudget": true \(expected \{ maxUnits \} of 2 or more: by default a take is 1% of the limit, and this rule's 150 gives 1/],
    [{ localBudget: { maxUnits: 1 } }, /"r\.localBudget\.maxUnits": 1 \(expected an integer between 2 and 1000/],
    [{ localBudget: { maxUnits: 1001 } }, /"r\.localBudget\.maxUnits": 1001 \(expected an integer between 2 and 1000/],
    [{ localBudget: { maxMs: '2m' } }, /"r\.localBudget\.maxMs": "2m" \(expected a duration of at most 60000 ms/],
    [{ localBudget: { maxMs: 0 } }, /"r\.localBudget\.maxMs": 0 \(expected a positive duration/],
    [{ algorithm: 'sliding-log', localBudget: true }, /"r\.localBudget": true \(expected false for the sliding-log algorithm \(the sliding log counts each unit at the instant it is spent/],
    [{ algorithm: 'concurrency', window: undefined, localBudget: true }, /"r\.localBudget": true \(expected false for the concurrency algorithm/],
    [{ blockMs: '1m', localBudget: true }, /"r\.localBudget": true \(expected false on a rule with a lockout: a lockout could not stop the units other instances hold/],
  ])('refuses %j at start-up, naming the option, the value and what is allowed', (options, message) => {
    expect(() => rule(options)).toThrow(RateLimitConfigError);
    expect(() => rule(options)).toThrow(message);
  });
});
