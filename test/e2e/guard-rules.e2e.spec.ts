import { PLATFORMS } from './support/http-app.js';
import { policyNames, remaining, statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import { ClassRulesController, HandlerRulesController, NamedRulesController, PlainController } from './fixtures/rules/rules.controllers.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('guard rules on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);

    describe('the default rule of a global guard', () => {
      const withDefault = { globalGuard: true, defaultRule: { limit: 2, window: '1m' } };

      it('limits an undecorated route', async () => {
        const { http } = await start(withDefault, { controllers: [PlainController] });
        expect(await statuses(3, () => http().get('/plain/first'))).toEqual([200, 200, 429]);
      });

      it('counts each route on its own budget', async () => {
        const { http } = await start(withDefault, { controllers: [PlainController] });
        await statuses(3, () => http().get('/plain/first'));
        expect(await statuses(3, () => http().get('/plain/second'))).toEqual([200, 200, 429]);
      });

      it('counts every route on one budget when the rule is shared', async () => {
        const { http } = await start({ globalGuard: true, defaultRule: { limit: 2, window: '1m', shared: true } }, { controllers: [PlainController] });
        await http().get('/plain/first').expect(200);
        await http().get('/plain/second').expect(200);
        await http().get('/plain/first').expect(429);
        await http().get('/plain/second').expect(429);
      });

      it('admits the client again once the window has passed', async () => {
        const { http, clock } = await start(withDefault, { controllers: [PlainController] });
        await statuses(3, () => http().get('/plain/first'));
        clock.advance(120_000);
        await http().get('/plain/first').expect(200);
      });

      it('leaves undecorated routes unlimited when there is no default rule', async () => {
        const { http } = await start({ globalGuard: true }, { controllers: [PlainController] });
        expect(await statuses(5, () => http().get('/plain/first'))).toEqual([200, 200, 200, 200, 200]);
        const res = await http().get('/plain/first');
        expect(res.headers['ratelimit']).toBeUndefined();
      });
    });

    describe('class and handler rules', () => {
      const withDefault = { globalGuard: true, defaultRule: { limit: 2, window: '1m' } };

      it('applies the class rules to a handler without rules of its own, the unnamed one in place of the module default', async () => {
        const { http } = await start(withDefault, { controllers: [ClassRulesController] });
        const first = await http().get('/class-rules/inherit').expect(200);
        expect(first.headers['ratelimit-policy']).toBe('"default";q=3;w=60, "burst";q=5;w=60');
        expect(await statuses(3, () => http().get('/class-rules/inherit'))).toEqual([200, 200, 429]);
      });

      it('lets a handler rule replace the class rule of the same name', async () => {
        const { http } = await start(withDefault, { controllers: [ClassRulesController] });
        const first = await http().get('/class-rules/override').expect(200);
        expect(first.headers['ratelimit-policy']).toBe('"default";q=1;w=60, "burst";q=5;w=60');
        await http().get('/class-rules/override').expect(429);
      });

      it('keeps enforcing a class rule of another name next to the handler override', async () => {
        const { http } = await start(withDefault, { controllers: [ClassRulesController] });
        expect(await statuses(6, () => http().get('/class-rules/generous'))).toEqual([200, 200, 200, 200, 200, 429]);
        const refused = await http().get('/class-rules/generous');
        expect(remaining(refused, 'burst')).toBe(0);
        expect(remaining(refused, 'default')).toBeGreaterThan(0);
      });

      it('lets an unnamed handler rule replace the module default rule', async () => {
        const { http } = await start(withDefault, { controllers: [HandlerRulesController] });
        const first = await http().get('/handler-rules/unnamed').expect(200);
        expect(policyNames(first)).toEqual(['default']);
        expect(remaining(first, 'default')).toBe(3);
        expect(await statuses(4, () => http().get('/handler-rules/unnamed'))).toEqual([200, 200, 200, 429]);
      });
    });

    describe('named rules from the module options', () => {
      const withNamed = {
        globalGuard: true,
        defaultRule: { limit: 10, window: '1m' },
        rules: { login: { limit: 2, window: '1m' }, search: { limit: 2, window: '1m', shared: true } },
      };

      it('applies the rule @RateLimit(name) refers to, on top of the default rule', async () => {
        const { http } = await start(withNamed, { controllers: [NamedRulesController] });
        const first = await http().post('/auth/login').expect(201);
        expect(first.headers['ratelimit-policy']).toBe('"default";q=10;w=60, "login";q=2;w=60');
        expect(await statuses(2, () => http().post('/auth/login'))).toEqual([201, 429]);
      });

      it('counts a referenced rule per the key the decorator gives it', async () => {
        const { http } = await start(withNamed, { controllers: [NamedRulesController] });
        const login = (username: string) => http().post('/auth/login-by-user').send({ username });
        expect(await statuses(3, () => login('alice'))).toEqual([201, 201, 429]);
        await login('bob').expect(201);
      });

      it('keeps the limit and window of the configured rule when a reference only changes the key', async () => {
        const { http } = await start(withNamed, { controllers: [NamedRulesController] });
        const res = await http().post('/auth/login-by-user').send({ username: 'alice' }).expect(201);
        expect(res.headers['ratelimit-policy']).toBe('"default";q=10;w=60, "login";q=2;w=60');
      });

      it('shares the budget of a shared named rule between the routes that use it', async () => {
        const { http } = await start(withNamed, { controllers: [NamedRulesController] });
        await http().get('/auth/search').expect(200);
        await http().get('/auth/search-again').expect(200);
        await http().get('/auth/search').expect(429);
        await http().get('/auth/search-again').expect(429);
      });
    });
  });
});
