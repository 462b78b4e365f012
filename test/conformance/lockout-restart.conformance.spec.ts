import { defineRule, type RateLimitRule, type RateLimitRuleOptions, type WindowAlgorithm } from '../../lib/index.js';
import { useStores, type StoreKind } from '../support/stores.js';

/**
 * `afterLockout: 'restart'`, throttler's blockDuration: the refusal that starts a lockout clears the count, so the
 * lockout's end finds a full budget and the wait reported is the lockout's. The default, 'resume', keeps the count.
 * Every algorithm with a lockout, on every store: the driver (Lua) and the memory store must agree.
 */
const ALGORITHMS: WindowAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const SECOND = 1_000;

/** 2 per 10 s with a 5 s block: the LimitController of throttler's own e2e suite. */
const rule = (algorithm: WindowAlgorithm, options: Partial<RateLimitRuleOptions> = {}): RateLimitRule =>
  defineRule({ algorithm, limit: 2, window: '10s', blockMs: '5s', afterLockout: 'restart', ...options }, 'limit');

describe.each<StoreKind>(['memory', 'redis'])('afterLockout: restart on the %s store', (kind) => {
  const get = useStores(kind);

  describe.each(ALGORITHMS)('%s', (algorithm) => {
    it('a 5 s block on 2 per 10 s admits again after 5 s with the restart option', async () => {
      const { store, clock } = get();
      const r = rule(algorithm);
      expect((await store.consume('k', r)).allowed).toBe(true);
      expect((await store.consume('k', r)).allowed).toBe(true);
      expect(await store.consume('k', r)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 5 * SECOND, resetAfterMs: 5 * SECOND });
      clock.advance(5 * SECOND - 1);
      expect(await store.consume('k', r)).toMatchObject({ allowed: false, retryAfterMs: 1 });
      clock.advance(1);
      expect(await store.consume('k', r)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('gives the full budget back at the lockout\'s end, and locks out again when it is spent', async () => {
      const { store, clock } = get();
      const r = rule(algorithm);
      await store.consume('k', r);
      await store.consume('k', r);
      await store.consume('k', r);
      clock.advance(5 * SECOND);
      expect((await store.consume('k', r)).allowed).toBe(true);
      expect(await store.consume('k', r)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await store.consume('k', r)).toMatchObject({ allowed: false, retryAfterMs: 5 * SECOND });
    });

    it('charges nothing while locked out: the requests in the lockout leave the budget full', async () => {
      const { store, clock } = get();
      const r = rule(algorithm);
      for (let i = 0; i < 3; i++) await store.consume('k', r);
      for (let i = 0; i < 4; i++) {
        clock.advance(SECOND);
        expect(await store.consume('k', r)).toMatchObject({ allowed: false, retryAfterMs: (4 - i) * SECOND });
      }
      clock.advance(SECOND);
      expect(await store.peek('k', r, 2)).toMatchObject({ allowed: true, remaining: 0 });
    });
  });

  // Token bucket and GCRA refill one unit per 5 s here, so they admit one after the block either way.
  it.each<WindowAlgorithm>(['sliding-log', 'sliding-window', 'fixed-window'])('%s keeps the window\'s count under the default (resume): refused again after the 5 s block', async (algorithm) => {
    const { store, clock } = get();
    const r = rule(algorithm, { afterLockout: undefined });
    await store.consume('k', r);
    await store.consume('k', r);
    const refused = await store.consume('k', r);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(5 * SECOND);
    clock.advance(5 * SECOND);
    expect((await store.consume('k', r)).allowed).toBe(false);
  });

  it('restarts the count of the refusing rule only: another rule of an all-or-nothing call keeps its count', async () => {
    const { store, clock } = get();
    const strict = rule('sliding-log');
    const hourly = defineRule({ algorithm: 'sliding-log', limit: 10, window: '1h' }, 'hourly');
    const both = [
      { key: 'k', rule: strict },
      { key: 'k', rule: hourly },
    ];
    await store.consumeAll(both);
    await store.consumeAll(both);
    const refused = await store.consumeAll(both);
    expect(refused.decisions.map((d) => d.allowed)).toEqual([false, true]);
    clock.advance(5 * SECOND);
    const admitted = await store.consumeAll(both);
    expect(admitted.decisions).toEqual([expect.objectContaining({ allowed: true, remaining: 1 }), expect.objectContaining({ allowed: true, remaining: 7 })]);
  });

  it('restarts the count after each escalated lockout too, each lockout lasting its escalated length', async () => {
    const { store, clock } = get();
    const r = defineRule({ algorithm: 'fixed-window', limit: 1, window: '1h', lockout: { base: '1m', factor: 2, max: '4m' }, afterLockout: 'restart' }, 'login');
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      expect((await store.consume('k', r)).allowed).toBe(true);
      const refused = await store.consume('k', r);
      waits.push(refused.retryAfterMs);
      clock.advance(refused.retryAfterMs);
    }
    expect(waits).toEqual([60 * SECOND, 120 * SECOND, 240 * SECOND]);
  });

  it('decides requests sent together (one script call on Redis) as one by one', async () => {
    const { store, clock } = get();
    const r = rule('sliding-window');
    const burst = await Promise.all([1, 2, 3, 4].map(() => store.consume('k', r)));
    expect(burst.map((d) => [d.allowed, d.retryAfterMs])).toEqual([[true, 0], [true, 0], [false, 5 * SECOND], [false, 5 * SECOND]]);
    clock.advance(5 * SECOND);
    expect(await store.consume('k', r)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('a peek in the lockout reports it and clears nothing more', async () => {
    const { store, clock } = get();
    const r = rule('fixed-window');
    for (let i = 0; i < 3; i++) await store.consume('k', r);
    clock.advance(2 * SECOND);
    expect(await store.peek('k', r)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 3 * SECOND, resetAfterMs: 3 * SECOND });
  });
});
