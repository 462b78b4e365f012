import { defineRule, RateLimitConfigError, type RateLimitRuleOptions } from '../../lib/index.js';

const rule = (options: Partial<RateLimitRuleOptions> | Record<string, unknown>) => defineRule({ limit: 2, window: '10s', ...options } as RateLimitRuleOptions, 'limit', 'r');

describe('defineRule with afterLockout', () => {
  it('compiles "restart" into lockoutRestartsCount, on a fixed or an escalating lockout', () => {
    expect(rule({ blockMs: '5s', afterLockout: 'restart' })).toMatchObject({ blockMs: 5_000, lockoutRestartsCount: true });
    expect(rule({ lockout: { base: '1m' }, afterLockout: 'restart' })).toMatchObject({ blockMs: 60_000, lockoutFactor: 2, lockoutRestartsCount: true });
  });

  it('compiles "resume", the default, to the same rule as no afterLockout', () => {
    expect(rule({ blockMs: '5s', afterLockout: 'resume' })).toEqual(rule({ blockMs: '5s' }));
    expect(rule({ blockMs: '5s' })).not.toHaveProperty('lockoutRestartsCount');
  });

  it('accepts it beside a blockMs of 0, which turns the lockout off', () => {
    expect(rule({ blockMs: 0, afterLockout: 'restart' })).toMatchObject({ blockMs: 0 });
  });

  it.each([
    [{ blockMs: '5s', afterLockout: 'reset' }, /"r\.afterLockout": "reset" \(expected one of resume, restart/],
    [{ blockMs: '5s', afterLockout: true }, /"r\.afterLockout": true \(expected one of resume, restart/],
    [{ afterLockout: 'restart' }, /"r\.afterLockout": "restart" \(expected no value without a lockout: .*set "blockMs" or "lockout" too/],
    [{ algorithm: 'concurrency', window: undefined, afterLockout: 'restart' }, /"r\.afterLockout": "restart" \(expected no value: the concurrency algorithm has no lockout/],
  ])('refuses %j at start-up, naming the option, the value and what is allowed', (options, message) => {
    expect(() => rule(options)).toThrow(RateLimitConfigError);
    expect(() => rule(options)).toThrow(message);
  });
});
