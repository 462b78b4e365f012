import { defineRule, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import type { ManualClock } from '../support/manual.clock.js';
import { useStores } from '../support/stores.js';

/**
 * Token bucket and GCRA at rates whose emission interval is not a whole number of µs: what they admit over
 * 10 ms after the burst is exactly rate × 10 ms (the interval used to be rounded down to whole µs, so 600k/s
 * admitted 10,000 tokens in 10 ms instead of 6,000).
 */
const RATES = [
  { perSecond: 600_000, in10ms: 6_000 },
  { perSecond: 150_000, in10ms: 1_500 },
  { perSecond: 60_000, in10ms: 600 },
  { perSecond: 7, in10ms: 0 },
];

/**
 * Takes, every ms for 10 ms after emptying the bucket, all that is admitted; returns the total taken after the
 * burst. The burst is a second's worth: Redis expires keys on its own clock, so their TTLs must outlast the test.
 */
async function takeEveryMs(store: RateLimitStore, clock: ManualClock, rule: RateLimitRule, burst: number): Promise<number> {
  expect((await store.consume('k', rule, burst)).allowed).toBe(true);
  expect((await store.consume('k', rule, 1)).allowed).toBe(false);
  let taken = 0;
  for (let ms = 1; ms <= 10; ms++) {
    clock.advance(1);
    const { remaining } = await store.peek('k', rule, 0);
    if (remaining > 0) {
      expect([ms, (await store.consume('k', rule, remaining)).allowed]).toEqual([ms, true]);
      taken += remaining;
    }
    // What peek reported as remaining is all there is.
    expect([ms, (await store.peek('k', rule, 1)).allowed]).toEqual([ms, false]);
  }
  return taken;
}

describe.each(['memory', 'redis'] as const)('on the %s store, at rates with a fractional µs interval', (kind) => {
  const get = useStores(kind);

  it.each(RATES)('token bucket refilling $perSecond per second admits exactly $in10ms in 10 ms after its burst', async ({ perSecond, in10ms }) => {
    const { store, clock } = get();
    const rule = defineRule({ algorithm: 'token-bucket', limit: perSecond, window: '1s', refill: perSecond }, 'tb');
    expect(await takeEveryMs(store, clock, rule, perSecond)).toBe(in10ms);
  });

  it.each(RATES)('GCRA of $perSecond per second admits exactly $in10ms in 10 ms after its burst', async ({ perSecond, in10ms }) => {
    const { store, clock } = get();
    const rule = defineRule({ algorithm: 'gcra', limit: perSecond, window: '1s', burst: perSecond }, 'gcra');
    expect(await takeEveryMs(store, clock, rule, perSecond)).toBe(in10ms);
  });

  it('token bucket of 3 per 10 s reports the exact wait for the next token, rounded up to the ms', async () => {
    const { store, clock } = get();
    const rule = defineRule({ algorithm: 'token-bucket', limit: 3, window: '10s', refill: 3 }, 'tb3');
    await store.consume('k', rule, 3);
    // A token every 3333⅓ ms: the next one in 3334 ms (rounded up); the third one in 10 s.
    expect(await store.consume('k', rule, 1)).toMatchObject({ allowed: false, retryAfterMs: 3334, resetAfterMs: 10_000 });
    expect(await store.consume('k', rule, 3)).toMatchObject({ allowed: false, retryAfterMs: 10_000 });
    clock.advance(3334);
    expect(await store.consume('k', rule, 1)).toMatchObject({ allowed: true, remaining: 0 });
    // The next token at 6666⅔ ms: 3332⅔ ms from now.
    expect(await store.consume('k', rule, 1)).toMatchObject({ allowed: false, retryAfterMs: 3333 });
  });
});
