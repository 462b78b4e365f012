import { defineRule, RateLimitCostError, type RateLimitAlgorithm, type RateLimitRuleOptions } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const cases = STORE_KINDS.flatMap((kind) => ALGORITHMS.map((algorithm) => [kind, algorithm] as const));

describe.each(cases)('on the %s store, %s', (kind, algorithm) => {
  const get = useStores(kind);
  const rule = (options: Partial<RateLimitRuleOptions> = {}, name = 'r') => defineRule({ algorithm, limit: 5, window: '10s', ...options }, name);

  it('admits the limit at once, refuses the next, and says when to retry', async () => {
    const { store } = get();
    const r = rule();
    for (let i = 0; i < 5; i++) expect(await store.consume('k', r)).toMatchObject({ allowed: true, remaining: 4 - i, retryAfterMs: 0, limit: 5 });
    const refused = await store.consume('k', r);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.retryAfterMs).toBeGreaterThan(0);
  });

  it('admits the same request once retryAfterMs has passed, and not a millisecond before', async () => {
    const { store, clock } = get();
    const r = rule();
    clock.advance(1234);
    let refused = await store.consume('k', r, 2);
    while (refused.allowed) {
      clock.advance(700);
      refused = await store.consume('k', r, 2);
    }
    clock.advance(refused.retryAfterMs - 1);
    expect((await store.peek('k', r, 2)).allowed).toBe(false);
    clock.advance(1);
    expect((await store.consume('k', r, 2)).allowed).toBe(true);
  });

  it('answers peek with the decision consume would give, and records nothing', async () => {
    const { store } = get();
    const r = rule();
    await store.consume('k', r, 3);
    const peeked = await store.peek('k', r, 2);
    expect(await store.peek('k', r, 2)).toEqual(peeked);
    expect(await store.consume('k', r, 2)).toEqual(peeked);
    expect(await store.peek('k', r)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('is back to the full budget once resetAfterMs has passed', async () => {
    const { store, clock } = get();
    const r = rule();
    await store.consume('k', r, 2);
    clock.advance(100);
    const last = await store.consume('k', r, 3);
    clock.advance(last.resetAfterMs);
    expect(await store.peek('k', r, 0)).toMatchObject({ remaining: 5, resetAfterMs: 0 });
  });

  it('forgets a tracker on reset, and only that tracker', async () => {
    const { store } = get();
    const r = rule();
    await store.consume('a', r, 5);
    await store.consume('b', r, 5);
    await store.reset('a', r);
    expect((await store.consume('a', r, 5)).allowed).toBe(true);
    expect((await store.consume('b', r)).allowed).toBe(false);
  });

  it('gives back what a consume took on refund', async () => {
    const { store } = get();
    const r = rule();
    await store.consume('k', r, 5);
    await store.refund('k', r, 2);
    expect(await store.consume('k', r, 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await store.consume('k', r)).allowed).toBe(false);
  });

  it('never refunds more than was taken', async () => {
    const { store } = get();
    const r = rule();
    await store.consume('k', r, 1);
    await store.refund('k', r, 5);
    expect(await store.consume('k', r, 5)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await store.consume('k', r)).allowed).toBe(false);
  });

  it('refuses a cost the rule can never admit with a clear error, recording nothing', async () => {
    const { store } = get();
    const r = rule();
    await expect(store.consume('k', r, 6)).rejects.toThrow(RateLimitCostError);
    await expect(store.consume('k', r, 6)).rejects.toThrow(/Cost 6 exceeds what rule "r" can ever admit \(5\)/);
    expect(await store.peek('k', r, 0)).toMatchObject({ remaining: 5 });
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a cost of %p', async (cost) => {
    const { store } = get();
    await expect(store.consume('k', rule(), cost)).rejects.toThrow(/Invalid cost/);
  });

  it('keeps trackers apart, including ones that differ only by braces or length', async () => {
    const { store } = get();
    const r = rule({ limit: 1 });
    const trackers = ['a', '{a}', 'a}', 'x'.repeat(65), 'x'.repeat(66), 'é', '#a'];
    for (const t of trackers) expect((await store.consume(t, r)).allowed).toBe(true);
  });

  it('locks a tracker out for blockMs after a refusal, then lets it in', async () => {
    const { store, clock } = get();
    const r = rule({ limit: 2, window: '1s', blockMs: '1m' });
    await store.consume('k', r, 2);
    const refused = await store.consume('k', r);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
    clock.advance(30_000);
    expect(await store.consume('k', r)).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
    clock.advance(30_000);
    expect((await store.consume('k', r)).allowed).toBe(true);
  });

  it('does not start a lockout on peek', async () => {
    const { store } = get();
    const r = rule({ limit: 1, blockMs: '1m' });
    await store.consume('k', r);
    expect((await store.peek('k', r)).retryAfterMs).toBeLessThan(60_000);
    expect((await store.peek('k', r)).retryAfterMs).toBeLessThan(60_000);
  });

  it('lifts a lockout on reset', async () => {
    const { store } = get();
    const r = rule({ limit: 1, blockMs: '1h' });
    await store.consume('k', r);
    await store.consume('k', r);
    await store.reset('k', r);
    expect((await store.consume('k', r)).allowed).toBe(true);
  });
});
