import { RateLimitConfigError, RateLimitPolicies, RateLimitService, type RateLimitAlgorithm, type RateLimitRulesConfig } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { useStores, type StoreKind } from '../support/stores.js';

const RULES: RateLimitRulesConfig = {
  rules: {
    // Overridable: 2 per minute unless an operator says otherwise for a tracker.
    api: { limit: 2, window: '1m', algorithm: 'fixed-window', overrides: true },
    // Not overridable: overrides of its name are not read.
    plain: { limit: 2, window: '1m', algorithm: 'fixed-window' },
    sw: { limit: 2, window: '1m', algorithm: 'sliding-window', overrides: true },
    log: { limit: 2, window: '1m', algorithm: 'sliding-log', overrides: true },
    bucket: { limit: 2, window: '1m', algorithm: 'token-bucket', overrides: true },
    locked: { limit: 1, window: '1m', algorithm: 'fixed-window', blockMs: '5m', overrides: true },
  },
};

const ALGORITHM_RULES: [RateLimitAlgorithm, string][] = [
  ['fixed-window', 'api'],
  ['sliding-window', 'sw'],
  ['sliding-log', 'log'],
  ['token-bucket', 'bucket'],
];

describe.each(['memory', 'redis', 'cluster'] satisfies StoreKind[])('per-key overrides on the %s store', (kind) => {
  const get = useStores(kind);

  function service(): RateLimitService {
    const { store, clock, prefix } = get();
    return new RateLimitService(store, new RateLimitPolicies(RULES), validateModuleOptions({ clock: clock.now, keyPrefix: prefix }));
  }

  async function admitted(rateLimit: RateLimitService, rule: string, key: string, times: number): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < times; i++) out.push((await rateLimit.consume(key, rule)).allowed);
    return out;
  }

  it.each(ALGORITHM_RULES)('admits past the rule limit up to a raised limit (%s)', async (_algorithm, rule) => {
    const rateLimit = service();
    await rateLimit.overrides.set(rule, 'acme', { limit: 5, ttlMs: '1h' });
    expect(await admitted(rateLimit, rule, 'acme', 6)).toEqual([true, true, true, true, true, false]);
    expect(await admitted(rateLimit, rule, 'other', 3)).toEqual([true, true, false]);
  });

  it('reports the limit in force and what remains under it', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'acme', { limit: 5, ttlMs: '1h' });
    expect(await rateLimit.consume('acme', 'api')).toMatchObject({ allowed: true, limit: 5, remaining: 4 });
    // A peek says what a consume would: one more unit taken.
    expect(await rateLimit.peek('acme', 'api')).toMatchObject({ allowed: true, limit: 5, remaining: 3 });
  });

  it('refunds under the raised limit', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('bucket', 'acme', { limit: 5, ttlMs: '1h' });
    expect(await admitted(rateLimit, 'bucket', 'acme', 5)).toEqual([true, true, true, true, true]);
    await rateLimit.refund('acme', 'bucket', 3);
    expect(await admitted(rateLimit, 'bucket', 'acme', 4)).toEqual([true, true, true, false]);
  });

  it('reports a raised limit past 2^52 exactly', async () => {
    const rateLimit = service();
    const huge = Number.MAX_SAFE_INTEGER;
    await rateLimit.overrides.set('sw', 'acme', { limit: huge, ttlMs: '1h' });
    expect(await rateLimit.consume('acme', 'sw')).toMatchObject({ allowed: true, limit: huge, remaining: huge - 1 });
  });

  it.each([
    ['sliding-window', 'sw'],
    ['sliding-log', 'log'],
  ])('refuses a cost above a cut limit with no wait that lets it through, on an empty or a counted key (%s)', async (_algorithm, rule) => {
    const rateLimit = service();
    await rateLimit.overrides.set(rule, 'small', { limit: 1, ttlMs: '1h' });
    // Once threw in the Lua (no newest cell, no entry to wait for) and reported NaN waits in memory.
    expect(await rateLimit.consume('small', rule, 2)).toEqual({ allowed: false, limit: 1, remaining: 1, resetAfterMs: 0, retryAfterMs: -1 });
    expect((await rateLimit.consume('small', rule)).allowed).toBe(true);
    const counted = await rateLimit.consume('small', rule, 2);
    expect(counted).toMatchObject({ allowed: false, limit: 1, remaining: 0, retryAfterMs: -1 });
    expect(counted.resetAfterMs).toBeGreaterThan(0);
  });

  it('refuses past a cut limit', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'noisy', { limit: 1, ttlMs: '1h' });
    expect(await admitted(rateLimit, 'api', 'noisy', 2)).toEqual([true, false]);
  });

  it('refuses a blocked key with the time left of its block as the wait', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'abuser', { block: true, ttlMs: 30_000, reason: 'scraping' });
    get().clock.advance(10_000);
    expect(await rateLimit.consume('abuser', 'api')).toEqual({ allowed: false, limit: 2, remaining: 0, resetAfterMs: 20_000, retryAfterMs: 20_000 });
    expect(await rateLimit.peek('abuser', 'api')).toMatchObject({ allowed: false, retryAfterMs: 20_000 });
  });

  it('charges nothing while a key is blocked, and starts no lockout', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('locked', 'abuser', { block: true, ttlMs: 1000 });
    expect(await admitted(rateLimit, 'locked', 'abuser', 3)).toEqual([false, false, false]);
    get().clock.advance(1000);
    expect(await rateLimit.consume('abuser', 'locked')).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('restores the rule once the override expires', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'abuser', { block: true, ttlMs: 5000 });
    get().clock.advance(4999);
    expect((await rateLimit.consume('abuser', 'api')).allowed).toBe(false);
    get().clock.advance(1);
    expect((await rateLimit.consume('abuser', 'api')).allowed).toBe(true);
    expect(await rateLimit.overrides.get('api', 'abuser')).toBeUndefined();
  });

  it('restores the rule limit once a raise expires, counting what the raise admitted', async () => {
    const rateLimit = service();
    // At the start of a window, so that the window outlasts the raise.
    get().clock.set(Math.ceil(get().clock.ms / 60_000) * 60_000);
    await rateLimit.overrides.set('api', 'acme', { limit: 5, ttlMs: 1000 });
    expect(await admitted(rateLimit, 'api', 'acme', 3)).toEqual([true, true, true]);
    get().clock.advance(1000);
    expect(await rateLimit.consume('acme', 'api')).toMatchObject({ allowed: false, limit: 2 });
  });

  it('restores the rule at once when the override is removed', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'abuser', { block: true, ttlMs: '1h' });
    expect((await rateLimit.consume('abuser', 'api')).allowed).toBe(false);
    expect(await rateLimit.overrides.remove('api', 'abuser')).toBe(true);
    expect((await rateLimit.consume('abuser', 'api')).allowed).toBe(true);
    expect(await rateLimit.overrides.remove('api', 'abuser')).toBe(false);
  });

  it('ignores an override stored under a rule that is not overridable', async () => {
    const rateLimit = service();
    await get().store.overrides!.set('plain', 'acme', { limit: 5, ttlMs: 3_600_000 });
    expect(await admitted(rateLimit, 'plain', 'acme', 3)).toEqual([true, true, false]);
    await expect(rateLimit.overrides.set('plain', 'acme', { limit: 5, ttlMs: '1h' })).rejects.toThrow(RateLimitConfigError);
  });

  it('refuses all rules of a call, charging none, when one of them blocks the key', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'u1', { block: true, ttlMs: '1h' });
    const result = await rateLimit.consumeAll('u1', ['plain', 'api']);
    expect(result.allowed).toBe(false);
    expect(result.decisions.map((d) => d.allowed)).toEqual([true, false]);
    await rateLimit.overrides.remove('api', 'u1');
    expect(await rateLimit.peek('u1', 'plain', 0)).toMatchObject({ remaining: 2 });
  });

  it('applies a raise to the rules of a call of several', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('sw', 'u1', { limit: 3, ttlMs: '1h' });
    const results: boolean[] = [];
    for (let i = 0; i < 4; i++) results.push((await rateLimit.consumeAll('u1', ['api', 'sw'])).allowed);
    expect(results).toEqual([true, true, false, false]);
    await rateLimit.overrides.set('api', 'u1', { limit: 3, ttlMs: '1h' });
    expect((await rateLimit.consumeAll('u1', ['api', 'sw'])).decisions).toMatchObject([{ allowed: true, limit: 3, remaining: 0 }, { allowed: true, limit: 3, remaining: 0 }]);
  });

  it('decides the calls of one turn under the override (coalesced into one script call on Redis)', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'acme', { limit: 5, ttlMs: '1h' });
    const decisions = await Promise.all(Array.from({ length: 7 }, (_, i) => rateLimit.consume(i % 2 === 0 ? 'acme' : 'other', 'api')));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, true]);
  });

  it('lists the overrides in force, soonest to end first, and gets one', async () => {
    const rateLimit = service();
    const now = get().clock.ms;
    await rateLimit.overrides.set('api', 'acme', { limit: 50, ttlMs: '1h', reason: 'ticket 42' });
    await rateLimit.overrides.set('sw', 'abuser', { block: true, ttlMs: '10m' });
    await rateLimit.overrides.set('api', 'brief', { limit: 3, ttlMs: 1000 });
    expect(await rateLimit.overrides.list()).toEqual([
      { rule: 'api', key: 'brief', limit: 3, block: false, expiresAt: now + 1000 },
      { rule: 'sw', key: 'abuser', block: true, expiresAt: now + 600_000 },
      { rule: 'api', key: 'acme', limit: 50, block: false, expiresAt: now + 3_600_000, reason: 'ticket 42' },
    ]);
    get().clock.advance(1000);
    expect((await rateLimit.overrides.list('api')).map((o) => o.key)).toEqual(['acme']);
    expect(await rateLimit.overrides.get('sw', 'abuser')).toEqual({ rule: 'sw', key: 'abuser', block: true, expiresAt: now + 600_000 });
  });

  it('replaces an override set again for the same key', async () => {
    const rateLimit = service();
    await rateLimit.overrides.set('api', 'acme', { block: true, ttlMs: '1h' });
    await rateLimit.overrides.set('api', 'acme', { limit: 3, ttlMs: '1m' });
    expect(await rateLimit.overrides.list()).toMatchObject([{ key: 'acme', limit: 3, block: false }]);
    expect(await admitted(rateLimit, 'api', 'acme', 4)).toEqual([true, true, true, false]);
  });

  it('keeps an override for a tracker that is hashed in the keys', async () => {
    const rateLimit = service();
    const key = `user {with braces} ${'x'.repeat(100)}`;
    await rateLimit.overrides.set('api', key, { limit: 3, ttlMs: '1h' });
    expect(await admitted(rateLimit, 'api', key, 4)).toEqual([true, true, true, false]);
    expect((await rateLimit.overrides.list()).map((o) => o.key)).toEqual([key]);
  });
});
