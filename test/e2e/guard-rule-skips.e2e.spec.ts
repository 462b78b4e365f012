import { PLATFORMS } from './support/http-app.js';
import { policyNames, remaining, statuses, STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import { RuleSkipsController } from './fixtures/rule-skips/rule-skips.controller.js';
import { TrackerController } from './fixtures/tracker/tracker.controller.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('per-rule skips on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startSkips = () => start({ globalGuard: true }, { controllers: [RuleSkipsController] });

    it('neither charges nor reports a rule whose skipIf returns true, applying the others', async () => {
      const { http } = await startSkips();
      const internal = () => http().get('/rule-skips/skip-if').set('x-internal', 'yes');
      expect(policyNames(await internal())).toEqual(['inner']);
      expect(await statuses(3, internal)).toEqual([200, 200, 429]);
    });

    it('charges a rule whose skipIf returns false', async () => {
      const { http } = await startSkips();
      await http().get('/rule-skips/skip-if').set('x-internal', 'yes');
      const res = await http().get('/rule-skips/skip-if').set('x-internal', 'no').expect(200);
      expect([remaining(res, 'outer'), remaining(res, 'inner')]).toEqual([1, 1]);
    });

    it('awaits a skipIf that returns a promise', async () => {
      const { http } = await startSkips();
      expect(await statuses(3, () => http().get('/rule-skips/async-skip-if').set('x-internal', 'yes'))).toEqual([200, 200, 200]);
      expect(await statuses(2, () => http().get('/rule-skips/async-skip-if'))).toEqual([200, 429]);
    });

    it('neither charges nor reports a rule whose ignoreUserAgents matches the User-Agent', async () => {
      const { http } = await startSkips();
      const monitor = () => http().get('/rule-skips/user-agent').set('user-agent', 'Uptime-Monitor/2.0');
      expect(policyNames(await monitor())).toEqual(['everyone']);
      expect(await statuses(3, monitor)).toEqual([200, 200, 429]);
    });

    it('applies a rule with ignoreUserAgents to a User-Agent that matches none of them', async () => {
      const { http } = await startSkips();
      expect(await statuses(2, () => http().get('/rule-skips/user-agent').set('user-agent', 'curl/8.0'))).toEqual([200, 429]);
    });

    it('limits no rule for a User-Agent the module-wide ignoreUserAgents matches', async () => {
      const { http } = await start({ globalGuard: true, ignoreUserAgents: [/googlebot/i] }, { controllers: [TrackerController] });
      const bot = () => http().get('/tracker/a').set('user-agent', 'Mozilla/5.0 (compatible; Googlebot/2.1)');
      expect(await statuses(3, bot)).toEqual([200, 200, 200]);
      expect((await bot()).headers['ratelimit-policy']).toBeUndefined();
      expect(await statuses(2, () => http().get('/tracker/a').set('user-agent', 'curl/8.0'))).toEqual([200, 429]);
    });

    it('refuses at start-up an ignoreUserAgents that is not a list of regular expressions, naming it', async () => {
      await expect(start({ globalGuard: true, ignoreUserAgents: ['googlebot'] as never }, { controllers: [TrackerController] })).rejects.toThrow(/"ignoreUserAgents": \["googlebot"\]/);
    });
  });
});
