import { PLATFORMS } from './support/http-app.js';
import { policyNames, remaining, statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import { HEADLINE_RULES, HeadlineController } from './fixtures/default-rules/headline.controller.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('several default rules on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startHeadline = () => start({ globalGuard: true, defaultRule: HEADLINE_RULES }, { controllers: [HeadlineController] });

    it('applies every default rule to a route without a decorator, reporting each', async () => {
      const { http } = await startHeadline();
      const res = await http().get('/headline/all').expect(200);
      expect(policyNames(res)).toEqual(['short', 'medium', 'long']);
    });

    it('refuses the 4th request in a second by the short rule', async () => {
      const { http } = await startHeadline();
      expect(await statuses(3, () => http().get('/headline/all'))).toEqual([200, 200, 200]);
      const refused = await http().get('/headline/all').expect(429);
      expect(remaining(refused, 'short')).toBe(0);
      expect(refused.headers['retry-after']).toBe('1');
    });

    it('charges none of the rules for the request the short rule refuses (all-or-nothing)', async () => {
      const { http } = await startHeadline();
      await statuses(3, () => http().get('/headline/all'));
      const refused = await http().get('/headline/all').expect(429);
      expect([remaining(refused, 'medium'), remaining(refused, 'long')]).toEqual([17, 97]);
    });

    it('admits again once the second of the short rule has passed', async () => {
      const { http, clock } = await startHeadline();
      await statuses(4, () => http().get('/headline/all'));
      clock.advance(2000);
      await http().get('/headline/all').expect(200);
    });

    it('drops only the short rule on a route marked @SkipRateLimit("short")', async () => {
      const { http } = await startHeadline();
      expect(await statuses(5, () => http().get('/headline/no-short'))).toEqual([200, 200, 200, 200, 200]);
      expect(policyNames(await http().get('/headline/no-short'))).toEqual(['medium', 'long']);
    });

    it('applies a handler\'s rule named "long" in place of the default long rule', async () => {
      const { http, clock } = await startHeadline();
      const out: number[] = [];
      for (let i = 0; i < 6; i++, clock.advance(2000)) out.push((await http().get('/headline/long-override')).status);
      expect(out).toEqual([200, 200, 200, 200, 200, 429]);
      expect((await http().get('/headline/long-override')).headers['ratelimit-policy']).toContain('"long";q=5;w=60');
    });

    it('drops every default rule on a route marked @SkipRateLimit()', async () => {
      const { http } = await startHeadline();
      expect(await statuses(5, () => http().get('/headline/none'))).toEqual([200, 200, 200, 200, 200]);
      expect((await http().get('/headline/none')).headers['ratelimit-policy']).toBeUndefined();
    });

    it('refuses at start-up two default rules of one name, naming the second', async () => {
      const twice = [HEADLINE_RULES[0], { ...HEADLINE_RULES[1], name: 'short' }];
      await expect(start({ globalGuard: true, defaultRule: twice }, { controllers: [HeadlineController] })).rejects.toThrow(/"defaultRule\[1\]\.name": "short"/);
    });
  });
});
