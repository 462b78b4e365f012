import { defineRule, RateLimitConfigError, type RateLimitRuleOptions } from '../../lib/index.js';

const DAY = 86_400_000;
const at = (lockout: unknown): RateLimitRuleOptions => ({ limit: 5, window: '1m', lockout } as RateLimitRuleOptions);

describe('defineRule with a lockout', () => {
  it('compiles an escalating lockout into blockMs (its base), factor, max and forgetAfter in ms', () => {
    expect(defineRule(at({ base: '1m', factor: 2, max: '1d', forgetAfter: '1d' }), 'login')).toMatchObject({ blockMs: 60_000, lockoutFactor: 2, lockoutMaxMs: DAY, lockoutForgetMs: DAY });
  });

  it('defaults factor to 2, max to base × 2^10 and forgetAfter to max', () => {
    expect(defineRule(at({ base: '1m' }))).toMatchObject({ blockMs: 60_000, lockoutFactor: 2, lockoutMaxMs: 1024 * 60_000, lockoutForgetMs: 1024 * 60_000 });
  });

  it('caps the default max at 366 days', () => {
    expect(defineRule(at({ base: '1d', factor: 3 })).lockoutMaxMs).toBe(366 * DAY);
  });

  it('reads numbers and durations that arrive as strings from config and env vars', () => {
    expect(defineRule(at({ base: '30s', factor: '1.5', max: '10m', forgetAfter: '1h' }))).toMatchObject({ blockMs: 30_000, lockoutFactor: 1.5, lockoutMaxMs: 600_000, lockoutForgetMs: 3_600_000 });
  });

  it('takes a plain duration as a fixed lockout, the same rule as blockMs', () => {
    expect(defineRule(at('15m'), 'x')).toEqual(defineRule({ limit: 5, window: '1m', blockMs: '15m' }, 'x'));
  });

  it('compiles a lockout that cannot grow (factor 1, or max equal to base) as a fixed one, without escalation fields', () => {
    for (const lockout of [{ base: '1m', factor: 1 }, { base: '1m', max: '1m' }]) {
      expect(defineRule(at(lockout), 'x')).toEqual(defineRule({ limit: 5, window: '1m', blockMs: '1m' }, 'x'));
    }
  });

  it.each([
    [{ limit: 5, window: '1m', blockMs: '1m', lockout: '2m' }, /"r\.lockout": "2m" \(expected no value when "blockMs" is set too \("1m"\)/],
    [at({ factor: 2 }), /"r\.lockout\.base": undefined \(expected a positive duration/],
    [at({ base: 0 }), /"r\.lockout\.base": 0 \(expected a positive duration/],
    [at({ base: '367d' }), /"r\.lockout\.base": "367d" \(expected a duration of 1 ms to 31622400000 ms \(366 days\)/],
    [at({ base: '1m', factor: 0.5 }), /"r\.lockout\.factor": 0\.5 \(expected a number of 1 or more/],
    [at({ base: '1m', factor: 'double' }), /"r\.lockout\.factor": "double" \(expected a number of 1 or more/],
    [at({ base: '1m', factor: Infinity }), /"r\.lockout\.factor": Infinity/],
    [at({ base: '1m', max: '30s' }), /"r\.lockout\.max": "30s" \(expected a duration of 60000 ms to 31622400000 ms/],
    [at({ base: '1m', max: '400d' }), /"r\.lockout\.max": "400d"/],
    [at({ base: '1m', forgetAfter: 0 }), /"r\.lockout\.forgetAfter": 0 \(expected a positive duration/],
    [at({ base: '1m', forgetAfter: '2y' }), /"r\.lockout\.forgetAfter": "2y"/],
    [at({ base: '1m', factor: 1.01, max: '1d' }), /"r\.lockout\.factor": 1\.01 \(expected a factor with which the lockout grows from base \(60000 ms\) to max \(86400000 ms\) within 100 escalations: 1\.076 or more, or 1 for a fixed lockout/],
    [at({ base: '1m', growth: 2 }), /"r\.lockout\.growth": 2 \(expected one of the fields base, factor, max, forgetAfter/],
    [at(['1m']), /"r\.lockout": \["1m"\] \(expected a duration, or an object \{ base, factor\?, max\?, forgetAfter\? \}/],
    [at(-1), /"r\.lockout": -1/],
  ])('refuses %j, naming the field, the value and what is allowed', (options, message) => {
    expect(() => defineRule(options as RateLimitRuleOptions, 'r')).toThrow(RateLimitConfigError);
    expect(() => defineRule(options as RateLimitRuleOptions, 'r')).toThrow(message);
  });

  it('refuses a lockout on a concurrency rule, which has none', () => {
    expect(() => defineRule({ algorithm: 'concurrency', limit: 3, lockout: { base: '1m' } }, 'c')).toThrow(/"c\.lockout".*no lockout/);
  });
});
