import { RateLimitConfigError, RateLimitPolicies, type RateLimitRulesConfig } from '../../lib/index.js';

const limits = (policies: RateLimitPolicies) => Object.fromEntries(policies.names().map((name) => [name, policies.get(name)!.rule.limit]));

describe('RateLimitPolicies.reloadFromConfig, part by part', () => {
  const fromConfig: RateLimitRulesConfig = { defaultRule: { limit: 100, window: '1m' }, rules: { search: { limit: 10, window: '1m' }, login: { limit: 5, window: '1m' } } };

  it('puts the valid parts in force and keeps the last valid version of a refused one, saying where each is', () => {
    const policies = new RateLimitPolicies({}, fromConfig, 'rateLimit');
    const reload = policies.reloadFromConfig({ defaultRule: { limit: 2, window: '1m' }, rules: { search: { limit: 'abc', window: '1m' }, login: { limit: 6, window: '1m' } } });
    expect(reload.applied).toEqual(['rateLimit.rules.login', 'rateLimit.defaultRule']);
    expect(reload.refused).toEqual([{ path: 'rateLimit.rules.search', error: expect.objectContaining({ field: 'rateLimit.rules.search.limit', value: 'abc' }), kept: true }]);
    expect(limits(policies)).toEqual({ search: 10, login: 6, default: 2 });
    expect(policies.version).toBe(1);
  });

  it('leaves out a new rule that is invalid, and says no version of it is in force', () => {
    const policies = new RateLimitPolicies({}, fromConfig, 'rateLimit');
    const reload = policies.reloadFromConfig({ ...fromConfig, rules: { ...fromConfig.rules, signup: { limit: 0, window: '1m' } } });
    expect(reload).toEqual({ applied: [], refused: [{ path: 'rateLimit.rules.signup', error: expect.any(RateLimitConfigError), kept: false }] });
    expect(policies.get('signup')).toBeUndefined();
    expect(policies.version).toBe(0);
  });

  it('puts in force a rule renamed out of a conflict with a default rule in the same reload, whatever the order of the parts', () => {
    const list = { defaultRule: [{ name: 'short', limit: 3, window: '1s' }], rules: {} };
    for (const next of [
      { rules: { short: { limit: 1, window: '1m' } }, defaultRule: [{ name: 'brief', limit: 3, window: '1s' }] },
      { defaultRule: [{ name: 'brief', limit: 3, window: '1s' }], rules: { short: { limit: 1, window: '1m' } } },
    ]) {
      const policies = new RateLimitPolicies({}, list, 'rateLimit');
      expect(policies.reloadFromConfig(next).refused).toEqual([]);
      expect(limits(policies)).toEqual({ short: 1, brief: 3 });
    }
  });

  it('retries a refused rule once a later reload removes what it conflicted with', () => {
    const policies = new RateLimitPolicies({}, { defaultRule: [{ name: 'short', limit: 3, window: '1s' }] }, 'rateLimit');
    const clash = policies.reloadFromConfig({ defaultRule: [{ name: 'short', limit: 3, window: '1s' }], rules: { short: { limit: 1, window: '1m' } } });
    expect(clash.refused).toEqual([{ path: 'rateLimit.rules.short', error: expect.objectContaining({ field: 'rateLimit.defaultRule[0].name' }), kept: false }]);
    policies.reloadFromConfig({ defaultRule: false, rules: { short: { limit: 1, window: '1m' } } });
    expect(limits(policies)).toEqual({ short: 1 });
  });

  it('keeps every rule when the namespace, or its rules, stop being objects', () => {
    const policies = new RateLimitPolicies({}, fromConfig, 'rateLimit');
    expect(policies.reloadFromConfig(5 as never).refused).toEqual([{ path: 'rateLimit', error: expect.objectContaining({ field: 'rateLimit', value: 5 }), kept: false }]);
    expect(policies.reloadFromConfig({ ...fromConfig, rules: 'none' as never }).refused).toEqual([
      { path: 'rateLimit.rules', error: expect.objectContaining({ field: 'rateLimit.rules', value: 'none' }), kept: false },
    ]);
    expect([policies.version, limits(policies)]).toEqual([0, { search: 10, login: 5, default: 100 }]);
  });

  it('falls back to the rule of the code when config drops its own', () => {
    const policies = new RateLimitPolicies({ rules: { login: { limit: 50, window: '1m' } } }, fromConfig, 'rateLimit');
    expect(policies.reloadFromConfig({ ...fromConfig, rules: { search: fromConfig.rules!.search } }).applied).toEqual(['rateLimit.rules.login']);
    expect(policies.get('login')?.rule.limit).toBe(50);
  });

  it('keeps a rule compiled from a config object that is later changed in place to a bad value', () => {
    const namespace = { rules: { login: { limit: 5, window: '1m', lockout: { base: '1m', factor: 2 } } } };
    const policies = new RateLimitPolicies({}, namespace, 'rateLimit');
    namespace.rules.login.lockout.base = 'soon';
    expect(policies.reloadFromConfig(namespace).refused).toEqual([expect.objectContaining({ path: 'rateLimit.rules.login' })]);
    expect(policies.get('login')?.rule.blockMs).toBe(60_000);
  });
});

describe('RateLimitPolicies.setRule without ConfigService', () => {
  it('names the field under "rules" when there is no config path, and applies nothing', () => {
    const policies = new RateLimitPolicies({ rules: { login: { limit: 5, window: '1m' } } });
    expect(() => policies.setRule('login', { limit: 5, window: '1 fortnight' })).toThrow(expect.objectContaining({ field: 'rules.login.window', value: '1 fortnight' }));
    expect([policies.version, policies.get('login')?.rule.windowMs]).toEqual([0, 60_000]);
  });

  it('refuses a rule whose name a default rule already has, and a name that is no rule name', () => {
    const policies = new RateLimitPolicies({ defaultRule: [{ name: 'short', limit: 3, window: '1s' }] });
    expect(() => policies.setRule('short', { limit: 1, window: '1m' })).toThrow(expect.objectContaining({ field: 'defaultRule[0].name', value: 'short' }));
    expect(() => policies.setRule('a b', { limit: 1, window: '1m' })).toThrow(expect.objectContaining({ field: 'rules', value: 'a b' }));
    expect(policies.version).toBe(0);
  });

  it('adds a new named rule and bumps the version', () => {
    const policies = new RateLimitPolicies({});
    expect(policies.setRule('export', { limit: 2, window: '1h' }).rule.windowMs).toBe(3_600_000);
    expect([policies.version, policies.names()]).toEqual([1, ['export']]);
  });
});
