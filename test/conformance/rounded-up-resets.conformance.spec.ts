import { defineRule, type Decision, type RateLimitRule } from '../../lib/index.js';
import { useStores, type StoreKind } from '../support/stores.js';

/**
 * resetAfterMs is the wait until a tracker's budget is whole again, rounded UP to the ms: waiting the reported time
 * is always enough. The stores work in µs, so a rule whose interval is not a whole number of ms (10001 ms / 2 =
 * 5000.5 ms) is where rounding down would tell a client its budget is back half a millisecond too early. Without a
 * lockout, so that the admitted reply of the Redis script (remaining and reset packed in one integer) is the one
 * read; windows of seconds, so that no Redis key expires by Redis's own clock between the probes.
 */
const WINDOW_MS = 10_001;
const HALF_MS = 5_000.5;
const RULES: [string, RateLimitRule][] = [
  ['token-bucket', defineRule({ algorithm: 'token-bucket', limit: 2, window: WINDOW_MS }, 'tb-half-ms')],
  ['gcra', defineRule({ algorithm: 'gcra', limit: 2, window: WINDOW_MS, burst: 2 }, 'gcra-half-ms')],
];

/**
 * A year's window of 1000: remaining × window in µs passes 2^53, so Redis sends remaining and reset as two numbers
 * instead of one. The interval, 31 622 399 999 µs, is again no whole number of ms.
 */
const LONG_WINDOW_MS = 366 * 86_400_000 - 1;
const LONG_RULES: [string, RateLimitRule][] = [
  ['token-bucket', defineRule({ algorithm: 'token-bucket', limit: 1000, window: LONG_WINDOW_MS }, 'tb-year')],
  ['gcra', defineRule({ algorithm: 'gcra', limit: 1000, window: LONG_WINDOW_MS, burst: 1000 }, 'gcra-year')],
];

const full = (limit: number): Decision => ({ allowed: true, limit, remaining: limit, resetAfterMs: 0, retryAfterMs: 0 });

describe.each<StoreKind>(['memory', 'redis'])('resets rounded up on the %s store', (kind) => {
  const current = useStores(kind);

  it.each(RULES)('%s: an admitted request reports a reset of 5001 ms, and the budget is whole at 5001 ms, not at 5000', async (_algorithm, rule) => {
    const { store, clock } = current();
    const at = clock.ms;
    const admitted = await store.consume('k', rule);
    expect(admitted).toEqual({ allowed: true, limit: 2, remaining: 1, resetAfterMs: Math.ceil(HALF_MS), retryAfterMs: 0 });
    clock.set(at + admitted.resetAfterMs - 1);
    expect(await store.peek('k', rule, 0)).not.toEqual(full(2));
    clock.set(at + admitted.resetAfterMs);
    expect(await store.peek('k', rule, 0)).toEqual(full(2));
  });

  it.each(RULES)('%s: a refused request reports a reset and a wait of 5001 ms, enough for it to pass', async (_algorithm, rule) => {
    const { store, clock } = current();
    const at = clock.ms;
    await store.consume('k', rule);
    const refused = await store.consume('k', rule, 2);
    expect(refused).toEqual({ allowed: false, limit: 2, remaining: 1, resetAfterMs: 5001, retryAfterMs: 5001 });
    clock.set(at + refused.resetAfterMs - 1);
    expect((await store.peek('k', rule, 2)).allowed).toBe(false);
    clock.set(at + refused.resetAfterMs);
    expect(await store.peek('k', rule, 0)).toEqual(full(2));
    expect((await store.consume('k', rule, 2)).allowed).toBe(true);
  });

  it.each(LONG_RULES)('%s: a year-long rule of 1000 reports the reset of 31622399.999 ms as 31622400, when the budget is whole', async (_algorithm, rule) => {
    const { store, clock } = current();
    const at = clock.ms;
    const admitted = await store.consume('k', rule);
    expect(admitted).toEqual({ allowed: true, limit: 1000, remaining: 999, resetAfterMs: 31_622_400, retryAfterMs: 0 });
    clock.set(at + admitted.resetAfterMs - 1);
    expect(await store.peek('k', rule, 0)).not.toEqual(full(1000));
    clock.set(at + admitted.resetAfterMs);
    expect(await store.peek('k', rule, 0)).toEqual(full(1000));
  });
});
