import 'reflect-metadata';
import { RateLimit, RateLimitPolicies, SkipRateLimit } from '../../lib/index.js';
import { resolveRoutePolicies } from '../../lib/decorators/route-policies.resolver.js';
import { RATE_LIMIT_METADATA, SKIP_RATE_LIMIT_METADATA } from '../../lib/interfaces/rate-limit.constants.js';

const policies = new RateLimitPolicies({ defaultRule: { limit: 100, window: '1m' }, rules: { login: { limit: 5, window: '1m', key: 'body:username' } } });

/** What the guard reads for `cls.method`. */
function routeOf(cls: new () => object, method: string) {
  const handler = (cls.prototype as Record<string, object>)[method];
  return resolveRoutePolicies(policies, {
    route: `${cls.name}.${method}`,
    classEntries: Reflect.getMetadata(RATE_LIMIT_METADATA, cls),
    handlerEntries: Reflect.getMetadata(RATE_LIMIT_METADATA, handler),
    classSkip: Reflect.getMetadata(SKIP_RATE_LIMIT_METADATA, cls),
    handlerSkip: Reflect.getMetadata(SKIP_RATE_LIMIT_METADATA, handler),
  }).map((p) => `${p.rule.name}:${p.rule.limit}`);
}

describe('resolveRoutePolicies', () => {
  @RateLimit({ name: 'burst', limit: 10, window: '1s' })
  class Api {
    plain() {}
    @RateLimit({ name: 'burst', limit: 2, window: '1s' })
    overridden() {}
    @RateLimit('1m', 7)
    ownDefault() {}
    @RateLimit('1m', 1)
    @RateLimit('1h', 5)
    @RateLimit('1d', 10)
    stacked() {}
    @SkipRateLimit('default')
    noDefault() {}
    @SkipRateLimit()
    skipped() {}
    @RateLimit({ name: 'login', key: 'body:email' })
    login() {}
  }

  @SkipRateLimit()
  class Internal {
    plain() {}
    @RateLimit({ name: 'own', limit: 3, window: '1m' })
    declared() {}
  }

  it('applies the default rule and the class rules to a plain handler', () => {
    expect(routeOf(Api, 'plain')).toEqual(['default:100', 'burst:10']);
  });

  it('lets a handler rule replace the class rule of the same name', () => {
    expect(routeOf(Api, 'overridden')).toEqual(['default:100', 'burst:2']);
  });

  it('lets an unnamed handler rule replace the module default', () => {
    expect(routeOf(Api, 'ownDefault')).toEqual(['default:7', 'burst:10']);
  });

  it('names stacked unnamed rules in the order they are written', () => {
    expect(routeOf(Api, 'stacked')).toEqual(['default:1', 'burst:10', 'default-2:5', 'default-3:10']);
  });

  it('drops only the named rules of a named skip', () => {
    expect(routeOf(Api, 'noDefault')).toEqual(['burst:10']);
  });

  it('drops everything for a handler-level skip', () => {
    expect(routeOf(Api, 'skipped')).toEqual([]);
  });

  it('resolves a reference to a named rule with its key overridden', () => {
    const [, , login] = resolveRoutePolicies(policies, { route: 'Api.login', handlerEntries: Reflect.getMetadata(RATE_LIMIT_METADATA, Api.prototype.login), classEntries: Reflect.getMetadata(RATE_LIMIT_METADATA, Api) });
    expect(login).toMatchObject({ rule: { name: 'login', limit: 5 }, key: { label: 'body:email' } });
  });

  it('keeps what a handler declares under a class-level skip', () => {
    expect(routeOf(Internal, 'plain')).toEqual([]);
    expect(routeOf(Internal, 'declared')).toEqual(['own:3']);
  });

  it('refuses a reference to a rule nobody configured, naming the route', () => {
    class Broken {
      @RateLimit('signup')
      handler() {}
    }
    expect(() => routeOf(Broken, 'handler')).toThrow(/@RateLimit on Broken\.handler.*"signup".*login/);
  });

  it('refuses an invalid inline rule when the class is defined', () => {
    expect(() => {
      class Bad {
        @RateLimit({ limit: 'abc', window: '1m' })
        handler() {}
      }
      return Bad;
    }).toThrow(/@RateLimit on Bad\.handler\.limit/);
  });
});

describe('resolveRoutePolicies with several default rules', () => {
  const headline = new RateLimitPolicies({
    defaultRule: [
      { name: 'short', limit: 3, window: '1s' },
      { name: 'medium', limit: 20, window: '10s' },
      { name: 'long', limit: 100, window: '1m' },
    ],
  });

  class Throttled {
    plain() {}
    @SkipRateLimit('short')
    noShort() {}
    @SkipRateLimit()
    none() {}
    @RateLimit({ name: 'long', limit: 500, window: '1m' })
    longer() {}
    @RateLimit({ name: 'long', key: 'user' })
    longPerUser() {}
  }

  const namesOf = (method: keyof Throttled) => {
    const handler = Throttled.prototype[method];
    return resolveRoutePolicies(headline, {
      route: `Throttled.${method}`,
      handlerEntries: Reflect.getMetadata(RATE_LIMIT_METADATA, handler),
      handlerSkip: Reflect.getMetadata(SKIP_RATE_LIMIT_METADATA, handler),
    }).map((p) => `${p.rule.name}:${p.rule.limit}:${p.key.label}`);
  };

  it('applies every default rule to an undecorated route', () => {
    expect(namesOf('plain')).toEqual(['short:3:ip', 'medium:20:ip', 'long:100:ip']);
  });

  it('drops only the default rule a named skip names', () => {
    expect(namesOf('noShort')).toEqual(['medium:20:ip', 'long:100:ip']);
  });

  it('drops every default rule under @SkipRateLimit()', () => {
    expect(namesOf('none')).toEqual([]);
  });

  it('lets a handler rule of the same name override one default rule', () => {
    expect(namesOf('longer')).toEqual(['short:3:ip', 'medium:20:ip', 'long:500:ip']);
  });

  it('resolves a reference to a default rule by its name, with its key overridden', () => {
    expect(namesOf('longPerUser')).toEqual(['short:3:ip', 'medium:20:ip', 'long:100:user']);
  });
});

describe('resolveRoutePolicies with request-dependent rules', () => {
  const tiered = new RateLimitPolicies({
    rules: { tiered: { limit: async () => 5, window: '1m' }, upload: { limit: 10, window: '1m' } },
  });

  class Files {
    @RateLimit({ name: 'tiered', key: 'user' })
    perUser() {}
    @RateLimit({ name: 'upload', cost: () => 4 })
    upload() {}
  }

  const only = (method: keyof Files) =>
    resolveRoutePolicies(tiered, { route: `Files.${method}`, handlerEntries: Reflect.getMetadata(RATE_LIMIT_METADATA, Files.prototype[method]) })[0];

  it('keeps a request-dependent rule request-dependent where a decorator overrides its key', async () => {
    const policy = only('perUser');
    expect(policy.key.label).toBe('user');
    expect((await policy.resolve!({} as never)).rule.limit).toBe(5);
  });

  it('makes a configured rule request-dependent where a decorator gives it a cost function', async () => {
    const resolved = await only('upload').resolve!({} as never);
    expect([resolved.rule.limit, resolved.cost]).toEqual([10, 4]);
  });
});
