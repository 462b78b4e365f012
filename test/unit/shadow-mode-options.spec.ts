import { RateLimitConfigError, RateLimitPolicies, validateRulesConfig } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

describe('shadow mode options', () => {
  it('refuses a rule mode other than "enforce" or "shadow", naming the field and the value', () => {
    expect(() => validateRulesConfig({ rules: { search: { limit: 1, window: '1m', mode: 'dry' as never } } })).toThrow(
      new RateLimitConfigError('rules.search.mode', 'dry', '"enforce" or "shadow"'),
    );
  });

  it('refuses a module-wide mode other than "enforce" or "shadow", naming the config path', () => {
    expect(() => new RateLimitPolicies({}, { mode: 'off' as never }, 'rateLimit')).toThrow(new RateLimitConfigError('rateLimit.mode', 'off', '"enforce" or "shadow"'));
  });

  it('refuses a shadowHeaders that is not a boolean', () => {
    expect(() => validateModuleOptions({ shadowHeaders: 'yes' as never })).toThrow(new RateLimitConfigError('shadowHeaders', 'yes', 'true or false'));
  });

  it('lets config\'s mode win over the module option\'s', () => {
    expect(new RateLimitPolicies({ mode: 'enforce' }, { mode: 'shadow' }, 'rateLimit').mode).toBe('shadow');
  });

  it('keeps a shadow rule\'s keys: mode is not part of the rule the store sees', () => {
    const shadow = new RateLimitPolicies({ rules: { search: { limit: 1, window: '1m', mode: 'shadow' } } }).get('search')!;
    const enforced = new RateLimitPolicies({ rules: { search: { limit: 1, window: '1m' } } }).get('search')!;
    expect(shadow.rule).toEqual(enforced.rule);
  });
});
