import { compilePolicy, compileRules } from '../../lib/config/policy.compiler.js';
import { RateLimitConfigError, RateLimitPolicies } from '../../lib/index.js';

describe('compilePolicy', () => {
  it('splits the guard fields from the rule and applies their defaults', () => {
    const policy = compilePolicy({ limit: 5, window: '1m' }, 'login', 'rules.login');
    expect(policy).toMatchObject({ key: { kind: 'ip' }, cost: 1, shared: false, keyRequired: false });
    expect(policy.rule).toMatchObject({ name: 'login', limit: 5, windowMs: 60_000 });
  });

  it('parses each kind of key', () => {
    const key = (k: string) => compilePolicy({ limit: 1, window: 1000, key: k as never }, 'r', 'r').key;
    expect(key('user')).toMatchObject({ kind: 'user', label: 'user' });
    expect(key('header:X-Api-Key')).toMatchObject({ kind: 'header', label: 'header:x-api-key', path: ['x-api-key'] });
    expect(key('body:user.email')).toMatchObject({ kind: 'body', path: ['user', 'email'] });
    expect(key('param:id')).toMatchObject({ kind: 'param', path: ['id'] });
    expect(key('query:apiKey')).toMatchObject({ kind: 'query', path: ['apiKey'] });
  });

  it('parses a cost given as a string, as env vars arrive', () => {
    expect(compilePolicy({ limit: '10', window: '1m', cost: '3' }, 'r', 'r').cost).toBe(3);
  });

  it.each([
    [{ limit: 5, window: '1m', key: 'cookie:sid' }, 'rules.x.key'],
    [{ limit: 5, window: '1m', cost: 0 }, 'rules.x.cost'],
    [{ limit: 5, window: '1m', cost: 6 }, 'rules.x.cost'],
    [{ limit: 5, window: '1m', shared: 'yes' }, 'rules.x.shared'],
    [{ limit: 'abc', window: '1m' }, 'rules.x.limit'],
    [{ limit: -5, window: '1m' }, 'rules.x.limit'],
    [{ limit: 5, window: 'soon' }, 'rules.x.window'],
  ])('refuses %j naming %s', (options, field) => {
    expect(() => compilePolicy(options as never, 'x', 'rules.x')).toThrow(expect.objectContaining({ field }));
  });
});

describe('compileRules', () => {
  it('compiles the default rule and the named rules', () => {
    const rules = compileRules({ defaultRule: { limit: 100, window: '1m' }, rules: { login: { limit: 5, window: '1m' } } });
    expect(rules.defaults.map((p) => p.rule.name)).toEqual(['default']);
    expect([...rules.named.keys()]).toEqual(['login']);
  });

  it('refuses an unknown field in a config namespace, naming it with the namespace', () => {
    expect(() => compileRules({ rule: {} } as never, 'rateLimit')).toThrow(RateLimitConfigError);
    expect(() => compileRules({ rule: {} } as never, 'rateLimit')).toThrow(/"rateLimit\.rule"/);
  });

  it('names the path of a bad field inside a named rule', () => {
    expect(() => compileRules({ rules: { login: { limit: 'abc', window: '1m' } } }, 'rateLimit')).toThrow(/"rateLimit\.rules\.login\.limit": "abc"/);
  });

  it('treats defaultRule: false as "no default rule"', () => {
    const rules = compileRules({ defaultRule: false });
    expect(rules).toMatchObject({ defaults: [], defaultGiven: true });
  });
});

describe('compileRules with several default rules', () => {
  const headline = [
    { name: 'short', limit: 3, window: '1s' },
    { name: 'medium', limit: 20, window: '10s' },
    { name: 'long', limit: 100, window: '1m' },
  ];

  it('compiles a list of named default rules in the order they are written', () => {
    const rules = compileRules({ defaultRule: headline });
    expect(rules.defaults.map((p) => [p.rule.name, p.rule.limit, p.rule.windowMs])).toEqual([['short', 3, 1000], ['medium', 20, 10_000], ['long', 100, 60_000]]);
  });

  it('keeps a single default rule object as the rule named "default"', () => {
    expect(compileRules({ defaultRule: { limit: 5, window: '1m' } }).defaults.map((p) => p.rule.name)).toEqual(['default']);
  });

  it('refuses two default rules of one name, naming the second', () => {
    const twice = [headline[0], { ...headline[1], name: 'short' }];
    expect(() => compileRules({ defaultRule: twice }, 'rateLimit')).toThrow(expect.objectContaining({ field: 'rateLimit.defaultRule[1].name', value: 'short' }));
  });

  it('refuses a default rule in a list without a name, naming its index', () => {
    expect(() => compileRules({ defaultRule: [headline[0], { limit: 1, window: '1s' } as never] })).toThrow(expect.objectContaining({ field: 'defaultRule[1].name' }));
  });

  it('refuses a default rule named like a rule of "rules", since @RateLimit("<name>") would be ambiguous', () => {
    expect(() => compileRules({ defaultRule: headline, rules: { long: { limit: 1, window: '1h' } } })).toThrow(expect.objectContaining({ field: 'defaultRule[2].name', value: 'long' }));
  });

  it('names the index of a bad field inside a list of default rules', () => {
    expect(() => compileRules({ defaultRule: [headline[0], { name: 'medium', limit: 'many', window: '10s' }] }, 'rateLimit')).toThrow(/"rateLimit\.defaultRule\[1\]\.limit": "many"/);
  });
});

describe('RateLimitPolicies with several default rules from ConfigService', () => {
  const fromConfig = { defaultRule: [{ name: 'short', limit: '3', window: '1s' }, { name: 'long', limit: '100', window: '1m' }] };

  it('reads a list of default rules from config data, strings included, in place of the code\'s default rule', () => {
    const policies = new RateLimitPolicies({ defaultRule: { limit: 10, window: '1m' } }, fromConfig, 'rateLimit');
    expect(policies.defaults.map((p) => `${p.name}:${p.rule.limit}`)).toEqual(['short:3', 'long:100']);
    expect(policies.get('long')?.rule.windowMs).toBe(60_000);
  });

  it('replaces the default rules on a config reload and bumps the version', () => {
    const policies = new RateLimitPolicies({}, fromConfig, 'rateLimit');
    policies.replaceFromConfig({ defaultRule: [{ name: 'short', limit: 5, window: '1s' }] }, 'rateLimit');
    expect([policies.version, policies.defaults.map((p) => `${p.name}:${p.rule.limit}`)]).toEqual([1, ['short:5']]);
  });

  it('refuses a reload whose default rule takes the name of a rule of the code, keeping the rules in force', () => {
    const policies = new RateLimitPolicies({ rules: { login: { limit: 5, window: '1m' } } }, fromConfig, 'rateLimit');
    expect(() => policies.replaceFromConfig({ defaultRule: [{ name: 'login', limit: 1, window: '1s' }] }, 'rateLimit')).toThrow(
      expect.objectContaining({ field: 'rateLimit.defaultRule[0].name', value: 'login' }),
    );
    expect(policies.defaults.map((p) => p.name)).toEqual(['short', 'long']);
  });

  it('refuses a reload that drops a default rule a decorator refers to', () => {
    const policies = new RateLimitPolicies({}, fromConfig, 'rateLimit');
    policies.require(['long']);
    expect(() => policies.replaceFromConfig({ defaultRule: [{ name: 'short', limit: 3, window: '1s' }] }, 'rateLimit')).toThrow(RateLimitConfigError);
  });
});
