import { defineRule, RateLimitConfigError } from '../../lib/index.js';
import type { EscalatingLockoutOptions } from '../../lib/index.js';

const at = (lockout: EscalatingLockoutOptions) => ({ limit: 5, window: '1m', lockout });

describe('a lockout with factor 1', () => {
  it('refuses a max other than base by naming max and saying it must equal base, not by asking for the factor it was given', () => {
    let error: unknown;
    try {
      defineRule(at({ factor: 1, max: 100_000, base: 20_000 }), 'login');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RateLimitConfigError);
    expect(error).toMatchObject({ field: 'login.lockout.max', value: 100_000 });
    expect((error as Error).message).toBe(
      'Invalid rate limit option "login.lockout.max": 100000 (expected base\'s 20000 ms, or no value: a factor of 1 keeps every lockout at base, so it never grows to max; a lockout that grows to 100000 ms needs a factor of 1.017 or more)',
    );
  });

  it('refuses a max other than base when the factor of 1 arrives as a string from config', () => {
    expect(() => defineRule(at({ factor: '1', max: '5m', base: '1m' }), 'login')).toThrow(expect.objectContaining({ field: 'login.lockout.max', value: '5m' }));
  });

  it('compiles as a fixed lockout of base when max is left out or equals base', () => {
    for (const lockout of [{ base: 20_000, factor: 1 }, { base: 20_000, factor: 1, max: '20s' }]) {
      const rule = defineRule(at(lockout), 'login');
      expect([rule.blockMs, rule.lockoutFactor, rule.lockoutMaxMs]).toEqual([20_000, undefined, undefined]);
    }
  });
});
